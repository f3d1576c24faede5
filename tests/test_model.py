"""model.Value: the plain value classes are slotted, reject unknown fields, and carry class
annotations that match their FIELDS (what mypy reads as the fields' types), so the typed surface
cannot drift from what the class stores."""

import importlib
import pickle
import pkgutil

import pytest

import memcli
from memcli.model import Detail, Entry, Hit, Value, WriteResult


def _all_values() -> list[type[Value]]:
    for info in pkgutil.walk_packages(memcli.__path__, "memcli."):
        try:
            importlib.import_module(info.name)
        except ImportError:  # an extra that is not installed (its values are found where it is)
            continue
    found, todo = [], [Value]
    while todo:
        for sub in todo.pop().__subclasses__():
            if sub.__module__.startswith("memcli."):
                found.append(sub)
            todo.append(sub)
    return found


VALUES = _all_values()


def test_every_value_class_is_found():
    names = {c.__name__ for c in VALUES}
    assert {
        "Entry",
        "Detail",
        "Hit",
        "Finding",
        "WriteResult",
        "Config",
        "SearchDoc",
        "IndexDoc",
        "RememberRequest",
        "UpdateRequest",
        "RecallRequest",
    } <= names


@pytest.mark.parametrize("cls", [c for c in VALUES if c.FIELDS], ids=lambda c: c.__name__)
def test_annotations_name_the_fields_in_order_and_the_slots(cls):
    """(A base class without fields, such as requests.Request, has nothing to annotate.)"""
    annotated = tuple(cls.__dict__.get("__annotations__", {}))
    from memcli.requests import Request

    if issubclass(cls, Request):  # a request's fields are its declarations (requests.Door), not slots
        assert annotated == tuple(n for n in cls.FIELDS if n in cls.__dict__), cls.__name__
        return
    assert annotated == cls.FIELDS, f"{cls.__name__}: annotate every field of FIELDS, in order"
    assert tuple(cls.__dict__["__slots__"]) == cls.FIELDS
    assert set(cls.COMPARE or ()) <= set(cls.FIELDS)


def test_a_value_has_no_dict_and_refuses_unknown_fields():
    d = Detail("x", "X", tags=("a",))
    assert not hasattr(d, "__dict__")
    with pytest.raises(AttributeError, match="immutable"):
        d.title = "Y"
    with pytest.raises(TypeError, match="has no field colour"):
        d.replace(colour="red")
    w = WriteResult("remembered", "x", "memory/x.md")
    w.indexed = True  # not frozen: a field may change
    with pytest.raises(AttributeError):
        w.colour = "red"  # type: ignore[attr-defined]  (the slots refuse a name that is no field)


def test_replace_equality_hash_and_pickle():
    e = Entry("Title", "sum", ("t",), "memory/x.md", raw="- raw")
    assert e.replace(raw=None) == e  # raw is not compared
    assert hash(e.replace(raw=None)) == hash(e)
    assert e.replace(title="Other").title == "Other"
    h = Hit("index", "x", "X", "memory/x.md", 0.5, methods=("bm25f",))
    assert pickle.loads(pickle.dumps(h)) == h
    with pytest.raises(TypeError, match="unhashable"):
        hash(WriteResult("remembered", "x", "memory/x.md"))
