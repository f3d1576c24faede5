"""How memcli starts Python: every interpreter it starts runs isolated (``-I``), the one home of
that rule. Started with ``-m`` or ``-c`` Python puts its working folder first on ``sys.path``, and
a merge driver runs in the work tree: a ``memcli/`` or ``json.py`` a repository carries would run.
``-I`` leaves out the working folder, ``PYTHONPATH`` and the user's site-packages; multiprocessing's
``spawn`` workers and resource tracker are started with it too (``pool_context``)."""

from __future__ import annotations

import os
import shlex
import sys
import threading
from contextlib import contextmanager

ISOLATED = "-I"


def python_command(*args: str) -> list[str]:
    """This interpreter, isolated, with ARGS: ``[sys.executable, "-I", *args]``."""
    return [sys.executable, ISOLATED, *args]


def module_command(module: str, *args: str) -> list[str]:
    """``python -I -m MODULE ARGS`` with this interpreter: memcli's own modules, never a folder's."""
    return [sys.executable, ISOLATED, "-m", module, *args]


def driver_python(module: str) -> str:
    """A shell command line starting ``module`` with this interpreter, isolated (for git's config)."""
    return " ".join(shlex.quote(a) for a in module_command(module))


def spawn_detached(args: list[str], cwd: str | os.PathLike | None = None):
    """Start ``args`` detached (own session, no stdio) in ``cwd`` when it is a folder, else in /."""
    import subprocess

    return subprocess.Popen(
        args,
        cwd=os.fspath(cwd) if cwd is not None and os.path.isdir(cwd) else os.path.abspath(os.sep),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
        close_fds=True,
    )


_LOCK = threading.RLock()


@contextmanager
def isolated():
    """A context in which multiprocessing's new interpreters (workers, the resource tracker) start with ``-I``."""
    from multiprocessing import util

    with _LOCK:
        before = util._args_from_interpreter_flags  # type: ignore[attr-defined]  # CPython's, not in the stubs
        util._args_from_interpreter_flags = lambda: [a for a in before() if a != ISOLATED] + [ISOLATED]  # type: ignore[attr-defined]
        try:
            yield
        finally:
            util._args_from_interpreter_flags = before  # type: ignore[attr-defined]


def pool_context(method: str):
    """A multiprocessing context for ``fork`` or ``spawn``, whose spawned workers start isolated (build
    the pool inside ``isolated()`` too: its queues start the resource tracker)."""
    import multiprocessing

    if method == "fork":
        return multiprocessing.get_context(method)
    if method != "spawn":
        raise ValueError(f"no isolated context for {method!r}")
    return __getattr__("IsolatedSpawnContext")()


_CLASSES: dict = {}


def __getattr__(name: str):
    """The spawn context's classes, made on first use (a worker unpickles its process by name)."""
    if name not in ("IsolatedSpawnProcess", "IsolatedSpawnContext"):
        raise AttributeError(name)
    if not _CLASSES:
        from multiprocessing.context import SpawnContext, SpawnProcess

        class IsolatedSpawnProcess(SpawnProcess):
            @staticmethod
            def _Popen(process_obj):
                with isolated():
                    return SpawnProcess._Popen(process_obj)

        class IsolatedSpawnContext(SpawnContext):
            Process = IsolatedSpawnProcess

        for cls in (IsolatedSpawnProcess, IsolatedSpawnContext):
            cls.__qualname__ = cls.__name__
            _CLASSES[cls.__name__] = cls
    return _CLASSES[name]
