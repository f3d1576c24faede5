"""One request per operation, declared once and carried unchanged from every door to the use case.

Each door (the Typer app, the MCP server, the Python API) is given a distinct value for every
parameter it offers; the use case must receive each one in its request. A door that drops an
option (as the write gate once dropped --pin, --expires and --source) fails here, and so does a
name that is no field (``Request.of`` refuses it). An option added to a request is offered at
every door with nothing else edited.
"""

import inspect

import anyio
import pytest

from memcli.core import Memory
from memcli.errors import MemcliError
from memcli.requests import RecallRequest, RememberRequest, UpdateRequest
from memcli.usecases.init import init_root
from tests.conftest import Cli

# operation -> (the request, the use case it reaches, the module holding it)
OPERATIONS = {
    "remember": (RememberRequest, "memcli.usecases.write", "remember_request"),
    "update": (UpdateRequest, "memcli.usecases.write", "update_request"),
    "recall": (RecallRequest, "memcli.usecases.recall", "recall_request"),
}
# A door's parameter that is no field of its own: read into another (a file read into the body).
READ_INTO = {"body_file"}


class Reached(MemcliError):
    code = "reached"


@pytest.fixture
def reached(tmp_path, monkeypatch):
    """(the root, the requests the use cases were given): each use case stops at its request."""
    import importlib

    root = tmp_path / "r"
    init_root(root)
    got: list = []
    for _, module, name in OPERATIONS.values():

        def stop(store, req, _name=name):
            got.append(req)
            raise Reached(f"{_name} reached")

        monkeypatch.setattr(importlib.import_module(module), name, stop)
    return root, got


def _expect(values: dict, cls=RecallRequest) -> dict:
    """The request's fields a door's parameter values stand for (by a field's name at that door)."""
    names = {d.name or n: n for n, (_, d) in cls.DOORS.items()}
    out = {}
    for name, value in values.items():
        if name in READ_INTO:
            continue
        out[names.get(name, name)] = tuple(value) if isinstance(value, list) else value
    return out


def _check(req, cls, expect: dict) -> None:
    assert type(req) is cls
    for field, value in expect.items():
        assert getattr(req, field) == value, (cls.__name__, field)


def _click_command(words):
    from memcli.cli.typer_app import command

    cmd = command()
    for w in words:
        cmd = cmd.get_command(None, w)
    return cmd


def _click_line(cmd) -> tuple[list, dict]:
    """argv giving every parameter of a Click command a distinct value, and the values by name."""
    args, values = [], {}
    for p in cmd.params:
        if p.name == "json_" or p.name in READ_INTO:
            continue
        if p.param_type_name == "argument":
            values[p.name] = f"x-{p.name}"
            args.append(f"x-{p.name}")
            continue
        opt = p.opts[0]
        if p.is_flag:
            values[p.name] = True
            args.append(opt)
        elif p.multiple:
            values[p.name] = [f"x-{p.name}"]
            args += [opt, f"x-{p.name}"]
        else:
            kind = {"float": 0.25, "integer": 3}.get(p.type.name, f"x-{p.name}")
            values[p.name] = kind
            args += [opt, str(kind)]
    return args, values


@pytest.mark.parametrize("op", sorted(OPERATIONS))
def test_every_typer_option_reaches_the_use_case(reached, op):
    from memcli.cli.boundary import Call, run_app

    root, got = reached
    cmd = _click_command([op])
    args, values = _click_line(cmd)
    line = ["--root", str(root), "--session", "x-s", "--scope", "x-c", op, *args]
    assert run_app(_click_command([]), line, Call.here()) == Reached.exit_code
    expect = _expect(values, OPERATIONS[op][0])
    if op == "recall":
        expect.update(session="x-s", scope="x-c")
    _check(got[-1], OPERATIONS[op][0], expect)
    assert set(expect) - {"session", "scope"} == set(values)


def _schema_value(name: str, schema: dict):
    if "anyOf" in schema:
        schema = next(s for s in schema["anyOf"] if s.get("type") != "null")
    if "enum" in schema:
        return schema["enum"][-1]
    return {
        "string": f"x-{name}",
        "array": [f"x-{name}"],
        "boolean": True,
        "number": 0.25,
        "integer": max(3, schema.get("minimum", 0)),
    }[schema["type"]]


@pytest.mark.parametrize("op", sorted(OPERATIONS))
def test_every_mcp_argument_reaches_the_use_case(reached, op):
    pytest.importorskip("mcp")
    from memcli.mcp import build

    root, got = reached
    server = build(root)
    tool = server._tool_manager.get_tool(op)
    args = {name: _schema_value(name, schema) for name, schema in tool.parameters["properties"].items()}
    res = anyio.run(server.call_tool, op, args)
    assert "reached" in str(res), res
    _check(got[-1], OPERATIONS[op][0], _expect(args, OPERATIONS[op][0]))


@pytest.mark.parametrize("op", sorted(OPERATIONS))
def test_every_keyword_of_the_python_api_reaches_the_use_case(reached, op):
    root, got = reached
    method = getattr(Memory(root), op)
    values = {}
    for name, p in inspect.signature(method).parameters.items():
        hint = str(p.annotation)
        values[name] = (
            True
            if p.default is False
            else [f"x-{name}"]
            if p.default == ()
            else 0.25
            if "float" in hint
            else 3
            if "int" in hint
            else f"x-{name}"
        )
    with pytest.raises(Reached):
        method(**values)
    if op == "update":
        values["id"] = values.pop("memory_id")
    _check(got[-1], OPERATIONS[op][0], _expect(values, OPERATIONS[op][0]))


def test_a_name_that_is_no_field_is_refused_never_dropped():
    with pytest.raises(TypeError, match="no field colour"):
        RememberRequest.of({"title": "t", "colour": "red"})
    with pytest.raises(TypeError, match="colour"):
        UpdateRequest(id="x", colour="red")
    req = RememberRequest.of({"title": "t", "tags": ["a"], "pinned": False, "type": None})
    assert (req.tags, req.pinned, req.type, req.summary) == (("a",), None, None, "")  # a flag off is "not given"
    assert UpdateRequest.of({"id": "x", "pinned": False}).pinned is False  # --unpin is a change
    assert RecallRequest.of({"query": "q", "queries": ["p"]}).also == ("p",)  # a field's name at a door


_ADDED = """
import json, sys
from typing import Optional

import memcli.requests as requests


class Wider(requests.RecallRequest):
    colour: Optional[str] = requests.option(None, "Only memories of this colour.", "--colour")


requests.RecallRequest = Wider  # before any door is made

import anyio
from memcli.cli.boundary import Call, run_app
from memcli.cli.typer_app import command
from memcli.core import Memory
from memcli.mcp import build
import memcli.usecases.recall as recall

from memcli.errors import MemcliError

got = []


def reached(store, req):
    got.append(req.colour)
    raise MemcliError("reached")


recall.recall_request = reached
root = sys.argv[1]
recall_cmd = command().get_command(None, "recall")
server = build(root)
schema = server._tool_manager.get_tool("recall").parameters["properties"]["colour"]
anyio.run(server.call_tool, "recall", {"query": "q", "colour": "teal"})
try:
    Memory(root).recall("q", colour="amber")
except MemcliError:
    pass
run_app(command(), ["--root", root, "recall", "q", "--colour", "red"], Call.here())
print(json.dumps({"cli": [o for p in recall_cmd.params for o in p.opts], "tool": schema["description"], "got": got}))
"""


def test_an_option_added_to_the_request_is_offered_at_every_door(root):
    """A field added to RecallRequest (here in a subclass put in its place before the doors are
    made) is a Typer option, an MCP parameter and a keyword of Memory.recall, and reaches the use
    case from each, with nothing else edited."""
    import json
    import subprocess
    import sys

    from tests.conftest import child_env

    done = subprocess.run(
        [sys.executable, "-c", _ADDED, str(root)], capture_output=True, text=True, env=child_env(), timeout=120
    )
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout.splitlines()[-1])
    assert "--colour" in seen["cli"] and seen["tool"] == "Only memories of this colour."
    assert seen["got"] == ["teal", "amber", "red"]


# ---------------------------------------------------------------- the gate keeps every option


@pytest.fixture
def gated(tmp_path):
    root = tmp_path / "g"
    init_root(root)
    (root / ".memcli/config.yaml").write_text("write:\n  gate: inbox\n")
    return root


def test_a_gated_update_accepted_later_makes_every_change(gated):
    from memcli.store import inbox as proposals

    Memory(gated).remember(
        "Release freeze",
        "no merges after Tuesday",
        tags=["release", "old"],
        type="event",
        importance=0.4,
        now="2026-12-01T10:00:00Z",
    )
    cli = Cli(gated)
    res = cli.json(
        "update",
        "release-freeze",
        "--title",
        "Code freeze",
        "--summary",
        "no merges after Monday",
        "--append",
        "Agreed with QA.",
        "--tag",
        "qa",
        "--untag",
        "old",
        "--alias",
        "封版",
        "--type",
        "fact",
        "--importance",
        "0.9",
        "--pin",
        "--expires",
        "2031-01-01",
        code=0,
    )
    assert res["data"]["action"] == "proposed"
    pid = res["data"]["id"]
    p = proposals.read(gated, pid)
    assert dict(p.changes) == {
        "title": "Code freeze",
        "type": "fact",
        "untags": ("old",),
        "importance": 0.9,
        "pinned": True,
        "expires": "2031-01-01",
    }
    assert proposals.parse(proposals.render(p), pid) == p.replace(path=p.path)  # the file keeps them
    assert Memory(gated).get("release-freeze").title == "Release freeze"  # nothing written before accepting
    Memory(gated).inbox.accept([pid], now="2026-12-02T10:00:00Z")
    d = Memory(gated).get("release-freeze")
    assert (d.title, d.summary, d.type, d.importance, d.pinned, d.expires) == (
        "Code freeze",
        "no merges after Monday",
        "fact",
        0.9,
        True,
        "2031-01-01",
    )
    assert set(d.tags) == {"release", "qa"} and "封版" in d.aliases and "Agreed with QA." in d.body


def test_a_gated_update_refuses_a_bad_value_before_proposing(gated):
    Memory(gated).remember("Release freeze", "no merges", now="2026-12-01T10:00:00Z")
    res = Cli(gated)("update", "release-freeze", "--importance", "7")
    assert res.exit_code == 2 and not list((gated / "memory/inbox").glob("p-*.md"))
