"""Every error honours --json: Click's usage errors go through the one error boundary too.

Each case runs as a real process and through `memcli.cli.main` in-process."""

import json

import pytest

from tests.conftest import invoke, run_memcli

ENVELOPE_KEYS = {"version", "command", "ok", "data", "warnings", "error"}

CASES = [
    (["--json", "remember"], "remember", "Missing argument 'TITLE'."),
    (["remember", "--json"], "remember", "Missing argument 'TITLE'."),
    (["--json", "remember", "t", "s", "-i", "abc"], "remember", "'abc' is not a valid float"),
    (["--json", "frobnicate"], "", "No such command 'frobnicate'."),
    (["--json", "recall", "q", "--bogus"], "recall", "No such option '--bogus'."),
    (["--json", "context", "q", "--budget", "abc"], "context", "'abc' is not a valid integer"),
    (["--json", "index", "bogus"], "index", "No such command 'bogus'."),
    (["--json", "index"], "index", "Missing command."),
    (["--json", "scope", "set", "k", "v"], "scope set", "Missing option '--agent'."),
    (["--json", "recall", "q", "--threshold", "x"], "recall", "'x' is not a valid float"),
]


def _one_envelope(stdout: str) -> dict:
    lines = stdout.splitlines()
    assert len(lines) == 1, stdout
    env = json.loads(lines[0])
    assert set(env) == ENVELOPE_KEYS
    return env


@pytest.mark.parametrize("args,command,message", CASES, ids=[" ".join(c[0]) for c in CASES])
def test_usage_errors_give_one_envelope_in_process(args, command, message):
    res = invoke(args)
    assert res.exit_code == 2, res.output
    env = _one_envelope(res.stdout)
    assert env["ok"] is False and env["command"] == command and env["data"] is None and env["warnings"] == []
    assert env["error"]["code"] == "usage" and message in env["error"]["message"]
    assert res.stderr == ""


@pytest.mark.parametrize("args,command,message", CASES[:7], ids=[" ".join(c[0]) for c in CASES[:7]])
def test_usage_errors_give_one_envelope_from_a_process(args, command, message):
    res = run_memcli(*args)
    assert res.returncode == 2, res.stderr
    env = _one_envelope(res.stdout)
    assert (env["ok"], env["command"], env["error"]["code"]) == (False, command, "usage")
    assert message in env["error"]["message"] and res.stderr == ""


def test_the_usage_error_envelope_is_pinned():
    res = invoke(["--json", "remember"])
    assert json.loads(res.stdout) == {
        "version": 1,
        "command": "remember",
        "ok": False,
        "data": None,
        "warnings": [],
        "error": {"code": "usage", "message": "Missing argument 'TITLE'."},
    }


@pytest.mark.parametrize("args", [["--json", "--version"], ["--version", "--json"]])
def test_version_as_an_envelope(args):
    from memcli import __version__

    for res in (invoke(args), run_memcli(*args)):
        code = getattr(res, "exit_code", getattr(res, "returncode", None))
        assert code == 0
        assert json.loads(res.stdout) == {
            "version": 1,
            "command": "version",
            "ok": True,
            "data": {"version": __version__},
            "warnings": [],
            "error": None,
        }


def test_version_through_typer_honours_json(tmp_path):
    res = invoke(["--json", "--root", str(tmp_path), "--version"])
    assert res.exit_code == 0 and json.loads(res.stdout)["data"]["version"]
    assert invoke(["--version"]).stdout.startswith("memcli ")


@pytest.mark.parametrize(
    "args", [["remember"], ["recall", "q", "--bogus"], ["frobnicate"], ["context", "q", "--budget", "abc"]]
)
def test_usage_errors_are_plain_text_on_a_pipe(args):
    res = run_memcli(*args)
    assert res.returncode == 2 and res.stdout == ""
    first, *rest = res.stderr.splitlines()
    assert first.startswith("memcli: error: ")
    assert not set("╭╮╰╯│─") & set(res.stderr), res.stderr
    assert rest and rest[0].strip().startswith("Usage: memcli")


def test_did_you_mean_is_said_once():
    for res in (invoke(["lst"]), run_memcli("lst")):
        assert res.stderr.count("Did you mean") == 1 and "'list'" in res.stderr
    env = json.loads(invoke(["--json", "sesion", "show"]).stdout)
    assert env["error"]["message"].count("Did you mean") == 1


def test_help_and_no_arguments_still_work():
    res = invoke(["--help"])
    assert res.exit_code == 0 and "Usage" in res.stdout
    res = invoke([])
    assert res.exit_code == 2 and "Usage" in res.stdout  # help, as a bare `git` does
