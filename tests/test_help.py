"""Help and messages: every command ends its help with an example, ids read ID, required
options are marked, counts agree with their nouns, and the small refusals say what they mean."""

import json
import os
import re
import subprocess
import sys

import pytest

from memcli import render
from memcli.core import Memory
from tests.conftest import invoke, run_memcli


def all_commands():
    """Every command path of the app, sub-apps and commands registered later included."""
    from memcli.cli.typer_app import command

    out = []

    def walk(cmd, path):
        out.append(path)
        for name, sub in sorted(getattr(cmd, "commands", {}).items()):
            if not sub.hidden:
                walk(sub, path + [name])

    walk(command().every(), [])
    return out


COMMANDS = all_commands()


def paragraphs(text: str) -> list:
    return [p.strip() for p in re.split(r"\n[ \t]*\n", text) if p.strip()]


@pytest.mark.parametrize("path", COMMANDS, ids=[" ".join(p) or "memcli" for p in COMMANDS])
def test_help_ends_with_an_example(path):
    res = invoke([*path, "--help"])
    assert res.exit_code == 0, res.output
    last = paragraphs(res.stdout)[-1]
    assert last.startswith("Example:") and "memcli" in last, f"{' '.join(path)}: {last!r}"
    assert "id_" not in res.stdout


def test_every_command_is_walked():
    walked = {" ".join(p) for p in COMMANDS}
    assert {"recall", "scope set", "index check", "session add", "heartbeat", "watch", "trust"} <= walked


@pytest.mark.parametrize("cmd", ["show", "update", "edit", "forget"])
def test_positional_ids_read_ID(cmd):
    out = invoke([cmd, "--help"]).stdout
    assert f"memcli {cmd} [OPTIONS] ID" in out and "id_" not in out


def test_required_options_are_marked():
    out = invoke(["scope", "set", "--help"]).stdout
    row = next(line for line in out.splitlines() if "--agent" in line)
    assert "*" in row and "[required]" in row


def test_recall_help_names_the_registry_layers_and_threshold():
    from memcli.recall.registry import help_text

    out = " ".join(invoke(["recall", "--help"]).stdout.split())
    assert " ".join(help_text().split()) in out.replace("│ ", "")
    assert "--threshold" in out


def test_watch_json_help_says_json_lines():
    out = " ".join(invoke(["watch", "--help"]).stdout.split())
    assert "JSON lines" in out


def test_plurals(cli):
    assert cli("session", "add", "user", "hello").stderr == "session default: 1 turn\n"
    assert cli("session", "add", "user", "again").stderr == "session default: 2 turns\n"
    assert render.plural(1, "entry", "entries") == "1 entry" and render.plural(0, "entry", "entries") == "0 entries"
    assert render.plural(1, "file") == "1 file" and render.plural(3, "file") == "3 files"
    assert cli("remember", "Only one", "s").exit_code == 0
    assert cli("index", "rebuild").stdout == "MEMORY.md rebuilt: 1 entry\n"


@pytest.mark.parametrize("extra", [[], ["--json"], ["--threshold", "0.2"]])
def test_deep_with_layer_is_refused(example_root, extra):
    res = invoke(["--root", str(example_root), "recall", "charset", "--deep", "--layer", "index", *extra])
    assert res.exit_code == 2
    if "--json" in extra:
        assert json.loads(res.stdout)["error"]["code"] == "usage"
    else:
        assert "--deep" in res.stderr and "--layer" in res.stderr


def test_threshold(example_root):
    base = ["--root", str(example_root), "recall", "postgres deploy python", "--layer", "index"]
    weak = json.loads(invoke([*base, "--json"]).stdout)["data"]["hits"]
    assert weak and all(h["sure"] == "weak" for h in weak)  # candidates, none sure
    assert invoke([*base, "--strict"]).exit_code == 1  # none reaches the threshold: nothing to inject
    res = invoke([*base, "--threshold", "0", "-k", "2", "--json"])
    assert res.exit_code == 0 and len(json.loads(res.stdout)["data"]["hits"]) == 2
    fast = run_memcli(*base, "--threshold", "0", "-k", "2", "--json")
    assert json.loads(fast.stdout)["data"]["hits"] == json.loads(res.stdout)["data"]["hits"]
    assert invoke([*base, "--threshold", "-1"]).exit_code == 2
    lib = Memory(example_root).recall("postgres deploy python", layer="index", threshold=0, limit=2)
    assert [h.id for h in lib.hits] == [h["id"] for h in json.loads(res.stdout)["data"]["hits"]]


def test_declining_forget_purge_is_not_an_error(cli, root):
    """On a terminal, answering no to `forget --purge` keeps the memory and exits 0."""
    assert cli("remember", "Keep me", "s").exit_code == 0
    master, slave = os.openpty()
    try:
        p = subprocess.Popen(
            [sys.executable, "-m", "memcli", "--root", str(root), "forget", "keep-me", "--purge"],
            stdin=slave,
            stderr=slave,
            stdout=subprocess.PIPE,
            text=True,
        )
        os.write(master, b"n\n")
        out, _ = p.communicate(timeout=60)
        os.close(slave)
        said = b""
        while True:
            try:
                chunk = os.read(master, 4096)
            except OSError:
                break
            if not chunk:
                break
            said += chunk
    finally:
        os.close(master)
    assert p.returncode == 0, said
    assert b"kept keep-me" in said and out == ""
    assert Memory(root).get("keep-me").title == "Keep me"


def test_index_check_and_heartbeat_give_the_same_fix(example_root):
    root = example_root
    (root / "memory" / "mysql-charset.md").write_text("---\ntitle: [unclosed\n---\nbody\n", encoding="utf-8")
    (root / "memory" / "not-text.md").write_bytes(b"\xff\xfe bad")
    index = root / "MEMORY.md"
    index.write_text(index.read_text(encoding="utf-8") + "- **Ghost**: gone | → memory/ghost.md\n", encoding="utf-8")
    problems = Memory(root).check_index()
    codes = set()
    for f in Memory(root).audit().findings:
        if f.code in ("frontmatter-broken", "file-unreadable", "index-missing-file"):
            codes.add(f.code)
            same = [p.message for p in problems if p.path == f.path and f.message in p.message]
            assert same and all(m.endswith(f"({f.fix})") for m in same), (f, problems)
    assert codes == {"frontmatter-broken", "file-unreadable", "index-missing-file"}


def test_an_unreadable_index_gets_the_heartbeats_fix(root):
    (root / "MEMORY.md").write_bytes(b"# MEMORY\n\xff\xfe\n")
    problems = Memory(root).check_index()
    found = [f for f in Memory(root).audit().findings if f.code == "index-unreadable"]
    assert found and problems and problems[0].message.endswith(f"({found[0].fix})")


_REGISTERED = """
import json
from importlib import import_module

from memcli.cli import typer_app

seen, found = set(), {}
for module in dict.fromkeys(typer_app.COMMANDS.values()):
    import_module("memcli.cli." + module)
    names = {name for name, _ in typer_app._infos()}
    found[module], seen = sorted(names - seen), names
print(json.dumps(found))
"""


def test_the_command_table_names_each_commands_module():
    """typer_app.COMMANDS, what the lazy group imports for a command, is what each module registers."""
    import json
    import subprocess
    import sys

    from memcli.cli.typer_app import COMMANDS
    from tests.conftest import child_env

    done = subprocess.run([sys.executable, "-c", _REGISTERED], capture_output=True, text=True, env=child_env())
    found = json.loads(done.stdout)
    assert found == {m: sorted(n for n, where in COMMANDS.items() if where == m) for m in found}, done.stderr
