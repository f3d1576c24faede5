"""Writes benchmarks/pii/technical-dev.jsonl and technical-fresh.jsonl: technical text full of
ordinary numbers that the personal-data masking must leave alone, and fresh2.jsonl: personal data
in the formats that used to slip through (full-width digits, dotted and spaced phones, no-break
spaces, a full-width @, a lowercase IBAN) and bare numbers said as phones.

Technical lines: config dumps, logs, byte counts, durations, epoch times, hashes and digests,
thread, trace and snowflake ids (Luhn-valid ones on purpose), versions, ports, inode numbers, and
a street word after a version. The generator draws the numbers that look most like personal data
(11 digits starting 13-19, 16 digits starting 4 or 5 that pass Luhn, 18 digits with a valid date).

Written with two seeds before the masking changed: the `dev` set was used while changing it, the
`fresh` sets are scored once, at the end (`run.py --split technical-fresh`, `--split fresh2`).
Each line: {"text", "pii": [{"kind", "value"}], "lang"}; "pii" is empty for a technical line.
"""

from __future__ import annotations

import json
import random
import string
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def luhn_complete(r: random.Random, prefix: str, length: int) -> str:
    digits = prefix + "".join(r.choice(string.digits) for _ in range(length - len(prefix) - 1))
    total = 0
    for i, c in enumerate(reversed(digits)):
        n = int(c)
        if i % 2 == 0:
            n *= 2
            n = n - 9 if n > 9 else n
        total += n
    return digits + str((10 - total % 10) % 10)


def mobile_like(r: random.Random) -> str:
    return str(r.randint(13, 19)) + "".join(r.choice(string.digits) for _ in range(9))


def dated18(r: random.Random) -> str:
    """18 digits that start like a resident ID (a region, a date); the check digit is chance."""
    body = (
        f"{r.choice(['110105', '310115', '440306', '510104'])}{r.randint(1960, 2005)}{r.randint(1, 12):02d}"
        f"{r.randint(1, 28):02d}{r.randint(0, 999):03d}"
    )
    return body + r.choice("0123456789X")


def technical(r: random.Random, n: int) -> list[str]:
    hexs = lambda k: "".join(r.choice("0123456789abcdef") for _ in range(k))  # noqa: E731
    makers = [
        lambda: f"innodb_buffer_pool_size={mobile_like(r)}",
        lambda: f"the dump is {mobile_like(r)} bytes ({r.randint(10, 99)} GiB) after compression",
        lambda: f"max_binlog_cache_size = {mobile_like(r)}",
        lambda: f"vm.max_map_count={r.randint(100000, 999999)} fs.file-max={mobile_like(r)}",
        lambda: (
            f"2026-11-{r.randint(10, 28)}T10:{r.randint(10, 59)}:00Z INFO wrote {mobile_like(r)} bytes to s3://logs/part-{r.randint(1, 999)}"
        ),
        lambda: f"Total: {mobile_like(r)} rows scanned, {r.randint(100, 9999)} ms",
        lambda: (
            f"request_id={luhn_complete(r, '4' + str(r.randint(100, 999)), 16)} status=200 latency_ms={r.randint(3, 900)}"
        ),
        lambda: (
            f'"thread id {luhn_complete(r, str(r.randint(51, 55)), 16)}" prio=5 os_prio=0 tid=0x{hexs(12)} nid=0x{hexs(4)} waiting'
        ),
        lambda: f"span_id {luhn_complete(r, '4', 16)} parent {luhn_complete(r, '5', 16)}",
        lambda: f"sha256:{hexs(64)}",
        lambda: f"image digest sha256:{luhn_complete(r, '4', 16)}{hexs(48)}",
        lambda: f"order {luhn_complete(r, '62', 16)} shipped, tracking {r.randint(10**11, 10**12 - 1)}",
        lambda: f"snowflake id {dated18(r)} created at epoch {r.randint(1700000000000, 1799999999999)}",
        lambda: f"tweet status/{dated18(r)}{r.randint(0, 9)}",
        lambda: f"inode {mobile_like(r)} links 1 size {r.randint(1000, 99999)}",
        lambda: f"heap_used={mobile_like(r)} heap_max={mobile_like(r)} gc_count={r.randint(1, 500)}",
        lambda: f"nanoseconds: {mobile_like(r)}",
        lambda: f"version {r.randint(2, 9)} Release Court cleared the backlog",
        lambda: f"step {r.randint(2, 12)} Station Road checks pass in CI",
        lambda: f"v{r.randint(1, 4)}.{r.randint(0, 30)}.{r.randint(0, 9)} build {mobile_like(r)}",
        lambda: f"listen 0.0.0.0:{r.randint(1024, 65535)} backlog={r.randint(128, 4096)} pid {r.randint(1000, 99999)}",
        lambda: f'DB_POOL_MAX_BYTES: "{mobile_like(r)}"',
        lambda: f'{{"offset": {mobile_like(r)}, "partition": {r.randint(0, 63)}, "lag": {r.randint(0, 99999)}}}',
        lambda: f"checksum crc64 {luhn_complete(r, '5', 16)}",
        lambda: f"memory.limit_in_bytes {mobile_like(r)}",
        lambda: f"上传完成，共 {mobile_like(r)} 字节，耗时 {r.randint(1, 99)} 秒",
        lambda: f"订单号 {luhn_complete(r, '4', 16)} 已出库",
        lambda: f"日志文件大小 {mobile_like(r)}，保留 {r.randint(3, 30)} 天",
    ]
    return [r.choice(makers)() for _ in range(n)]


def fresh2(r: random.Random) -> list[dict]:
    """Personal data in the formats that slipped through, and bare numbers said as phones."""
    full = str.maketrans("0123456789@", "０１２３４５６７８９＠")
    rows = []
    for _ in range(6):
        m = mobile_like(r)
        v = m.translate(full)
        rows.append({"text": f"手机 {v}，晚上打", "pii": [{"kind": "phone", "value": v}], "lang": "zh"})
    for sep in (".", " - ", "\u00a0", "\u202f", "-", " "):
        for _ in range(2):
            m = mobile_like(r)
            v = sep.join((m[:3], m[3:7], m[7:]))
            rows.append({"text": f"call me at {v} after six", "pii": [{"kind": "phone", "value": v}], "lang": "en"})
    for _ in range(4):
        name = "".join(r.choice(string.ascii_lowercase) for _ in range(6))
        v = f"{name}＠example-mail.com"
        rows.append({"text": f"邮箱 {v} 收发票", "pii": [{"kind": "email", "value": v}], "lang": "zh"})
    for _ in range(4):
        digits = "".join(r.choice(string.digits) for _ in range(18))
        bban = digits
        check = 98 - int("".join(str(int(c, 36)) for c in bban + "DE00")) % 97
        v = f"de{check:02d} {bban[:4]} {bban[4:8]} {bban[8:12]} {bban[12:16]} {bban[16:]}"
        rows.append({"text": f"refund to {v} please", "pii": [{"kind": "iban", "value": v}], "lang": "en"})
    for ctx in (
        "my number is {}",
        "WhatsApp {} any time",
        "打这个 {} 找他",
        "reach her on {}",
        "联系方式 {}",
        "tel {}",
        "sms {} when you land",
        "回拨 {}",
    ):
        m = mobile_like(r)
        rows.append(
            {"text": ctx.format(m), "pii": [{"kind": "phone", "value": m}], "lang": "zh" if ord(ctx[0]) > 127 else "en"}
        )
    return rows


def main() -> None:
    for name, seed in (("technical-dev", 1101), ("technical-fresh", 2202)):
        r = random.Random(seed)
        rows = [
            {"text": t, "pii": [], "lang": "zh" if any(ord(c) > 127 for c in t) else "en"} for t in technical(r, 120)
        ]
        (HERE / f"{name}.jsonl").write_text(
            "".join(json.dumps(x, ensure_ascii=False) + "\n" for x in rows), encoding="utf-8"
        )
    rows = fresh2(random.Random(3303))
    (HERE / "fresh2.jsonl").write_text(
        "".join(json.dumps(x, ensure_ascii=False) + "\n" for x in rows), encoding="utf-8"
    )
    print("wrote technical-dev.jsonl, technical-fresh.jsonl, fresh2.jsonl", file=sys.stderr)


if __name__ == "__main__":
    main()
