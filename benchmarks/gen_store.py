"""Generate a memory root of N detail files with a fixed seed: mixed English and Chinese text,
realistic frontmatter, a full MEMORY.md. Planted memories make known queries answerable:

- `quokka` is in the title of a pinned memory, so it hits the index;
- `zanzibar` is only in the body of one ordinary memory, so it needs the details layer.

    python benchmarks/gen_store.py /tmp/store-10k 10000
"""

from __future__ import annotations

import random
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

SEED = 1130
INDEX_WORD = "quokka"
DETAIL_WORD = "zanzibar"

EN = """cache deploy staging production rollback migration schema index query latency timeout retry backoff
queue worker consumer producer kafka redis postgres mysql sqlite nginx upstream proxy gateway certificate
renewal token session cookie header charset encoding unicode locale timezone cron scheduler batch pipeline
build docker image layer registry kubernetes pod node cluster memory leak heap profiler benchmark release
version branch merge rebase review commit hook lint format test fixture mock flaky snapshot coverage monitor
alert dashboard metric rotate disk quota backup restore vacuum replica failover shard partition deadlock
transaction isolation pool connection overflow throttle webhook callback signature payment refund order
inventory search ranking prompt context window summary agent editor reviewer article draft python venv
startup import module package wheel frontend bundle route mobile notification email""".split()
ZH = """缓存 部署 测试环境 生产环境 回滚 迁移 索引 查询 延迟 超时 重试 队列 消费者 数据库 连接池 证书 续期
令牌 会话 字符集 编码 乱码 时区 定时任务 构建 镜像 集群 内存 泄漏 性能 发布 版本 分支 合并 评审 提交 测试
监控 告警 日志 备份 恢复 副本 分片 事务 隔离 限流 回调 签名 支付 退款 订单 库存 搜索 排序 上下文 摘要 编辑
审校 文章 草稿 启动 依赖 打包 前端 路由 通知 邮件 用户 偏好 约定 教训 步骤 事故 复盘""".split()
TYPES = ["fact", "preference", "lesson", "procedure", "event", "note"]


def _words(rng: random.Random, n: int) -> str:
    out = []
    for _ in range(n):
        out.append(rng.choice(ZH) if rng.random() < 0.4 else rng.choice(EN))
    return " ".join(out)


def _stamp(rng: random.Random) -> str:
    t = datetime(2026, 11, 30, tzinfo=timezone.utc) - timedelta(minutes=rng.randrange(2 * 365 * 24 * 60))
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


def detail(
    i: int,
    rng: random.Random,
    title: str | None = None,
    body_extra: str = "",
    pinned=False,
    importance: float | None = None,
) -> tuple[str, str, dict]:
    title = title or f"{_words(rng, rng.randint(3, 6))} {i}"
    mid = f"m{i:06d}"
    summary = _words(rng, rng.randint(8, 15))
    tags = sorted({rng.choice(EN) for _ in range(rng.randint(1, 3))})
    aliases = [_words(rng, 2) for _ in range(rng.randint(0, 2))]
    created = _stamp(rng)
    imp = importance if importance is not None else round(rng.random() * 0.8, 2)
    paras = [_words(rng, rng.randint(20, 60)) for _ in range(rng.randint(1, 3))]
    if body_extra:
        paras.insert(1, body_extra)
    body = paras[0] + "\n\n## Details\n\n" + "\n\n".join(paras[1:] or [_words(rng, 10)]) + "\n"
    text = (
        f"---\nid: {mid}\ntitle: {title}\nsummary: {summary}\ntags: [{', '.join(tags)}]\n"
        f"aliases: [{', '.join(aliases)}]\ntype: {rng.choice(TYPES)}\nimportance: {imp}\npinned: {str(pinned).lower()}\n"
        f"created: {created}\nupdated: {created}\nexpires: null\nsource: generated\n---\n{body}"
    )
    return (
        mid,
        text,
        {"title": title, "summary": summary, "tags": tags, "importance": imp, "pinned": pinned, "updated": created},
    )


def generate(root: Path, n: int, seed: int = SEED) -> Path:
    rng = random.Random(seed)
    mem = root / "memory"
    (mem / "episodes").mkdir(parents=True, exist_ok=True)
    (mem / "archive").mkdir(exist_ok=True)
    (root / ".gitignore").write_text(".memcli/\n")
    metas = []
    for i in range(n):
        if i == 7:
            mid, text, meta = detail(
                i, rng, title=f"{INDEX_WORD.title()} deployment checklist", pinned=True, importance=0.9
            )
        elif i == n // 2:
            mid, text, meta = detail(
                i, rng, body_extra=f"The {DETAIL_WORD} relay needs a manual restart.", importance=0.1
            )
        else:
            mid, text, meta = detail(i, rng)
        (mem / f"{mid}.md").write_text(text, encoding="utf-8")
        metas.append((mid, meta))

    def key(m):
        return (not m[1]["pinned"], -m[1]["importance"], tuple(-ord(c) for c in m[1]["updated"]), m[0])

    top = sorted(metas, key=key)[:35]
    lines = ["# MEMORY", "", "<!-- generated store -->", ""]
    for mid, m in top:
        tags = " ".join("#" + t for t in m["tags"])
        lines.append(f"- **{m['title']}**: {m['summary']} | {tags} | → memory/{mid}.md")
    (root / "MEMORY.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return root


if __name__ == "__main__":
    generate(Path(sys.argv[1]), int(sys.argv[2]))
