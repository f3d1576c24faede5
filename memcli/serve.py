"""`python -m memcli.serve [--root PATH]`: keep the embedding model of the `semantic` extra loaded
for one memory root and answer its recalls over a socket (the work is ``search.remote.Server``'s;
`memcli serve` is the same with the command line around it)."""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    import argparse

    from memcli.core import Memory
    from memcli.errors import MemcliError

    parser = argparse.ArgumentParser(prog="python -m memcli.serve", description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", default=None, help="the memory root (default: found as memcli finds it)")
    args = parser.parse_args(argv)
    try:
        server = Memory.find(args.root).semantic_server()
        sock = server.bind()
    except (MemcliError, RuntimeError, OSError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    print(f"serving {server.root} on {server.path}", file=sys.stderr, flush=True)
    try:
        server.serve(sock)
    except KeyboardInterrupt:
        pass
    return 0


def _stop(*_) -> None:
    raise KeyboardInterrupt


if __name__ == "__main__":
    import signal

    signal.signal(signal.SIGTERM, _stop)  # a terminated server removes its socket too
    raise SystemExit(main())
