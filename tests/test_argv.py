"""One argv parser: memcli.cli.argv reads a line as Click reads it (every form, checked against
Click itself), and a line behaves the same through the fast path, the hook and the Typer app."""

import contextlib
import io
import json

import pytest
import typer
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import memcli.cli
from memcli.cli import argv
from memcli.cli.app import command
from memcli.usecases.init import init_root
from tests.conftest import invoke

click = typer.core.click


def clicks(args: list):
    """What Click makes of a line: ("ok", globals, words, params), ("exit", code) for help or the
    version, or ("usage", message)."""
    cmd = command()
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
            ctx = cmd.make_context("memcli", list(args))
            top = dict(ctx.params)
            rest, words, c = [*ctx._protected_args, *ctx.args], [], cmd
            while hasattr(c, "commands"):
                if not rest:
                    raise click.exceptions.UsageError("Missing command.")
                name, c, rest = c.resolve_command(ctx, rest)
                words.append(name)
                ctx = c.make_context(name, rest, parent=ctx)
                rest = [*ctx._protected_args, *ctx.args] if hasattr(c, "commands") else ctx.args
        return "ok", top, tuple(words), dict(ctx.params)
    except click.exceptions.Exit as e:
        return "exit", e.exit_code
    except click.exceptions.UsageError as e:  # its "Did you mean" suggestion is Typer's to add
        return "usage", e.format_message().split(" Did you mean")[0].split(" (Did you mean")[0]


def ours(args: list):
    """The same, from memcli.cli.argv (None: a command the table does not have)."""
    line = argv.parse(args)
    if line.error is not None:
        return "usage", line.error
    if line.help or line.value("version"):
        return "exit", 0
    if line.words is None:
        return None
    names, options = argv.COMMANDS[line.words]
    params = {p.rstrip("!"): d for p, _, d in options.values()}
    params.update((n.rstrip("?"), None) for n in names)
    params.update((k, tuple(v) if isinstance(v, list) else v) for k, v in line.values.items())
    top = {p: line.globals.get(p, d) for p, _, d in argv.GLOBAL.values()}
    return "ok", top, line.words, params


def same_as_click(args: list) -> None:
    mine, theirs = ours(args), clicks(args)
    if mine is None:
        return
    if theirs[0] == "ok":  # Click's defaults: () for a repeatable option, None for a flag's --version
        theirs = (
            "ok",
            {**theirs[1], "version": bool(theirs[1]["version"])},
            theirs[2],
            {k: (None if v == () else v) for k, v in theirs[3].items()},
        )
    assert mine == theirs, args


# Every form a parser of memcli accepted and another refused (the fast path, `--version`'s check,
# the hook's two parsers), and the forms next to them.
FORMS = [
    "--root=R recall charset",
    "--root R recall charset",
    "-- recall charset",
    "--root R -- hook claude-code",
    "--root= recall charset",
    "--root -x recall charset",
    "--json --root=R should-recall hello",
    "--root R --json=1 recall charset",
    "--bogus recall charset",
    "--session=s --scope c session add user hi",
    "--root=R --version",
    "--version --json",
    "--json --version",
    "--version recall --bogus",
    "--version --bogus",
    "-h",
    "recall -h",
    "recall --bogus --help",
    "recall charset --limit=1",
    "recall charset -k1",
    "recall charset -k 1",
    "recall --limit 1 charset",
    "recall charset -kx",
    "recall charset --limit",
    "recall charset --layer -x",
    "recall charset --layer=index",
    "recall charset --deep=1",
    "recall charset --also a --also=b",
    "recall -- --weird",
    "recall -",
    "recall -5",
    "recall",
    "recall a b",
    "recall a b c",
    "recall charset --threshold=0",
    "recall charset --json",
    "should-recall -- -x",
    "remember T S -tfoo -t bar --tag=baz -abc",
    "remember T --body=-",
    "remember T -b-",
    "remember T S --pin=1",
    "remember T S --importance=-0.5",
    "remember T S -i0.7 --pin",
    "remember T S -ibar",
    "scope set k v --agent=A",
    "scope set k v",
    "scope set k --agent A",
    "scope set k v --agent A --force",
    "session add user -",
    "session add user",
    "hook claude-code",
    "--root=R hook claude-code",
    "hook claude-code --budget=500",
    "hook claude-code -b500",
    "hook claude-code -b 500",
    "hook claude-code --budget lots",
    "hook claude-code --root R",
    "hook claude-code --root=R --json",
    "hook claude-code --json=1",
    "hook claude-code --bogus",
    "hook claude-code extra",
    "hook claude-code -- extra",
    "hook claude-code --budget",
    "hook claude-code -b -5",
]


@pytest.mark.parametrize("form", FORMS)
def test_the_parser_reads_a_line_as_click_does(form):
    same_as_click(form.split(" "))


WORDS = ["x", "-", "--", "3", "0.5", "-5", "-h", "--help", "--json", "--json=1", "=", "a=b", ""]


@st.composite
def lines(draw):
    words = draw(st.sampled_from(list(argv.COMMANDS)))
    names, options = argv.COMMANDS[words]
    flags = list(options)
    token = st.one_of(
        st.sampled_from(WORDS),
        st.sampled_from(flags),
        st.tuples(st.sampled_from([f for f in flags if f.startswith("--")]), st.sampled_from(["3", "x", "-", ""])).map(
            "=".join
        ),
        st.tuples(
            st.sampled_from([f for f in flags if not f.startswith("--")] or ["-k"]), st.sampled_from(["3", "x", "h"])
        ).map("".join),
    )
    before = draw(
        st.lists(st.sampled_from(["--root", "R", "--root=R", "--json", "--scope", "s", "--bogus", "--"]), max_size=3)
    )
    return [*before, *words, *draw(st.lists(token, max_size=6))]


@settings(deadline=None)
@given(lines())
def test_any_line_is_read_as_click_reads_it(args):
    same_as_click(args)


# ---- the same line, the same outcome, by every way it can run


def roots(tmp_path, n=2):
    made = []
    for i in range(n):
        made.append(tmp_path / f"r{i}")
        init_root(made[-1], example=True)
    return made


def normalised(stdout: str) -> str:
    try:
        env = json.loads(stdout)
    except ValueError:
        return stdout
    for t in (env.get("data") or {}).get("trace", []) if isinstance(env.get("data"), dict) else []:
        t["ms"] = 0
    import re

    return re.sub(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", "T", json.dumps(env, sort_keys=True))


def without_typer(monkeypatch):
    """The fast path and the hook alone: reaching the Typer app fails the test."""

    def refuse():
        raise AssertionError("reached the Typer app")

    monkeypatch.setattr("memcli.cli.app.command", refuse)


def typer_only(monkeypatch):
    monkeypatch.setattr(memcli.cli.hot, "fast", lambda line: None)
    monkeypatch.setattr(memcli.cli.hot, "hook", lambda args, line, stdin=None: None)


LINES = [  # (a line, R standing for the root; whether it is answered without Typer)
    "--root=R recall charset --json",
    "--root R recall charset --limit=1 --json",
    "--root R recall charset -k1",
    "--root R recall --limit 1 charset",
    "--json --root=R should-recall hello",
    "--root=R recall -- charset",
    "--root R recall charset --layer -x",
    "--root=R --session=s session add user hi --json",
    "--root R remember T S -tfoo --tag=bar --json",
    "--root R scope set k v --agent=A --json",
    "--root R --scope=c scope set k - --agent A",
]


@pytest.mark.parametrize("line", LINES)
def test_fast_path_and_typer_agree_on_every_form(tmp_path, monkeypatch, line):
    fast_root, typer_root = roots(tmp_path)
    with monkeypatch.context() as m:
        without_typer(m)
        fast = invoke(
            [str(fast_root) if w == "R" else w.replace("=R", f"={fast_root}") for w in line.split(" ")],
            input="from stdin",
        )
    typer_only(monkeypatch)
    slow = invoke(
        [str(typer_root) if w == "R" else w.replace("=R", f"={typer_root}") for w in line.split(" ")],
        input="from stdin",
    )
    assert (fast.exit_code, normalised(fast.stdout.replace(str(fast_root), "R")), fast.stderr) == (
        slow.exit_code,
        normalised(slow.stdout.replace(str(typer_root), "R")),
        slow.stderr,
    )


def test_version_after_global_options_needs_no_typer(tmp_path, monkeypatch):
    without_typer(monkeypatch)
    for line in (["--root=x", "--version"], ["--version", "--json"], ["--json", "--version"], ["--version", "recall"]):
        res = invoke(line)
        assert res.exit_code == 0 and "0." in res.stdout
        assert res.stdout.startswith("{") == ("--json" in line)


EVENT = {"prompt": "previously we fixed the mysql charset, what was it?", "session_id": "s1"}
HOOK_LINES = [
    "--root=R hook claude-code",
    "--root R -- hook claude-code",
    "--root R hook claude-code -b500",
    "hook claude-code --root R",
    "hook claude-code --root=R --budget=800 --json",
    "--json --root R hook claude-code",
]


@pytest.mark.parametrize("line", HOOK_LINES)
def test_the_hook_and_its_typer_command_agree_on_every_form(tmp_path, monkeypatch, line):
    a, b = roots(tmp_path)
    event = json.dumps({**EVENT, "cwd": str(tmp_path)})
    with monkeypatch.context() as m:
        without_typer(m)
        hook = invoke([str(a) if w == "R" else w.replace("=R", f"={a}") for w in line.split(" ")], input=event)
    typer_only(monkeypatch)
    slow = invoke([str(b) if w == "R" else w.replace("=R", f"={b}") for w in line.split(" ")], input=event)
    assert hook.exit_code == slow.exit_code == 0, (hook.output, slow.output)
    assert hook.stdout.replace(str(a), "R") == slow.stdout.replace(str(b), "R")
    assert "mysql-charset" in hook.stdout


@pytest.mark.parametrize(
    "line",
    [
        "--bogus hook claude-code",
        "--root hook claude-code",
        "hook claude-code --bogus",
        "hook claude-code -b",
        "hook claude-code --json=1",
        "hook claude-code -- x",
        "--json=1 hook claude-code",
        "hook claude-code -bx",
        "hook claude",
    ],
)
def test_a_wrong_hook_line_is_one_line_and_exit_1_never_2(monkeypatch, line):
    without_typer(monkeypatch)
    res = invoke(line.split(" "), input=json.dumps(EVENT))
    assert res.exit_code == 1 and res.stdout == "", res.output
    assert len(res.stderr.splitlines()) == 1 and res.stderr.startswith("memcli hook: ")
    said = clicks(line.split(" "))
    if said[0] == "usage" and "No such command" not in said[1]:  # the same words Typer would say
        assert said[1].rstrip(".") in res.stderr


def test_a_wrong_hook_line_with_json_is_one_envelope(monkeypatch):
    without_typer(monkeypatch)
    res = invoke(["hook", "claude-code", "--json", "-bx"], input=json.dumps(EVENT))
    env = json.loads(res.stdout)
    assert res.exit_code == 1 and env["ok"] is False and "'-bx'" not in env["error"]["message"]
    assert "not a valid integer" in env["error"]["message"]


def test_hook_help_and_roots_still_go_to_typer(example_root):
    assert invoke(["hook", "claude-code", "--help"]).exit_code == 0
    assert invoke(["hook", "list"]).exit_code == 0


@st.composite
def hook_lines(draw):
    _, options = argv.COMMANDS[("hook", "claude-code")]
    token = st.one_of(
        st.sampled_from([*WORDS, *options, "claude", "list"]),
        st.tuples(st.sampled_from(list(options)), st.sampled_from(["", "=3", "=x", "x", "300"])).map("".join),
    )
    groups = [
        ["--root", "R"],
        ["--root="],
        ["--json"],
        ["--scope", "s"],
        ["--bogus"],
        ["-x"],
        ["--root"],
        ["--json=1"],
        ["--session"],
    ]
    before = [w for g in draw(st.lists(st.sampled_from(groups), max_size=3)) for w in g]
    return [*before, *draw(st.sampled_from([[], ["--"]])), "hook", *draw(st.lists(token, max_size=5))]


@settings(deadline=None)
@given(hook_lines())
def test_no_hook_line_exits_2(args):
    """Whatever surrounds `hook`, the prompt is never blocked (an empty prompt does no work);
    `hook allow|deny|list`, which no agent runs, are ordinary commands."""
    after = args[args.index("hook") + 1 :]
    assume(not (after and after[0] in ("allow", "deny", "list")))
    res = invoke(args, input=json.dumps({"prompt": " ", "session_id": "s1"}))
    assert res.exit_code != 2, (args, res.output)
