"""Regression tests for holes found by adversarial testing: data loss, leaks, wrong answers.

Every test drives the command line (`memcli.cli.main`, what the installed command runs; in a
process of its own where processes race or a terminal is the point) and looks at the files on
disk, so it holds whatever the code behind the commands looks like. Each docstring states the
behaviour a careful user expects. A test marked xfail(strict=True) pins a hole that is still
open: the day it is closed the test passes, the strict marker turns that into a failure, and
the marker must go.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import queue
import random
import re
import shutil
import string
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tests.conftest import invoke, run_memcli, child_env


def hole(reason: str):
    return pytest.mark.xfail(strict=True, reason=reason)


def mc(root: Path, *args, input=None, env=None):
    """`memcli --root ROOT ARGS` through the command line's entry point, in this process, with
    `env`'s variables set meanwhile; a result read like a finished process's."""
    argv = ["--root", str(root), *map(str, args)]
    saved = {k: os.environ.get(k) for k in env or {}}
    os.environ.update(env or {})
    try:
        res = invoke(argv, input=input)
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    return subprocess.CompletedProcess(argv, res.exit_code, res.stdout, res.stderr)


def ok(res):
    assert res.returncode == 0, (res.returncode, res.stdout[-2000:], res.stderr[-2000:])
    return res


def fake_token(seed: int = 1) -> str:
    """A GitHub-shaped token made at run time: no file holds anything that looks live."""
    rng = random.Random(seed)
    return "gh" + "p_" + "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(36))


@pytest.fixture(scope="module")
def example_made_by_the_cli(tmp_path_factory):
    r = tmp_path_factory.mktemp("holes") / "r"
    ok(run_memcli("init", r, "--example"))
    return r


@pytest.fixture
def ex(tmp_path, example_made_by_the_cli):
    """A root with the example memories, made by the real CLI (once, then copied)."""
    r = tmp_path / "r"
    shutil.copytree(example_made_by_the_cli, r, symlinks=True)
    return r


def configure(root: Path, text: str) -> None:
    (root / "memcli.yaml").write_text(text, encoding="utf-8")


def index_text(root: Path) -> str:
    return (root / "MEMORY.md").read_text(encoding="utf-8")


def entry_lines(root: Path) -> list[str]:
    return [ln for ln in index_text(root).splitlines() if "→ memory/" in ln]


def detail(root: Path, memory_id: str) -> str:
    return (root / "memory" / f"{memory_id}.md").read_text(encoding="utf-8")


def committed_text(root: Path) -> str:
    """Everything under memory/ and MEMORY.md: what a `git commit` of the root would publish."""
    parts = [index_text(root)]
    for p in sorted((root / "memory").rglob("*")):
        if p.is_file():
            parts.append(p.name + "\n" + p.read_text(encoding="utf-8", errors="replace"))
    return "\n".join(parts)


def today() -> str:
    return dt.datetime.now(dt.timezone.utc).date().isoformat()


def write_file(path: Path, text: str, mode: int | None = None) -> Path:
    path.write_text(text, encoding="utf-8")
    if mode is not None:
        path.chmod(mode)
    return path


def wait_for(path: Path, seconds: float = 15) -> None:
    end = time.monotonic() + seconds
    while not path.exists():
        assert time.monotonic() < end, f"{path} never appeared"
        time.sleep(0.02)


def named_files(text: str, root: Path) -> list[Path]:
    """Files that a message names, as absolute paths or relative to the root."""
    found = []
    for word in re.findall(r"[^\s'\"`()]+", text):
        word = word.rstrip(".,;:")
        for p in (Path(word), root / word):
            try:
                if p.is_file():
                    found.append(p)
            except OSError:
                pass
    return found


# =============================================================================== data loss

# An editor that reads the file, waits until the test says go, then writes its buffer back
# with one more line: what vi or an IDE does while someone else changes the file.
SLOW_EDITOR = """#!/bin/sh
d="{d}"
cp "$1" "$d/buffer"
touch "$d/started"
i=0
while [ ! -f "$d/go" ] && [ $i -lt 300 ]; do sleep 0.05; i=$((i+1)); done
printf '\\nEDITOR-LINE\\n' >> "$d/buffer"
cp "$d/buffer" "$1"
"""


def test_01_edit_loses_nothing_made_meanwhile(ex, tmp_path):
    """`edit` while `update -s NEW --append APPENDED` runs: nothing is lost either way.

    Expected: the change made meanwhile is detected. A clean three-way merge keeps both (exit 0);
    otherwise `edit` exits 4 and saves the editor's text in a file its message names, while the
    update stays in the detail file. An update that could not get the lock (exit 3) is fine:
    it wrote nothing."""
    configure(ex, "lock_timeout: 1s\n")
    d = tmp_path / "ed"
    d.mkdir()
    editor = write_file(tmp_path / "slow-editor.sh", SLOW_EDITOR.format(d=d), 0o755)
    env = child_env()
    env["EDITOR"] = str(editor)
    p = subprocess.Popen(
        [sys.executable, "-m", "memcli", "--root", str(ex), "edit", "mysql-charset"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        wait_for(d / "started")
        up = mc(ex, "update", "mysql-charset", "-s", "NEW-SUMMARY", "--append", "APPENDED-LINE")
    finally:
        (d / "go").touch()
        out, err = p.communicate(timeout=60)
    text = detail(ex, "mysql-charset")
    if up.returncode == 0:
        assert "NEW-SUMMARY" in text and "APPENDED-LINE" in text, "the update made meanwhile was lost"
        assert "summary was: set utf8mb4" in text, "the History entry was lost"
    else:
        assert up.returncode == 3, up.stderr
    if p.returncode == 0:
        assert "EDITOR-LINE" in text
    else:
        assert p.returncode == 4, err
        assert any("EDITOR-LINE" in f.read_text(encoding="utf-8") for f in named_files(err, ex)), err


def test_02_write_limits_match_read_limits(ex):
    """A memory memcli could not read back is never written: 10,000 tags or a 13,500-word summary
    is refused with exit 2 and a message naming the limit; no file is written, MEMORY.md unchanged."""
    before = index_text(ex)
    tags = [x for i in range(10_000) for x in ("-t", f"tag{i:05d}")]
    r = mc(ex, "remember", "Many tags", "s", *tags)
    assert r.returncode == 2, r.stderr[-500:]
    assert not (ex / "memory" / "many-tags.md").exists()
    r = mc(ex, "remember", "Long summary", " ".join(["word"] * 13_500))
    assert r.returncode == 2, r.stderr[-500:]
    assert "limit" in r.stderr.lower() or "at most" in r.stderr.lower(), r.stderr[-500:]
    assert not (ex / "memory" / "long-summary.md").exists()
    assert index_text(ex) == before


def test_02_index_line_stays_one_short_line(ex):
    """A 1,600-character summary (within the write limits) is kept whole in the detail file, and
    its MEMORY.md line shows it cut on a word boundary with '…', the line under 300 characters."""
    summary = " ".join(f"word{i}" for i in range(215))
    assert 1400 < len(summary) < 1700
    ok(mc(ex, "remember", "Long summary", summary))
    line = next(ln for ln in entry_lines(ex) if "memory/long-summary.md" in ln)
    assert len(line) < 300 and "…" in line, line
    shown = json.loads(ok(mc(ex, "--json", "show", "long-summary")).stdout)
    assert shown["data"]["summary"] == summary


COMMENTED = """---
id: commented
title: Commented note
# owner: alice (ask before changing)
summary: the old summary
tags:
  - ops   # keep
  - db
type: note
importance: 0.5
pinned: false
---
Body.
"""


def test_03_update_keeps_comments_and_untouched_keys(ex):
    """`update --importance 0.9` changes that key only: a person's `# owner:` comment, the
    inline `# keep` comment and the block list of tags stay exactly as written."""
    write_file(ex / "memory" / "commented.md", COMMENTED)
    ok(mc(ex, "update", "commented", "--importance", "0.9"))
    text = detail(ex, "commented")
    assert "importance: 0.9" in text
    assert "# owner: alice (ask before changing)\n" in text
    assert "tags:\n  - ops   # keep\n  - db\n" in text


def test_04_hand_written_lines_never_empty_the_index(ex):
    """200 hand-written lines in MEMORY.md leave no room. `remember` still saves the memory
    (exit 0), drops no entry that was listed (the pinned one included) and warns naming the
    hand-written lines; `index check` names them too and does not send the user to
    `heartbeat --fix`, which cannot fix them."""
    with open(ex / "MEMORY.md", "a", encoding="utf-8") as f:
        f.write("\n## Call list\n" + "".join(f"- call Bob about box {i}\n" for i in range(200)))
    listed = entry_lines(ex)
    assert any("reply-in-chinese" in ln for ln in listed)
    r = ok(mc(ex, "remember", "Brand new memory", "saved anyway"))
    assert (ex / "memory" / "brand-new-memory.md").exists()
    after = entry_lines(ex)
    assert [ln for ln in listed if ln not in after] == [], "entries were moved out of the index"
    assert "hand-written" in r.stderr.lower(), r.stderr
    chk = mc(ex, "index", "check")
    said = chk.stdout + chk.stderr
    assert "heartbeat --fix" not in said and "hand-written" in said.lower(), said


def test_05_heartbeat_fix_keeps_a_hand_edit_of_an_index_line(ex):
    """A summary changed by hand in MEMORY.md is not reverted without a word: `heartbeat --fix`
    carries it into the detail file (the old summary under ## History), or leaves the line
    alone and reports it naming the memory."""
    old = "set utf8mb4 on the connection, not only the table"
    new = "HAND EDIT use utf8mb4 on every connection"
    write_file(ex / "MEMORY.md", index_text(ex).replace(old, new))
    r = mc(ex, "heartbeat", "--fix")
    assert r.returncode == 0, r.stderr
    det = detail(ex, "mysql-charset")
    if new in det:
        assert old in det, "the old summary is not kept in the History"
    else:
        assert new in index_text(ex), "the hand edit was dropped"
        assert "mysql-charset" in r.stdout, r.stdout


def test_06_broken_session_file_is_skipped_and_recoverable(ex):
    """Broken JSON in .memcli/sessions/default.json: `recall` and `context` still answer from
    the index (exit 0, a warning naming the file); `session clear` recovers (exit 0), moving the
    broken file aside under .memcli/ rather than deleting it; `session add` then works."""
    sess = ex / ".memcli" / "sessions" / "default.json"
    sess.parent.mkdir(parents=True, exist_ok=True)
    write_file(sess, '{"turns": [BROKEN-SESSION')
    r = ok(mc(ex, "recall", "MySQL charset double encoding"))
    assert "mysql-charset" in r.stdout and "default.json" in r.stderr
    ok(mc(ex, "context", "MySQL charset"))
    ok(mc(ex, "session", "clear"))
    kept = [
        p
        for p in (ex / ".memcli").rglob("*")
        if p.is_file() and "BROKEN-SESSION" in p.read_text(encoding="utf-8", errors="replace")
    ]
    assert kept, "the broken session file was deleted, not moved aside"
    ok(mc(ex, "session", "add", "user", "hello again"))


def test_06_oversized_scope_file_is_skipped_and_recoverable(ex):
    """A scope file past the 10 MB read limit (here one written by an older version): `recall`
    answers from the index with a warning; `scope end` recovers, moving the file aside;
    `scope set` then works."""
    sc = ex / ".memcli" / "scopes" / "default.json"
    sc.parent.mkdir(parents=True, exist_ok=True)
    keys = {
        f"k{i}": {"value": "v" * 1_000_000, "agent": "a", "time": "2026-11-30T00:00:00Z", "writers": ["a"], "writes": 1}
        for i in range(11)
    }
    write_file(
        sc,
        json.dumps(
            {
                "version": 1,
                "name": "default",
                "task": "big",
                "started": "2026-11-30T00:00:00Z",
                "keys": keys,
                "log": [],
                "collisions": [],
            }
        ),
    )
    r = ok(mc(ex, "recall", "MySQL charset double encoding"))
    assert "mysql-charset" in r.stdout and "default.json" in r.stderr
    ok(mc(ex, "scope", "end"))
    assert any(p.is_file() and p.stat().st_size > 10_000_000 for p in (ex / ".memcli").rglob("*")), (
        "the oversized scope file was deleted, not moved aside"
    )
    ok(mc(ex, "scope", "set", "k", "v", "--agent", "a"))


def test_06_assistant_turns_fold_too(ex):
    """With session.max_rounds 1, five assistant turns in a row leave at most 2 raw turns (2 per
    round); the rest are folded into the summary and the episode log."""
    configure(ex, "session:\n  max_rounds: 1\n")
    for i in range(5):
        ok(mc(ex, "session", "add", "assistant", f"answer number {i}"))
    data = json.loads(ok(mc(ex, "--json", "session", "show")).stdout)["data"]
    assert len(data["turns"]) <= 2, len(data["turns"])
    assert "answer number 0" in (ex / "memory" / "episodes" / f"{today()}.md").read_text(encoding="utf-8")


def test_06_refused_scope_writes_do_not_grow_the_file_forever(ex):
    """The scope's log of writes is bounded: a scope whose log already holds 20,000 refused
    writes does not grow when one more is refused (exit 4)."""
    ok(mc(ex, "scope", "set", "k", "v", "--agent", "a"))
    sc = ex / ".memcli" / "scopes" / "default.json"
    data = json.loads(sc.read_text(encoding="utf-8"))
    entry = {"time": "2026-11-30T00:00:00Z", "agent": "b", "key": "k", "action": "refused"}
    data["log"] += [entry] * 20_000
    data["collisions"] += [{**entry, "owner": "a", "old": "v", "new": "w", "forced": False}] * 20_000
    write_file(sc, json.dumps(data))
    size = sc.stat().st_size
    assert mc(ex, "scope", "set", "k", "w", "--agent", "b").returncode == 4
    assert sc.stat().st_size <= size


def test_06_episode_log_rolls_over(ex):
    """When today's episode log is past the 10 MB read limit, a folding `session add` succeeds
    and the folded turns go to a new episode file; the big one is left as it was."""
    big = ex / "memory" / "episodes" / f"{today()}.md"
    write_file(big, f"# Episodes {today()}\n\n" + ("lorem ipsum dolor sit amet\n" * 380_000))
    size = big.stat().st_size
    assert size > 10_000_000
    configure(ex, "session:\n  max_rounds: 1\n")
    for i in range(3):
        ok(mc(ex, "session", "add", "user", f"question FOLD-{i}"))
    assert big.stat().st_size == size
    logs = [p for p in (ex / "memory" / "episodes").iterdir() if p != big]
    assert any("FOLD-0" in p.read_text(encoding="utf-8") for p in logs)


def test_07_edit_and_forget_work_on_a_broken_file(ex, tmp_path):
    """A detail file broken by hand (an unclosed frontmatter fence) can be repaired with `edit`
    (the editor opens it; once fixed, exit 0 and its index line is back) and removed with
    `forget --yes` (exit 0, file gone)."""
    broken = (
        "---\nid: mysql-charset\ntitle: MySQL charset double encoding\nsummary: fixed by hand\n\nno closing fence\n"
    )
    write_file(ex / "memory" / "mysql-charset.md", broken)
    fixer = write_file(
        tmp_path / "fix.sh",
        "#!/bin/sh\nprintf -- '---\\ntitle: Repaired charset note\\n"
        'summary: fixed by hand\\n---\\nBody.\\n\' > "$1"\n',
        0o755,
    )
    r = mc(ex, "edit", "mysql-charset", env={"EDITOR": str(fixer)})
    assert r.returncode == 0, r.stderr
    assert any("Repaired charset note" in ln for ln in entry_lines(ex))
    write_file(ex / "memory" / "staging-deploy.md", broken)
    ok(mc(ex, "forget", "staging-deploy", "--yes"))
    assert not (ex / "memory" / "staging-deploy.md").exists()


def _archive(ex):
    ok(mc(ex, "remember", "Old promo", "the autumn promo code", "--expires", "2020-01-01"))
    ok(mc(ex, "heartbeat", "--fix"))
    assert (ex / "memory" / "archive" / "old-promo.md").exists()


def test_08_unexpiring_an_archived_memory_brings_it_back(ex):
    """`update old-promo --expires never` on an archived memory moves it back to memory/ (exit 0):
    `list` shows it again and recall finds it."""
    _archive(ex)
    ok(mc(ex, "update", "old-promo", "--expires", "never"))
    assert (ex / "memory" / "old-promo.md").exists()
    assert not (ex / "memory" / "archive" / "old-promo.md").exists()
    assert "old-promo" in ok(mc(ex, "list")).stdout


def test_08_restore_brings_an_archived_memory_back(ex):
    """`memcli restore old-promo` moves it back to memory/ with its expiry cleared (exit 0)."""
    _archive(ex)
    ok(mc(ex, "restore", "old-promo"))
    assert (ex / "memory" / "old-promo.md").exists()
    assert "old-promo" in ok(mc(ex, "list")).stdout


def test_08_remember_with_a_past_expiry_warns(ex):
    """`remember --expires 2020-01-01` saves the memory (exit 0) and warns that the date has passed."""
    r = ok(mc(ex, "remember", "Already over", "s", "--expires", "2020-01-01"))
    assert "warning" in r.stderr.lower() and "2020-01-01" in r.stderr, r.stderr


# =============================================================================== leaks and trust


def test_09_a_secret_id_is_refused(ex):
    """`remember t s --id <token>` is refused (exit 4) like a secret in the text; nothing written."""
    token = fake_token()
    r = mc(ex, "remember", "t", "s", "--id", token)
    assert r.returncode == 4, r.stderr
    assert token not in committed_text(ex)


def test_09_a_secret_in_body_frontmatter_is_refused(ex, tmp_path):
    """A body file whose frontmatter holds `api_token: <token>` is refused (exit 4); nothing written."""
    token = fake_token(2)
    body = write_file(tmp_path / "b.md", f"---\napi_token: {token}\n---\nBody text.\n")
    r = mc(ex, "remember", "Body with key", "s", "--body-file", body)
    assert r.returncode == 4, r.stderr
    assert token not in committed_text(ex)


def test_09_a_secret_in_a_session_turn_never_reaches_the_episode_log(ex):
    """A turn holding a token is refused when added (exit 4, write.secrets: refuse), and after
    enough turns to fold, no committed file holds it."""
    configure(ex, "session:\n  max_rounds: 1\n")
    token = fake_token(3)
    r = mc(ex, "session", "add", "user", f"my token is {token}")
    assert r.returncode == 4, r.stderr
    for i in range(3):
        ok(mc(ex, "session", "add", "user", f"question {i}"))
    assert token not in committed_text(ex)


def test_09_a_secret_in_a_scope_never_reaches_the_episode_log(ex):
    """A token as a scope value, a key, an agent or a task is refused (exit 4); after
    `scope end`, no committed file holds it."""
    token = fake_token(4)
    assert mc(ex, "scope", "start", f"deploy with {token}").returncode == 4
    ok(mc(ex, "scope", "start", "deploy"))
    assert mc(ex, "scope", "set", "k", token, "--agent", "a").returncode == 4
    assert mc(ex, "scope", "set", token, "v", "--agent", "a").returncode == 4
    assert mc(ex, "scope", "set", "k2", "v", "--agent", token).returncode == 4
    ok(mc(ex, "scope", "end"))
    assert token not in committed_text(ex)


def test_09_a_secret_typed_in_edit_is_refused(ex, tmp_path):
    """The editor adds a token: `edit` exits 4, the detail file is back to what it was, and the
    editor's text is kept outside the committed files at a path the message names."""
    token = fake_token(5)
    before = detail(ex, "mysql-charset")
    editor = write_file(tmp_path / "typist.sh", f"#!/bin/sh\nprintf '\\ntoken {token}\\n' >> \"$1\"\n", 0o755)
    r = mc(ex, "edit", "mysql-charset", env={"EDITOR": str(editor)})
    assert r.returncode == 4, r.stderr
    assert detail(ex, "mysql-charset") == before
    assert token not in committed_text(ex)
    assert any(token in f.read_text(encoding="utf-8") for f in named_files(r.stderr, ex)), r.stderr


SUMMARIZER_YAML = 'session:\n  max_rounds: 1\n  summarizer: "touch {marker}; echo a summary"\n'


def _fold(ex):
    for i in range(3):
        ok(mc(ex, "session", "add", "user", f"question {i}"))


def test_10_a_committed_memcli_yaml_runs_no_command(ex, tmp_path):
    """session.summarizer in memcli.yaml (a file that arrives with `git clone`) is ignored with a
    warning until `memcli trust` records the file locally; after trust it runs, and after the
    file changes it is ignored again."""
    marker = tmp_path / "pwned.txt"
    configure(ex, SUMMARIZER_YAML.format(marker=marker))
    outs = [ok(mc(ex, "session", "add", "user", f"question {i}")) for i in range(3)]
    assert not marker.exists(), "a committed memcli.yaml ran a command"
    assert any("trust" in r.stderr for r in outs), [r.stderr for r in outs]
    ok(mc(ex, "trust"))
    _fold(ex)
    assert marker.exists(), "a trusted summarizer did not run"
    marker.unlink()
    configure(ex, SUMMARIZER_YAML.format(marker=marker) + "# changed\n")
    _fold(ex)
    assert not marker.exists(), "a changed memcli.yaml kept its trust"


def test_10_summarizer_from_local_configuration_runs(ex, tmp_path):
    """A summarizer from local, never-committed configuration runs without a trust step:
    .memcli/config.yaml, the user's ~/.config/memcli/config.yaml, or MEMCLI_SUMMARIZER."""
    configure(ex, "session:\n  max_rounds: 1\n")
    local = tmp_path / "local.txt"
    write_file(ex / ".memcli" / "config.yaml", f'session:\n  summarizer: "touch {local}; echo s"\n')
    _fold(ex)
    assert local.exists()
    (ex / ".memcli" / "config.yaml").unlink()
    user = tmp_path / "user.txt"
    cfg = Path(os.environ["HOME"]) / ".config" / "memcli" / "config.yaml"
    cfg.parent.mkdir(parents=True)
    write_file(cfg, f'session:\n  summarizer: "touch {user}; echo s"\n')
    _fold(ex)
    assert user.exists()
    cfg.unlink()
    env_marker = tmp_path / "env.txt"
    for i in range(3):
        ok(mc(ex, "session", "add", "user", f"q {i}", env={"MEMCLI_SUMMARIZER": f"touch {env_marker}; echo s"}))
    assert env_marker.exists()


def test_11_a_slow_summarizer_does_not_block_other_writers(ex, tmp_path):
    """A summarizer slower than lock_timeout does not make other writers fail: `remember` during
    a folding `session add` succeeds at once (exit 0), and the session add succeeds too."""
    started, go = tmp_path / "started", tmp_path / "go"
    # the summarizer runs until the test says go (at most 15 s): longer than lock_timeout, and
    # still running while `remember` writes
    cmd = (
        f"touch {started}; i=0; while [ ! -f {go} ] && [ $i -lt 300 ]; do sleep 0.05; i=$((i+1)); done; echo a summary"
    )
    configure(ex, f'lock_timeout: 0.3s\nsession:\n  max_rounds: 1\n  summarizer: "{cmd}"\n')
    env = {"MEMCLI_SUMMARIZER": cmd}
    ok(mc(ex, "session", "add", "user", "first question", env=env))
    assert not started.exists()
    e = child_env() | env
    p = subprocess.Popen(
        [sys.executable, "-m", "memcli", "--root", str(ex), "session", "add", "user", "second"],
        env=e,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        wait_for(started)
        r = mc(ex, "remember", "Written meanwhile", "while the summarizer runs")
        assert p.poll() is None, "the summarizer was not running while remember wrote"
    finally:
        go.touch()
        out, err = p.communicate(timeout=60)
    assert p.returncode == 0, err
    assert r.returncode == 0, r.stderr


ESC_TITLE = "Evil \x1b]0;PWNED\x07 title \x1b[2J end"


def _plant_escape(ex):
    write_file(
        ex / "memory" / "evil.md",
        f'---\ntitle: "{ESC_TITLE.encode("unicode_escape").decode()}"\n'
        'summary: "clears \\e[2J the screen"\ntags: [evil]\n---\n'
        "Body with \x1b[31mred\x1b[0m and a bell \x07 and \x9b2J.\n",
    )


def _raw_controls(text: str) -> list[str]:
    return sorted({repr(c) for c in text if (ord(c) < 32 and c not in "\n\t") or 0x7F <= ord(c) <= 0x9F})


def test_12_control_characters_never_reach_the_terminal(ex):
    """Titles, summaries, bodies, ids, scope keys and agent names holding ESC, BEL or C1 controls
    are printed escaped by `list`, `show`, `recall`, `scope` and every error: no raw control
    character on stdout or stderr (newline and tab aside). JSON output escapes them too."""
    _plant_escape(ex)
    ok(mc(ex, "index", "rebuild"))
    runs = [
        mc(ex, "list"),
        mc(ex, "show", "evil"),
        mc(ex, "recall", "PWNED evil title"),
        mc(ex, "--json", "show", "evil"),
        mc(ex, "--json", "list"),
        mc(ex, "scope", "set", "key\x1b]0;X\x07", "v", "--agent", "ag\x1b[2J"),
        mc(ex, "scope", "show"),
        mc(ex, "scope", "check"),
        mc(ex, "show", "no\x1b[2Jsuch"),
        mc(ex, "recall", "nothing \x1b[2J here at all zzzq"),
    ]
    assert "evil" in runs[0].stdout and "PWNED" in runs[1].stdout
    for r in runs:
        assert _raw_controls(r.stdout) == [] and _raw_controls(r.stderr) == [], (r.args, r.stdout, r.stderr)


@pytest.mark.parametrize(
    "args",
    [
        ("remember", "Evil \x1b]0;PWNED\x07", "s"),
        ("remember", "Bell title", "summary \x1b[2J"),
        ("remember", "Tagged", "s", "-t", "a\x1b[2J"),
        ("remember", "Aliased", "s", "-a", "a\x07"),
        ("remember", "With id", "s", "--id", "id\x07x"),
        ("scope", "set", "key\x1b[2J", "v", "--agent", "a"),
        ("scope", "set", "key", "v", "--agent", "a\x07"),
        ("scope", "start", "task \x1b]0;X\x07"),
        ("session", "add", "user", "turn \x1b[2J text"),
    ],
    ids=["title", "summary", "tag", "alias", "id", "scope-key", "agent", "task", "turn"],
)
def test_12_control_characters_are_refused_on_input(ex, args):
    """A control character (C0 other than tab and newline, DEL, C1) in a title, summary, tag,
    alias, id, scope key, agent name, task or turn is refused with exit 2; nothing is written."""
    before = committed_text(ex)
    r = mc(ex, *args)
    assert r.returncode == 2, (r.returncode, r.stderr)
    assert committed_text(ex) == before
    assert not list((ex / ".memcli" / "scopes").glob("*.json"))


def test_12_heartbeat_reports_control_characters(ex):
    """A detail file edited by hand to hold ESC or BEL gets a heartbeat finding naming the file
    and the line, with a fix."""
    _plant_escape(ex)
    data = json.loads(mc(ex, "--json", "heartbeat").stdout)["data"]
    hits = [f for f in data["findings"] if f["path"] == "memory/evil.md" and "control" in f["message"].lower()]
    assert hits and all(f["line"] for f in hits), data["findings"]


# =============================================================================== wrong or stale answers


def _same_size_edit(path: Path, old: str, new: str) -> None:
    """Change the text in place, same size, and put the modification time back."""
    assert len(old.encode()) == len(new.encode())
    st = path.stat()
    text = path.read_text(encoding="utf-8")
    with open(path, "r+", encoding="utf-8") as f:
        f.write(text.replace(old, new))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert path.stat().st_size == st.st_size and path.stat().st_mtime_ns == st.st_mtime_ns


def test_14_search_cache_sees_a_same_size_edit_with_mtime_restored(ex):
    """A body word changed in place at the same size with the mtime put back is found by the
    next `recall` (the fingerprint includes the inode change time)."""
    path = ex / "memory" / "staging-deploy.md"
    ok(mc(ex, "recall", "--layer", "details", "migrations rollback staging"))
    body = path.read_text(encoding="utf-8")
    assert "migrations" in body
    _same_size_edit(path, "migrations", "zyxwquorvk")
    r = mc(ex, "--json", "recall", "--layer", "details", "zyxwquorvk")
    hits = json.loads(r.stdout)["data"]["hits"]
    assert any(h["id"] == "staging-deploy" for h in hits), hits


def test_14_heartbeat_cache_sees_a_same_size_edit_with_mtime_restored(ex):
    """After an all-clear heartbeat, a token written in place at the same size with the mtime put
    back is reported by the next heartbeat."""
    path = ex / "memory" / "staging-deploy.md"
    ok(mc(ex, "heartbeat"))
    text = path.read_text(encoding="utf-8")
    token = fake_token(6)
    start = text.index("\n---\n") + 5
    old = text[start : start + len(token)]
    assert old.isascii()
    _same_size_edit(path, old, token)
    data = json.loads(mc(ex, "--json", "heartbeat").stdout)["data"]
    assert any(f["code"] == "secret" and f["path"] == "memory/staging-deploy.md" for f in data["findings"]), data[
        "findings"
    ]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="counts inotify watches in /proc")
def test_15_watch_observes_only_the_memory_files(ex):
    """With 1,000 folders elsewhere under the root, `watch` sets fewer than 50 inotify watches
    (MEMORY.md, memory/ and memcli.yaml only) and still reports an edit to a memory file."""
    for i in range(1000):
        (ex / "src" / f"d{i // 100}" / f"e{i}").mkdir(parents=True)
    env = child_env()
    p = subprocess.Popen(
        [sys.executable, "-m", "memcli", "--root", str(ex), "watch", "--json", "--debounce", "0.1s"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    lines: queue.Queue = queue.Queue()
    threading.Thread(target=lambda: [lines.put(ln) for ln in p.stdout], daemon=True).start()

    def next_event(deadline):
        try:
            return json.loads(lines.get(timeout=max(deadline - time.monotonic(), 0.01)))
        except queue.Empty:
            return None

    seen, watches = False, 0
    try:
        deadline = time.monotonic() + 30
        while (ev := next_event(deadline)) is not None and ev.get("event") != "ready":
            pass
        assert ev is not None, "watch never got ready"  # it says so once its watches are set
        path = ex / "memory" / "staging-deploy.md"
        path.write_text(path.read_text(encoding="utf-8") + "\nOne more line.\n", encoding="utf-8")
        deadline = time.monotonic() + 15
        while not seen and (ev := next_event(deadline)) is not None:
            seen = ev.get("path") == "memory/staging-deploy.md"
        for fd in os.listdir(f"/proc/{p.pid}/fdinfo"):
            try:
                watches += Path(f"/proc/{p.pid}/fdinfo/{fd}").read_text().count("inotify wd:")
            except OSError:
                pass
    finally:
        p.terminate()
        p.wait(timeout=30)
    assert seen, "the edit was never reported"
    assert watches < 50, f"{watches} inotify watches"


def test_16_body_file_frontmatter_gives_its_keys(ex, tmp_path):
    """A --body-file whose frontmatter says type lesson, importance 0.9, pinned, expires and
    source gives those keys to the memory (what README promises)."""
    body = write_file(
        tmp_path / "b.md",
        "---\ntype: lesson\nimportance: 0.9\npinned: true\nexpires: 2099-01-31\n"
        "source: the postmortem\n---\nWhat we learned.\n",
    )
    ok(mc(ex, "remember", "From a file", "s", "--body-file", body))
    d = json.loads(ok(mc(ex, "--json", "show", "from-a-file")).stdout)["data"]
    assert (d["type"], d["importance"], d["pinned"], d["expires"], d["source"]) == (
        "lesson",
        0.9,
        True,
        "2099-01-31",
        "the postmortem",
    )


@pytest.mark.parametrize(
    "key,line",
    [
        ("importance", "importance: high"),
        ("type", "type: thought"),
        ("id", "id: some-other-id"),
        ("title", 'title: ""'),
    ],
)
def test_17_invalid_hand_edits_are_reported(ex, key, line):
    """`importance: high`, `type: thought`, an `id:` that is not the file name and a blank
    `title:` each get a heartbeat finding on that file and line, naming the key, with a fix."""
    path = ex / "memory" / "mysql-charset.md"
    text = path.read_text(encoding="utf-8")
    text = re.sub(rf"^{key}:.*$", line, text, count=1, flags=re.M)
    write_file(path, text)
    n = text.splitlines().index(line) + 1
    data = json.loads(mc(ex, "--json", "heartbeat").stdout)["data"]
    hits = [
        f
        for f in data["findings"]
        if f["path"] == "memory/mysql-charset.md" and f["line"] == n and key in f["message"] and f["fix"]
    ]
    assert hits, data["findings"]


def test_18_recall_limit_zero_is_bad_usage(ex):
    """`recall -k 0` is bad usage (exit 2), like `-k -1`."""
    assert mc(ex, "recall", "-k", "0", "mysql").returncode == 2
    assert mc(ex, "recall", "--limit", "0", "mysql").returncode == 2


def test_18_update_without_change_says_unchanged(ex):
    """`update ID` with nothing to change, or with `--untag` of a tag it does not have, says
    "unchanged" (stderr; action "unchanged" in JSON, with a warning naming the unknown tag)."""
    r = ok(mc(ex, "update", "mysql-charset"))
    assert "unchanged" in r.stderr, r.stderr
    d = json.loads(ok(mc(ex, "--json", "update", "mysql-charset", "--untag", "nosuchtag")).stdout)
    assert d["data"]["action"] == "unchanged" and any("nosuchtag" in w for w in d["warnings"]), d


def test_18_blank_summary_is_refused_like_a_blank_title(ex):
    """`update -s ""` is refused (exit 2) like `--title ""`; the summary stays."""
    assert mc(ex, "update", "mysql-charset", "--title", "").returncode == 2
    assert mc(ex, "update", "mysql-charset", "-s", "").returncode == 2
    assert "summary: set utf8mb4" in detail(ex, "mysql-charset")


def test_18_titles_without_letters_get_distinct_ids(ex):
    """Two titles with no letters or digits (`!!!`, `???`) are both saved (exit 0) under
    different ids."""
    a = ok(mc(ex, "remember", "!!!", "first")).stdout.strip()
    b = ok(mc(ex, "remember", "???", "second")).stdout.strip()
    assert a and b and a != b


def test_18_a_huge_query_is_not_echoed_whole(ex):
    """A 1 MB query with no hit: exit 1 and a 'nothing found' line of at most 300 characters."""
    r = mc(ex, "recall", "-", input=("zq" * 500_000))
    assert r.returncode == 1
    assert len(r.stderr) <= 300, len(r.stderr)


def test_18_trace_log_is_rotated(ex):
    """.memcli/trace.jsonl never passes 10 MB: past that, the next recall moves it aside
    (trace.jsonl.1, replacing an older one) and starts a new one."""
    trace = ex / ".memcli" / "trace.jsonl"
    line = json.dumps({"time": "2026-11-30T00:00:00Z", "query": "q", "layer": "index", "ids": ["mysql-charset"]})
    write_file(trace, (line + "\n") * (10_500_000 // (len(line) + 1)))
    assert trace.stat().st_size > 10_000_000
    ok(mc(ex, "recall", "MySQL charset double encoding"))
    assert trace.stat().st_size < 1_000_000


def test_18_init_inside_a_memory_folder_is_refused(tmp_path):
    """`memcli init outer/memory` when outer is a root: exit 2 and nothing created there."""
    ok(run_memcli("init", tmp_path / "outer"))
    r = run_memcli("init", tmp_path / "outer" / "memory")
    assert r.returncode == 2, r.stderr
    assert not (tmp_path / "outer" / "memory" / "MEMORY.md").exists()


def test_18_memory_on_a_missing_folder_creates_nothing(tmp_path):
    """`Memory(path)` on a folder that is not a root raises NotARootError on first use and creates
    nothing: no half-made root without .gitignore."""
    typo = tmp_path / "typo"
    code = (
        "import sys\nfrom memcli import Memory\nfrom memcli.errors import NotARootError\n"
        f"try:\n    Memory({str(typo)!r}).remember('t', 's')\nexcept NotARootError:\n    sys.exit(7)\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert r.returncode == 7, r.stderr
    assert not typo.exists()
