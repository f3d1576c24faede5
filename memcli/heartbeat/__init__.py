"""Heartbeat: audit a memory root and plan the safe repairs.

``audit(root)`` (a store.Root) reads every file once and returns a ``Report``: findings, each with a
stable code, a severity, the file (and line) and a suggested fix. ``plan(report)`` lists the
repairs that need no person; ``usecases.maintain.apply`` makes them under the root lock.
Deterministic and offline. A new check: a class deriving from ``checks.Check`` with
``@checks.register`` (see checks.py).
"""

from ..model import Finding
from .audit import audit
from .base import SEVERITIES, TEMP_MIN_AGE, Memo, Report, State
from .checks import CHECKS, Check, check_text, register
from . import gitchecks  # noqa: E402,F401  (registers the git checks)
from . import datachecks  # noqa: E402,F401  (registers pii and procedure-failing)
from . import inboxchecks  # noqa: E402,F401  (registers the inbox checks)
from . import localchecks  # noqa: E402,F401  (registers the configuration and edit-draft checks)
from .repair import Action, plan

__all__ = [
    "Action",
    "CHECKS",
    "Check",
    "Finding",
    "Memo",
    "Report",
    "SEVERITIES",
    "State",
    "TEMP_MIN_AGE",
    "audit",
    "check_text",
    "plan",
    "register",
]
