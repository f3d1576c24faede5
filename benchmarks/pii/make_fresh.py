"""Writes benchmarks/pii/fresh.jsonl: the held-out split of the personal-data set.

Its contexts and value formats were written before the detector existed and are not shared
with the dev split (`make_dev.py`); it is scored once, at the end (`run.py --split fresh`).
Each line: {"text": ..., "pii": [{"kind": ..., "value": ...}], "lang": "zh"|"en"}; an empty
"pii" list is a line that must not be flagged. Valid values are generated (check digits,
Luhn, mod 97) with a fixed seed, so the file is reproducible.
"""

from __future__ import annotations

import json
import random
import string
from pathlib import Path

R = random.Random(20261203)


def id_check(body17: str) -> str:
    w = [7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2]
    return "10X98765432"[sum(int(c) * x for c, x in zip(body17, w)) % 11]


def cn_id() -> str:
    region = R.choice(
        [
            "110105",
            "310115",
            "440306",
            "330108",
            "510104",
            "320106",
            "420111",
            "610112",
            "370202",
            "210203",
            "500103",
            "350203",
        ]
    )
    y, m, d = R.randint(1955, 2006), R.randint(1, 12), R.randint(1, 28)
    body = f"{region}{y:04d}{m:02d}{d:02d}{R.randint(0, 999):03d}"
    return body + id_check(body)


def luhn_complete(prefix: str, length: int) -> str:
    digits = prefix + "".join(R.choice(string.digits) for _ in range(length - len(prefix) - 1))
    total = 0
    for i, c in enumerate(reversed(digits)):
        n = int(c)
        if i % 2 == 0:
            n *= 2
            n = n - 9 if n > 9 else n
        total += n
    return digits + str((10 - total % 10) % 10)


def card() -> str:
    kind = R.choice(["visa", "mc", "mc2", "amex", "unionpay", "unionpay19", "jcb", "discover"])
    if kind == "visa":
        n = luhn_complete("4" + str(R.randint(10000, 99999)), 16)
    elif kind == "mc":
        n = luhn_complete(str(R.randint(51, 55)), 16)
    elif kind == "mc2":
        n = luhn_complete(str(R.randint(2221, 2720)), 16)
    elif kind == "amex":
        n = luhn_complete(R.choice(["34", "37"]), 15)
        return R.choice([n, f"{n[:4]} {n[4:10]} {n[10:]}", f"{n[:4]}-{n[4:10]}-{n[10:]}"])
    elif kind == "unionpay":
        n = luhn_complete("62" + str(R.randint(2126, 2925)), 16)
    elif kind == "unionpay19":
        n = luhn_complete("62" + str(R.randint(1000, 9999)), 19)
    elif kind == "jcb":
        n = luhn_complete(str(R.randint(3528, 3589)), 16)
    else:
        n = luhn_complete("6011", 16)
    style = R.choice(["plain", "space", "dash", "space"])
    if style == "plain":
        return n
    sep = " " if style == "space" else "-"
    return sep.join(n[i : i + 4] for i in range(0, len(n), 4))


IBAN_SPEC = {
    "DE": (18, "n"),
    "GB": (18, "b4n14"),
    "FR": (23, "n"),
    "ES": (20, "n"),
    "IT": (23, "c1n22"),
    "NL": (14, "b4n10"),
    "CH": (17, "n"),
    "BE": (12, "n"),
    "AT": (16, "n"),
    "PL": (24, "n"),
}


def iban() -> str:
    cc = R.choice(sorted(IBAN_SPEC))
    length, shape = IBAN_SPEC[cc]
    if shape == "n":
        bban = "".join(R.choice(string.digits) for _ in range(length))
    elif shape.startswith("b4"):
        bban = "".join(R.choice(string.ascii_uppercase) for _ in range(4))
        bban += "".join(R.choice(string.digits) for _ in range(length - 4))
    else:
        bban = R.choice(string.ascii_uppercase) + "".join(R.choice(string.digits) for _ in range(length - 1))
    num = "".join(str(int(c, 36)) for c in bban + cc + "00")
    check = 98 - int(num) % 97
    raw = f"{cc}{check:02d}{bban}"
    return raw if R.random() < 0.4 else " ".join(raw[i : i + 4] for i in range(0, len(raw), 4))


SURNAMES = [
    "zhang",
    "wang",
    "li",
    "liu",
    "chen",
    "yang",
    "huang",
    "zhao",
    "wu",
    "zhou",
    "xu",
    "sun",
    "ma",
    "zhu",
    "hu",
    "guo",
    "he",
    "lin",
    "luo",
    "gao",
]
GIVEN = [
    "wei",
    "fang",
    "na",
    "min",
    "jing",
    "lei",
    "qiang",
    "yan",
    "jun",
    "yong",
    "xiu",
    "tao",
    "ming",
    "hui",
    "emma",
    "oliver",
    "sophia",
    "liam",
    "ava",
    "noah",
    "mia",
    "lucas",
    "chloe",
    "ethan",
]
DOMAINS = [
    "qq.com",
    "163.com",
    "126.com",
    "gmail.com",
    "outlook.com",
    "foxmail.com",
    "sina.com",
    "yahoo.co.jp",
    "hotmail.co.uk",
    "icloud.com",
    "mail.ustc.edu.cn",
    "bytedance.com",
    "alibaba-inc.com",
    "proton.me",
    "company.de",
    "corp.example-partner.cn",
]


def email() -> str:
    s, g = R.choice(SURNAMES), R.choice(GIVEN)
    local = R.choice(
        [
            f"{g}.{s}",
            f"{s}{g}{R.randint(1, 99)}",
            f"{g[0]}{s}",
            f"{s}_{g}",
            f"{g}+{R.choice(['news', 'jd', 'work'])}",
            f"{s}.{g}{R.randint(1980, 2005)}",
            f"{g.capitalize()}.{s.capitalize()}",
            f"{R.randint(10000, 999999999)}",
        ]
    )
    return f"{local}@{R.choice(DOMAINS)}"


def cn_mobile() -> str:
    n = R.choice(["13", "15", "17", "18", "19", "16", "14"]) + str(R.randint(0, 9)) + f"{R.randint(0, 99999999):08d}"
    return R.choice(
        [
            n,
            f"{n[:3]} {n[3:7]} {n[7:]}",
            f"{n[:3]}-{n[3:7]}-{n[7:]}",
            f"+86 {n}",
            f"+86-{n[:3]}-{n[3:7]}-{n[7:]}",
            f"0086 {n}",
            f"(+86){n}",
            f"+86 {n[:3]} {n[3:7]} {n[7:]}",
            n,
        ]
    )


def cn_landline() -> str:
    area, size = R.choice(
        [
            ("010", 8),
            ("021", 8),
            ("020", 8),
            ("0755", 8),
            ("0571", 8),
            ("028", 8),
            ("025", 8),
            ("0512", 8),
            ("0731", 8),
            ("0891", 7),
            ("0816", 7),
        ]
    )
    local = str(R.randint(2, 8)) + "".join(R.choice(string.digits) for _ in range(size - 1))
    return R.choice(
        [
            f"{area}-{local}",
            f"({area}){local}",
            f"{area} {local[:4]} {local[4:]}",
            f"{area}-{local}-{R.randint(100, 9999)}",
            f"+86 {area[1:]} {local}",
            f"+86-{area[1:]}-{local}",
            f"{area}-{local}转{R.randint(100, 999)}",
        ]
    )


def intl_phone() -> str:
    return R.choice(
        [
            f"+1 {R.randint(201, 989)} {R.randint(200, 999)} {R.randint(1000, 9999)}",
            f"+1 ({R.randint(201, 989)}) {R.randint(200, 999)}-{R.randint(1000, 9999)}",
            f"+44 20 {R.randint(7000, 8999)} {R.randint(1000, 9999)}",
            f"+44 7{R.randint(100, 999)} {R.randint(100000, 999999)}",
            f"+49 30 {R.randint(1000000, 9999999)}",
            f"+49 1{R.randint(51, 79)} {R.randint(1000000, 99999999)}",
            f"+33 {R.randint(1, 7)} {R.randint(10, 99)} {R.randint(10, 99)} {R.randint(10, 99)} {R.randint(10, 99)}",
            f"+81 3-{R.randint(1000, 9999)}-{R.randint(1000, 9999)}",
            f"+81 90-{R.randint(1000, 9999)}-{R.randint(1000, 9999)}",
            f"+65 {R.randint(6000, 9999)} {R.randint(1000, 9999)}",
            f"+852 {R.randint(2000, 9999)} {R.randint(1000, 9999)}",
            f"+61 2 {R.randint(8000, 9999)} {R.randint(1000, 9999)}",
            f"+82 10-{R.randint(1000, 9999)}-{R.randint(1000, 9999)}",
            f"+886 9{R.randint(10, 99)} {R.randint(100, 999)} {R.randint(100, 999)}",
            f"0044 20 {R.randint(7000, 8999)} {R.randint(1000, 9999)}",
            f"+91 {R.randint(70000, 99999)} {R.randint(10000, 99999)}",
        ]
    )


ADDRESSES = [
    "上海市浦东新区张江路368号",
    "北京市海淀区中关村南大街5号院",
    "深圳市南山区科技园科苑路15号",
    "杭州市西湖区文三路259号",
    "成都市武侯区天府大道北段1700号",
    "广州市天河区珠江新城华夏路10号",
    "221B Baker Street, London",
    "1600 Amphitheatre Parkway, Mountain View",
    "350 Fifth Avenue, New York",
    "10 Downing Street",
    "4059 Mt Lee Drive, Hollywood",
    "77 Massachusetts Avenue, Cambridge MA",
    "南京市鼓楼区汉口路22号",
    "武汉市洪山区珞喻路1037号",
    "1 Infinite Loop, Cupertino",
    "742 Evergreen Terrace",
    "西安市雁塔区高新路52号",
    "500 Oracle Parkway, Redwood City",
    "苏州市工业园区星湖街328号",
    "88 Colin P Kelly Jr Street, San Francisco",
]

ZH = {
    "email": [
        "客户回复说邮件被退回了，改发到 {v} 试试",
        "面试候选人的邮箱：{v}，周四下午约二面",
        "把周报抄送给{v}，她是新来的产品经理",
        "供应商对接人换了，新的联系邮箱是{v}。",
        "发票电子版请寄到 {v}（财务王姐）",
        "注册测试账号时用的是我自己的邮箱{v}，记得改掉",
    ],
    "phone": [
        "快递员打不通，收件人手机 {v}，下午再派",
        "房东的电话是{v}，水管坏了找他",
        "值班同学联系方式：{v}（夜里也可以打）",
        "客户张总说有事直接打{v}，别发邮件",
        "报名表第3行：联系电话{v}",
        "物业说停电通知会打到{v}这个号",
    ],
    "cn-id": [
        "入职材料里身份证号写成了{v}，人事让核对一下",
        "订机票用的证件号码 {v}，名字是拼音",
        "实名认证失败，输入的身份证是{v}",
        "医保卡绑定的身份证号码：{v}。",
        "签合同时乙方证件号{v}",
    ],
    "card": [
        "报销打款到这张卡：{v}（招商银行）",
        "订阅续费用的信用卡 {v}，下个月到期",
        "客户在工单里贴了整张卡号{v}，已提醒删除",
        "工资卡换成了{v}，记得通知财务",
        "测试环境千万别用真卡，比如 {v} 这种就是真实卡号",
    ],
    "iban": [
        "德国供应商的收款账户 IBAN：{v}",
        "境外付款信息：IBAN {v}，SWIFT 另发",
        "欧洲子公司的对公账户是{v}，付款备注写合同号",
        "汇款失败，对方给的 IBAN {v} 需要再核对",
    ],
    "address": ["样品寄到{v}，收件人前台", "新办公室在{v}，下周一搬", "用户填的收货地址：{v}"],
}
EN = {
    "email": [
        "Loop in {v} on the contract thread, she signs off on legal",
        "The candidate's address is {v}; send the take-home by Friday",
        "Customer escalation came from {v}, reply within a day",
        "Reset requests go to {v} until IT hires someone",
        "Forwarded the invoice to {v} (accounts payable)",
        "my personal mail is {v} if the work one bounces",
    ],
    "phone": [
        "Call the landlord at {v} about the leak",
        "On-call phone for this week: {v}",
        "The courier left a note: ring {v} to reschedule",
        "Reach Dr. Patel's office on {v} to move the appointment",
        "Her mobile is {v} — text, don't call",
        "Vendor support hotline {v} (ask for tier 2)",
    ],
    "cn-id": [
        "The visa form wanted his resident ID, {v}, copied from the scan",
        "Chinese ID on the booking: {v}",
        "KYC failed for resident identity card {v}",
        "HR pasted the new hire's ID number {v} into the ticket",
    ],
    "card": [
        "Charge the renewal to card {v}, exp 09/28",
        "The customer pasted their card number {v} in chat; scrub the log",
        "Corporate Amex {v} is for travel only",
        "Refund goes back to the card ending in the full number {v}",
        "Saved payment method: {v}",
    ],
    "iban": [
        "Wire the deposit to IBAN {v}",
        "Supplier bank details: {v} (BIC on the invoice)",
        "Payroll account changed to {v} from next month",
        "Refund to the customer's IBAN {v} was rejected",
    ],
    "address": ["Ship the replacement to {v}", "Meet at {v} at 9", "Billing address on file: {v}"],
}

MAKERS = {"email": email, "cn-id": cn_id, "card": card, "iban": iban}
COUNTS = {"email": 48, "phone": 84, "cn-id": 30, "card": 34, "iban": 26, "address": 20}

NEGATIVES = [
    "订单号 {o} 已发货，顺丰单号 SF{t}",
    "Order #{o} shipped; tracking {t}",
    "升级到 v{ver} 之后启动变慢了",
    "Pinned numpy=={ver} because of the ABI change",
    "Build {b} passed at {ts}",
    "构建编号 {b}，耗时 {n} 秒",
    "commit {sha} fixed the flaky test",
    "镜像 digest sha256:{h}",
    "The epoch in the log was {epoch}, i.e. {iso}",
    "时间戳 {epochms} 对应 {iso}",
    "Request id {uuid} timed out",
    "内网地址 10.{a}.{b2}.{c}:8080",
    "Invoice total ¥{money}, tax included",
    "ISBN 978-7-{isbn}",
    "Ticket JIRA-{jira} is blocked",
    "Meeting room B{room}, floor {floor}",
    "工单 {o2} 处理中，客户等级 VIP{floor}",
    "Rate limit is {n} requests per {floor} seconds",
    "Downloaded {big} bytes in {n} ms",
    "batch {o} / shard {floor}",
    "Invoice number {o2} was paid on {date}",
    "坐标 31.{lat}, 121.{lon}",
    "Grafana panel id {b}",
]


def negative() -> str:
    t = R.choice(NEGATIVES)
    hexs = lambda n: "".join(R.choice("0123456789abcdef") for _ in range(n))  # noqa: E731
    ts = f"2026-{R.randint(1, 12):02d}-{R.randint(1, 28):02d}T{R.randint(0, 23):02d}:{R.randint(0, 59):02d}:{R.randint(0, 59):02d}Z"
    return t.format(
        o=R.randint(10**15, 10**18),
        t=R.randint(10**11, 10**13),
        ver=f"{R.randint(0, 4)}.{R.randint(0, 30)}.{R.randint(0, 20)}",
        b=R.randint(100000, 99999999),
        ts=ts,
        n=R.randint(1, 9999),
        sha=hexs(40),
        h=hexs(64),
        epoch=R.randint(1_600_000_000, 1_800_000_000),
        iso=ts,
        epochms=R.randint(1_600_000_000_000, 1_800_000_000_000),
        uuid=f"{hexs(8)}-{hexs(4)}-{hexs(4)}-{hexs(4)}-{hexs(12)}",
        a=R.randint(0, 255),
        b2=R.randint(0, 255),
        c=R.randint(1, 254),
        money=f"{R.randint(1, 999)},{R.randint(100, 999)}.{R.randint(10, 99)}",
        isbn=f"{R.randint(100, 999)}-{R.randint(10000, 99999)}-{R.randint(0, 9)}",
        jira=R.randint(100, 99999),
        room=R.randint(100, 999),
        floor=R.randint(1, 30),
        o2=R.randint(10**9, 10**12),
        big=R.randint(10**6, 10**10),
        date=ts[:10],
        lat=R.randint(100000, 999999),
        lon=R.randint(100000, 999999),
    )


def main() -> None:
    rows = []
    for kind, count in COUNTS.items():
        for i in range(count):
            lang = "zh" if i % 2 == 0 else "en"
            if kind == "phone":
                value = [cn_mobile, cn_landline, intl_phone][i % 3]()
            elif kind == "address":
                value = ADDRESSES[i % len(ADDRESSES)]
                lang = "zh" if any("\u4e00" <= c <= "\u9fff" for c in value) else "en"
            else:
                value = MAKERS[kind]()
            template = R.choice((ZH if lang == "zh" else EN)[kind])
            rows.append({"text": template.format(v=value), "pii": [{"kind": kind, "value": value}], "lang": lang})
    for i in range(12):  # two kinds in one note
        a, b = email(), cn_mobile()
        text = f"联系人：李女士，邮箱 {a}，手机 {b}" if i % 2 == 0 else f"Contact: Ms. Li, {a}, mobile {b}"
        rows.append(
            {
                "text": text,
                "pii": [{"kind": "email", "value": a}, {"kind": "phone", "value": b}],
                "lang": "zh" if i % 2 == 0 else "en",
            }
        )
    for _ in range(120):
        text = negative()
        rows.append({"text": text, "pii": [], "lang": "zh" if any("\u4e00" <= c <= "\u9fff" for c in text) else "en"})
    R.shuffle(rows)
    out = Path(__file__).with_name("fresh.jsonl")
    out.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    print(f"{out}: {sum(len(r['pii']) for r in rows)} labelled values, {sum(not r['pii'] for r in rows)} clean lines")


if __name__ == "__main__":
    main()
