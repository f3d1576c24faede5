"""One request per operation, carried unchanged from every door to the use case.

Each door (the argv table the fast path reads, the Typer app, the MCP server, the Python API) is
given a distinct value for every parameter it declares; the use case must receive each one in its
request. A door that drops an option (as the write gate once dropped --pin, --expires and
--source) fails here, and so does a new option with no field (``Request.of`` refuses it).
"""

import inspect

import anyio
import pytest

from memcli import requests
from memcli.cli import argv
from memcli.core import Memory
from memcli.errors import MemcliError
from memcli.requests import NAMES, RecallRequest, RememberRequest, UpdateRequest
from memcli.usecases.init import init_root
from tests.conftest import Cli, invoke

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


def _expect(values: dict) -> dict:
    """The request's fields a door's parameter values stand for."""
    out = {}
    for name, value in values.items():
        if name in READ_INTO:
            continue
        field = NAMES.get(name, name)
        out[field] = tuple(value) if isinstance(value, list) else value
    return out


def _check(req, cls, expect: dict) -> None:
    assert type(req) is cls
    for field, value in expect.items():
        assert getattr(req, field) == value, (cls.__name__, field)


def _click_command(words):
    from memcli.cli.app import command

    cmd = command()
    for w in words:
        cmd = cmd.commands[w]
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
    from memcli.cli.boundary import run_app

    root, got = reached
    cmd = _click_command([op])
    args, values = _click_line(cmd)
    assert (
        run_app(_click_command([]), ["--root", str(root), "--session", "x-s", "--scope", "x-c", op, *args])
        == Reached.exit_code
    )
    expect = _expect(values)
    if op == "recall":
        expect.update(session="x-s", scope="x-c")
    _check(got[-1], OPERATIONS[op][0], expect)
    assert set(expect) - {"session", "scope"} == {NAMES.get(n, n) for n in values}


@pytest.mark.parametrize("words", [w for w in argv.COMMANDS if " ".join(w) in OPERATIONS])
def test_every_option_of_the_fast_path_table_reaches_the_use_case(reached, words):
    """The argv table's rows (the fast path, no Typer): each parameter, by each of its spellings."""
    root, got = reached
    names, options = argv.COMMANDS[words]
    by_param: dict = {}
    for opt, (param, kind, _) in options.items():
        if param != "json_" and param not in READ_INTO:
            by_param.setdefault(param, []).append((opt, kind))
    for spelling in (0, -1):  # the long option, then the last one (the short where there is one)
        args, values = [], {}
        for n in names:
            n = n.rstrip("?")
            values[n] = f"x-{n}"
            args.append(f"x-{n}")
        for param, spellings in by_param.items():
            opt, kind = spellings[spelling]
            value = {bool: True, float: 0.25, int: 3, list: [f"x-{param}"]}.get(kind, f"x-{param}")
            values[param] = value
            args += [opt] if kind is bool else [opt, str(value[0] if kind is list else value)]
        line = argv.parse(["--root", str(root), *words, *args])
        assert line.words == words and line.error is None
        assert invoke(["--root", str(root), *words, *args]).exit_code == Reached.exit_code
        _check(got[-1], OPERATIONS[" ".join(words)][0], _expect(values))


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
    _check(got[-1], OPERATIONS[op][0], _expect(args))


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
    _check(got[-1], OPERATIONS[op][0], _expect(values))


def test_a_name_that_is_no_field_is_refused_never_dropped():
    with pytest.raises(TypeError, match="no field colour"):
        RememberRequest.of({"title": "t", "colour": "red"})
    with pytest.raises(TypeError, match="no field colour"):
        UpdateRequest(id="x", colour="red")
    req = RememberRequest.of({"title": "t", "tag": ["a"], "pin": False, "type_": None})
    assert (req.tags, req.pinned, req.type, req.summary) == (("a",), None, None, "")  # a flag off is "not given"
    assert UpdateRequest.of({"id_": "x", "pin": False}).pinned is False  # --unpin is a change


def test_each_request_is_a_slotted_value_without_dataclasses():
    for cls in (RememberRequest, UpdateRequest, RecallRequest):
        assert cls.__slots__ == cls.FIELDS and not hasattr(cls, "__dataclass_fields__")
        assert cls(**{cls.FIELDS[0]: "a"}) == cls(**{cls.FIELDS[0]: "a"})
    assert "dataclasses" not in inspect.getsource(requests)


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
