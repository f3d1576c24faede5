"""Regular expressions compiled on first use.

Compiling a pattern costs a process from 0.05 to 1 ms. A module imported on every turn whose
patterns only some commands use (an outcome section read, frontmatter keys rewritten, a memory
id checked the long way, a slug made, the personal-data rules) declares them with ``Lazy``, so
the turns that import it for something else do not compile them. A ``Lazy`` answers what a
compiled pattern answers (``match``, ``fullmatch``, ``sub``, ``finditer`` ...); a loop that calls
one many times takes the method once (``fullmatch = PATTERN.fullmatch``).
"""

from __future__ import annotations

import re


class Lazy:
    """``re.compile(pattern, flags)``, done the first time the pattern is used."""

    __slots__ = ("pattern", "flags", "_rx")

    def __init__(self, pattern: str, flags: int = 0):
        self.pattern, self.flags = pattern, flags
        self._rx: re.Pattern | None = None

    def compiled(self) -> re.Pattern:
        if self._rx is None:
            self._rx = re.compile(self.pattern, self.flags)
        return self._rx

    def __getattr__(self, name: str):
        return getattr(self.compiled(), name)

    def __repr__(self) -> str:
        return f"Lazy({self.pattern!r})"
