"""Maintenance commands: heartbeat (audit and safe repair) and watch (check edits as they happen)."""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from .. import render as r
from .typer_app import Json, app, memory, output, run, state
from .boundary import Out
from .long_running import seconds, until_signal
from .progress import reporting
from ..errors import ConfigError, UsageError


@app.command()
def heartbeat(
    ctx: typer.Context,
    fix: Annotated[bool, typer.Option("--fix", help="Apply the safe repairs and print each one.")] = False,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="With --fix: show the repairs, change nothing.")] = False,
    check: Annotated[bool, typer.Option("--check", help="Exit 1 when a warning or an error remains.")] = False,
    json_: Json = False,
):
    """Audit the memory: every finding with its file, line and fix; --fix repairs what is safe.

    Never deletes a memory: expired ones move to memory/archive/, demoted ones keep their detail file.
    Duplicates, secrets and injected instructions are reported for a person to resolve.

    Example: memcli heartbeat --fix --check
    """

    def act():
        if dry_run and not fix:
            raise UsageError("--dry-run goes with --fix (heartbeat without --fix changes nothing anyway)")
        try:
            m, broken = memory(ctx), False
        except ConfigError:  # a finding of the audit, which runs with the defaults and repairs nothing
            from ..core import Memory

            m, broken = Memory.with_defaults(state(ctx).root, door="cli"), True
        with reporting(m, json_ or state(ctx).json, output(ctx)):
            res = m.repair(dry_run=dry_run or not fix or broken, write_cache=not dry_run)
        data = {
            **res.report.to_dict(),
            "actions": [a.to_dict() for a in res.actions],
            "applied": res.applied,
            "fix": fix,
            "dry_run": dry_run,
        }
        code = 1 if check and res.report.needs_attention else 0
        said = ["no repair was made: the configuration cannot be read (config-broken)"] if broken and fix else []
        return Out(data, lambda o: r.heartbeat(o, data), code=code, warnings=said)

    run(ctx, "heartbeat", json_, act)


@app.command()
def watch(
    ctx: typer.Context,
    heartbeat_every: Annotated[
        Optional[str],
        typer.Option(
            "--heartbeat-every", metavar="DURATION", help="Also run the heartbeat on this schedule (e.g. 10m)."
        ),
    ] = None,
    fix: Annotated[bool, typer.Option("--fix", help="Let the scheduled heartbeat apply its safe repairs.")] = False,
    reflect: Annotated[
        bool, typer.Option("--reflect", help="Also run `memcli reflect` on the heartbeat's schedule.")
    ] = False,
    debounce: Annotated[
        str, typer.Option("--debounce", metavar="DURATION", help="Wait until the files are quiet this long.")
    ] = "0.3s",
    json_: Annotated[
        bool, typer.Option("--json", help="Print JSON lines: one JSON object per event, as it happens.")
    ] = False,
):
    """Watch the root: check edits to MEMORY.md, memory/ and memcli.yaml as they happen.

    Each changed file is validated (findings print one a line; with --json, JSON lines: one object
    per event) and its search-cache entry refreshed. Stops cleanly on Ctrl-C or SIGTERM.

    Example: memcli watch --heartbeat-every 1h --fix
    """
    import threading

    as_json = json_ or state(ctx).json

    def act():
        wait = seconds(debounce, "--debounce")
        every = seconds(heartbeat_every, "--heartbeat-every") if heartbeat_every is not None else None
        if fix and every is None:
            raise UsageError("--fix needs --heartbeat-every (watch itself only reports)")
        if reflect and every is None:
            raise UsageError("--reflect needs --heartbeat-every (it runs on the heartbeat's schedule)")
        m = memory(ctx)
        stop = threading.Event()
        with until_signal(stop.set) as why:
            res = m.watch(
                lambda ev: r.watch_event(output(ctx), ev, as_json),
                stop,
                debounce=wait,
                heartbeat_every=every,
                fix=fix,
                reflect=reflect,
            )
        res["stopped_by"] = why[0] if why else None
        return Out(res, lambda o: o.talk("memcli: stopped watching"))

    run(ctx, "watch", json_, act)
