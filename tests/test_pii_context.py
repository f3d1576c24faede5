"""Masking keeps ordinary numbers and catches the formats that slipped through (item 11)."""

import pytest

from conftest import Cli
from memcli.safety import pii


@pytest.mark.parametrize(
    "text",
    [
        "the snapshot is 17179869184 bytes",
        "innodb_buffer_pool_size=13421772800",
        "pulled image sha256:4539578763621486 (digest truncated)",
        '"thread id 5105105105105100" prio=5 waiting on condition',
        "request_id=4111111111111111 status=200",
        "version 2 Release Court cleared the backlog",
        "snowflake id 110105198001011238 created",
        "heap_used=15923456789 heap_max=17179869184",
        "上传完成，共 13812345678 字节",
    ],
)
def test_24_11_ordinary_numbers_are_not_personal_data(text):
    assert pii.find(text) == [], [(f.kind, text[f.start : f.end]) for f in pii.find(text)]


@pytest.mark.parametrize(
    "text, kind, masked_part",
    [
        ("call me at 13812345678 after six", "phone", "138****5678"),
        ("手机 １３８１２３４５６７８，晚上打", "phone", "138****5678"),
        ("call me at 138.1234.5678", "phone", "138.****.5678"),
        ("call me at 138 - 1234 - 5678", "phone", "138 - **** - 5678"),
        ("call me at 138\u00a01234\u00a05678", "phone", "138 **** 5678"),
        ("邮箱 li.wei＠example-mail.com 收发票", "email", "l***@example-mail.com"),
        ("refund to de89 3704 0044 0532 0130 00 please", "iban", "de89 **** **** **** **30 00"),
        ("电话：13084050692", "phone", "130****0692"),
        ("Visa 4111 1111 1111 1111 declined", "card", "**** **** **** 1111"),
    ],
)
def test_24_11_personal_data_in_any_dress_is_masked(text, kind, masked_part):
    found = pii.find(text)
    assert [f.kind for f in found] == [kind]
    new, _ = pii.redact(text)
    assert masked_part in new, new


def test_24_11_a_captured_turn_keeps_its_numbers_and_loses_the_phone(root):
    cli = Cli(root)
    turn = "restore 17179869184 bytes from sha256:4539578763621486ab, then call Li on 138-1234-5678"
    cli("session", "add", "user", turn)
    text = (root / ".memcli/sessions/default.json").read_text(encoding="utf-8")
    assert "17179869184" in text and "4539578763621486" in text
    assert "138-****-5678" in text and "1234-5678" not in text
