"""How memcli starts Python: every interpreter it starts runs isolated (``-I``).

Started with ``-m`` or ``-c``, Python puts its working folder first on ``sys.path``; a merge
driver runs in the work tree and a background reflection in whatever folder the turn ran in,
so a ``memcli/`` package or a ``json.py`` that a repository carries would run in memcli's own
process. ``-I`` leaves the working folder, ``PYTHONPATH`` and the user's site-packages out of the
child's path; memcli itself is found where it is installed (site-packages, where an editable
install's ``.pth`` finder is still read). The child's working folder is fixed too.

The one home of that rule: the command lines (``python_command``, ``module_command``, ``driver_python``), a detached
start (``spawn_detached``) and the worker pools (``pool_context``: multiprocessing's ``spawn``
starts ``python -c …`` in the parent's folder, so its workers and its resource tracker are started
with ``-I`` as well).
"""

from __future__ import annotations

import os
import shlex
import sys
import threading

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


def working_folder(preferred: str | os.PathLike | None = None) -> str:
    """The folder a child starts in: ``preferred`` when it is one, else the filesystem's root."""
    if preferred is not None and os.path.isdir(preferred):
        return os.fspath(preferred)
    return os.path.abspath(os.sep)


def spawn_detached(args: list[str], cwd: str | os.PathLike | None = None):
    """Start ``args`` (a ``python_command``) in its own session, stdin and output on /dev/null,
    in a fixed working folder, without waiting; the child (``poll()`` reaps it). Raises OSError."""
    import subprocess

    return subprocess.Popen(
        args,
        cwd=working_folder(cwd),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
        close_fds=True,
    )


# ---------------------------------------------------------------- worker pools

_LOCK = threading.RLock()


class _Isolated:
    """While held, multiprocessing starts interpreters (workers, the resource tracker) with ``-I``."""

    def __enter__(self):
        from multiprocessing import util

        _LOCK.acquire()
        self.util = util
        self.before = util._args_from_interpreter_flags  # type: ignore[attr-defined]  # CPython's, not in the stubs
        before = self.before
        util._args_from_interpreter_flags = lambda: [a for a in before() if a != ISOLATED] + [ISOLATED]  # type: ignore[attr-defined]
        return self

    def __exit__(self, *exc):
        self.util._args_from_interpreter_flags = self.before  # type: ignore[attr-defined]
        _LOCK.release()


def isolated():
    """A context in which multiprocessing's new interpreters start with ``-I``."""
    return _Isolated()


def pool_context(method: str):
    """A multiprocessing context for ``method`` (``fork`` or ``spawn``); under ``spawn``, one whose
    workers start isolated (``fork`` starts no interpreter). Build the pool inside ``isolated()``
    too: its queues start multiprocessing's resource tracker."""
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
