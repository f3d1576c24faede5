"""Writes benchmarks/pii/dev.jsonl: the split the detector was tuned on (its own contexts and
seed; the value generators are the fresh split's). Same line format as fresh.jsonl."""

from __future__ import annotations

import json
from pathlib import Path

import make_fresh as g

g.R.seed(7)
R = g.R

ZH = {
    "email": [
        "请把简历发到{v}",
        "我的邮箱是{v}，有问题随时联系",
        "账号绑定邮箱：{v}",
        "会议纪要已发送至 {v} 和组内邮件组",
        "他离职前留的私人邮箱{v}",
    ],
    "phone": [
        "我的手机号是{v}",
        "电话：{v}",
        "有事打我电话{v}，微信同号",
        "客服回拨号码为 {v}",
        "紧急联系人（母亲）{v}",
    ],
    "cn-id": ["身份证号：{v}", "乘车人证件号 {v}", "他的身份证{v}复印件在共享盘里", "开户时登记的证件号码为{v}"],
    "card": ["银行卡号：{v}", "用这张卡付的款 {v}", "信用卡{v}被盗刷了", "收款卡 {v} 开户行北京分行"],
    "iban": ["收款人 IBAN：{v}", "对方账户{v}", "IBAN {v}（德意志银行）"],
    "address": ["家庭住址：{v}", "寄到{v}"],
}
EN = {
    "email": [
        "Email me at {v}",
        "contact: {v}",
        "Send the NDA to {v} please",
        "Her address is {v}.",
        "cc {v} on the release notes",
    ],
    "phone": ["My number is {v}", "Phone: {v}", "call me on {v} tomorrow", "tel {v}", "Emergency contact {v}"],
    "cn-id": ["ID card no. {v}", "Resident ID {v}", "passenger id {v}"],
    "card": ["Card number {v}", "paid with {v}", "Visa {v} declined", "card: {v}"],
    "iban": ["IBAN: {v}", "Bank account {v}", "please transfer to {v}"],
    "address": ["Home address: {v}", "Deliver to {v}"],
}
ADDRESSES = [
    "北京市朝阳区建国路88号",
    "上海市徐汇区漕溪北路398号",
    "广州市越秀区中山五路70号",
    "123 Main Street, Springfield",
    "45 Queen Street West, Toronto",
    "9 rue de Rivoli, Paris",
    "深圳市福田区深南大道6008号",
    "1 Market Street, San Francisco",
]
COUNTS = {"email": 45, "phone": 75, "cn-id": 30, "card": 30, "iban": 24, "address": 8}
NEGATIVES = [
    "版本号 {ver}，发布于 {date}",
    "order {o} refunded",
    "SHA {sha}",
    "timestamp {epoch}",
    "订单编号{o}",
    "trace id {uuid}",
    "price ${money}",
    "port {n}, pid {b}",
    "耗时 {n}ms，内存 {big} 字节",
    "python {ver} on build {b}",
    "工单号 {o2}",
    "{iso} deploy finished",
    "Release {ver}-rc{floor}",
    "快递单号 {t}",
]


def main() -> None:
    g.NEGATIVES = NEGATIVES
    rows = []
    for kind, count in COUNTS.items():
        for i in range(count):
            lang = "zh" if i % 2 == 0 else "en"
            if kind == "phone":
                value = [g.cn_mobile, g.cn_landline, g.intl_phone][i % 3]()
            elif kind == "address":
                value = ADDRESSES[i % len(ADDRESSES)]
                lang = "zh" if any("\u4e00" <= c <= "\u9fff" for c in value) else "en"
            else:
                value = g.MAKERS[kind]()
            template = R.choice((ZH if lang == "zh" else EN)[kind])
            rows.append({"text": template.format(v=value), "pii": [{"kind": kind, "value": value}], "lang": lang})
    for _ in range(80):
        text = g.negative()
        rows.append({"text": text, "pii": [], "lang": "zh" if any("\u4e00" <= c <= "\u9fff" for c in text) else "en"})
    R.shuffle(rows)
    out = Path(__file__).with_name("dev.jsonl")
    out.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    print(f"{out}: {sum(len(r['pii']) for r in rows)} labelled values, {sum(not r['pii'] for r in rows)} clean lines")


if __name__ == "__main__":
    main()
