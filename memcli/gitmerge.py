"""The git merge drivers' entry point (`memcli merge ...` runs the same)."""

from __future__ import annotations

KINDS = ("index", "detail", "episode")


def main(argv=None) -> int:
    """`python -I -m memcli.gitmerge KIND %O %A %B [%L] %P`, without the command line's framework (git
    starts one process per file). Exit 0 merged, 1 conflicts left, 2 failure."""
    import sys

    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] not in KINDS or len(args) < 4:
        sys.stderr.write("usage: python -I -m memcli.gitmerge index|detail|episode BASE OURS THEIRS [MARKER] [PATH]\n")
        return 2
    kind, base, ours, theirs, rest = args[0], args[1], args[2], args[3], args[4:]
    marker = 7
    if kind == "detail" and rest and rest[0].isdigit():
        marker = int(rest.pop(0))
    path = rest[0] if rest else ""
    from .core import Memory

    try:
        code = Memory.merge_file(kind, base, ours, theirs, marker, path)
    except Exception as e:  # git must get an answer: a failed driver leaves the file conflicted
        from .errors import MemcliError

        said = e.message if isinstance(e, MemcliError) else f"{e.__class__.__name__}: {e}"
        sys.stderr.write(f"memcli merge {kind} {path}: {said}\n")
        return 2
    if code == 1:
        from pathlib import Path

        sys.stderr.write(
            f"memcli: {path}: both sides changed the same lines; settle it with "
            f"`memcli resolve {Path(path).stem or 'ID'} --ours|--theirs|--both`\n"
        )
    elif code:
        sys.stderr.write(f"memcli merge {kind} {path}: not UTF-8, and git merge-file could not merge it\n")
    return code


if __name__ == "__main__":
    raise SystemExit(main())
