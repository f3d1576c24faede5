"""Words a lesson is asked by in the other language: common software terms, English and Chinese.

The offline engine has no model to translate with. When the turns it reflects on mix Chinese and
English, a proposal's aliases carry the other language's words for the terms it names (a lesson
told in English about a failed certificate check gets 证书 校验 失败), so the next session's
question in either language finds the memory. One line per term: the English word (or words
separated by `/`, any of which stands for it) and the Chinese ones (the first is used in an alias;
any of them in the turns stands for the term).
"""

from __future__ import annotations

from functools import lru_cache

TERMS = """
access/permission/permissions 权限
account/accounts 账号 账户
alert/alerts 告警 报警
answer/answers/reply 回答 回复
api 接口
backup/backups 备份
batch/batches 批量 批次
branch/branches 分支
bug/bugs 缺陷 bug
build/builds/bundle 构建 打包 编译
cache/caching 缓存
certificate/certificates/cert/certs 证书
change/changes 修改 变更
character/characters 字符
charset/encoding 编码 字符集
check/verify/verification/validate/validation 校验 验证 检查
chinese 中文
clean/cleanup 清理
client/clients 客户端
code 代码
column/columns 字段 列
comment/comments 注释 评论
commit/commits 提交
config/configuration 配置 设置
connection/connections/connect 连接
container/containers 容器
cost 成本 费用
crash/crashes/crashed/restart/restarts 崩溃 重启
cron/schedule/scheduled 定时 计划任务
customer/customers/client 客户
daily/nightly 每天 每晚 夜间
data 数据
database/databases/db 数据库
date/dates 日期
day/days 天
decide/decided/decision 决定
delete/deleted/remove 删除
dependency/dependencies 依赖
deploy/deploys/deployment/release 部署 发布
disk/disks 磁盘
docker/image/images 镜像
document/docs/documentation 文档
domain 域名
download 下载
email/mail 邮件
empty 为空 空
english 英文 英语
environment/env 环境 环境变量
error/errors 报错 错误
expire/expiry/ttl 过期
export/exports 导出
fail/fails/failed/failure 失败 挂了
field/fields 字段
file/files 文件
firewall 防火墙
fix/fixed/solve/solved/solution 修复 解决
format 格式
frontend/front-end 前端
backend/back-end 后端
garbled/mojibake 乱码
hang/hangs/stuck 卡住
import/imports 导入
indent/indentation 缩进
index/indexes 索引
install/installed/installation 安装
key/keys 键 密钥
language 语言
large/big 大
leak 泄漏
limit/limits/quota 限制 上限
lock/locks 锁
log/logs 日志
login/log-in/sign-in 登录
memory/heap 内存
message/messages 消息
migration/migrations/migrate 迁移
missing 缺少
monitor/monitoring 监控
network 网络
node/nodes 节点
office 公司 办公室
order/orders 订单
out-of-memory/oom 内存溢出
package/packages 包
page/pages 页面
password/passwords 密码
payment/payments/billing 支付 计费
performance 性能
permission 权限
pool/pools 连接池 池
port/ports 端口
prefer/prefers/preference/like/likes 喜欢 偏好
production/prod 生产
proxy 代理
push 推送 推
queue/queues 队列
query/queries 查询
report/reports 报表 报告
request/requests 请求
rollback/revert 回滚
rule/rules 规则
run/runs 运行 跑
script/scripts 脚本
search 搜索
secret/secrets 密钥
server/servers 服务器
service/services 服务
session/sessions 会话
short/brief 简短
size 大小
slow 慢
space/spaces 空格
ssl/tls/https 证书
storage 存储
table/tables 表
task/tasks/job/jobs 任务
test/tests/testing 测试
time/timezone/tz 时间 时区
timeout/timeouts/timed-out 超时
token/tokens 令牌
upgrade/update 升级 更新
upload 上传
user/users 用户
version/versions 版本
warning/warnings 警告
"""


@lru_cache(maxsize=1)
def _table() -> tuple[dict, list]:
    """({English term stem: Chinese word}, [(Chinese word, the English word first named)])."""
    from ...search.tokenize import terms

    en: dict = {}
    zh: list = []
    for line in TERMS.strip().splitlines():
        words, _, chinese = line.partition(" ")
        names = chinese.split()
        english = words.split("/")
        for w in english:
            for t in terms(w.replace("-", " ")) if "-" in w else terms(w):
                en.setdefault(t, names[0])
        for c in names:
            if any("\u3400" <= ch <= "\u9fff" for ch in c):
                zh.append((c, english[0]))
    zh.sort(key=lambda x: -len(x[0]))
    return en, zh


def chinese_for(text: str, limit: int = 8) -> list:
    """The Chinese words for the English terms of `text`, in the order they appear."""
    from ...search.tokenize import terms

    en, _ = _table()
    return list(dict.fromkeys(en[t] for t in terms(text) if t in en))[:limit]


def english_for(text: str, limit: int = 8) -> list:
    """The English words for the Chinese terms of `text`, in the order they appear."""
    _, zh = _table()
    found: list = []
    for c, e in zh:
        at = text.find(c)
        if at >= 0 and not any(c in f[1] for f in found):
            found.append((at, c, e))
    found.sort()
    return list(dict.fromkeys(e for _, _, e in found))[:limit]
