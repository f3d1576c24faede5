"""Sharing a root through git: `git setup`, `sync`, `resolve`, and `merge …` (run by git itself)."""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from .. import render as r
from ..errors import UsageError
from .typer_app import Json, app, memory, run
from .boundary import Out

git_app = typer.Typer(
    help="Make a root git-ready and check it.\n\nExample: memcli git setup --check", no_args_is_help=True
)
merge_app = typer.Typer(
    help="memcli's git merge drivers (git runs these; see `memcli git setup`).\n\n"
    "Example: memcli merge index %O %A %B %P",
    no_args_is_help=True,
)
app.add_typer(git_app, name="git")
app.add_typer(merge_app, name="merge")

Command = Annotated[
    Optional[str],
    typer.Option(
        "--command",
        help="How git should start memcli (default: this Python, isolated: `python -I -m memcli.gitmerge`; "
        "git runs it in the work tree, so a command found on PATH is written with its absolute path).",
    ),
]


@git_app.command("setup")
def git_setup(
    ctx: typer.Context,
    command: Command = None,
    check: Annotated[bool, typer.Option("--check", help="Only report what is missing; exit 1 if anything is.")] = False,
    json_: Json = False,
):
    """Write .gitignore and .gitattributes and register the merge drivers in this clone.

    Run it once on every machine after cloning (git does not copy config into clones).

    Example: git clone host:notes.git && cd notes && memcli git setup
    """

    def act():
        m = memory(ctx)
        if check:
            found = m.git_setup(check=True)
            items = found["findings"]

            def show_findings(o):
                for f in items:
                    o.out(r.finding_line(f))
                if not items:
                    o.out("git setup ok")

            return Out.of(found, show_findings, code=1 if items else 0)
        res = m.git_setup(command)

        def human(o):
            if res["gitignore_added"]:
                o.talk(f".gitignore: added {', '.join(res['gitignore_added'])}")
            if res["gitattributes_added"]:
                o.talk(f".gitattributes: added {len(res['gitattributes_added'])} lines (commit it)")
            o.talk(f"merge drivers registered in {res['repository']}/.git/config")
            o.out(res["root"])

        return Out.of(res, human)

    run(ctx, "git setup", json_, act)


def _driver(kind: str, base: str, ours: str, theirs: str, marker: int, path: str) -> None:
    from ..gitmerge import main  # the drivers' entry point: what git runs, and what it says

    raise typer.Exit(main([kind, base, ours, theirs, *([str(marker)] if kind == "detail" else []), path]))


Base = Annotated[str, typer.Argument(help="The common ancestor (%O).")]
Ours = Annotated[str, typer.Argument(help="Our version; the result is written here (%A).")]
Theirs = Annotated[str, typer.Argument(help="Their version (%B).")]
PathArg = Annotated[str, typer.Argument(help="The path being merged (%P).")]


@merge_app.command("index")
def merge_index(base: Base, ours: Ours, theirs: Theirs, path: PathArg = "MEMORY.md"):
    """Merge MEMORY.md: both sides' entries and hand-written lines; never a conflict.

    Example: git runs `memcli merge index base.md ours.md theirs.md MEMORY.md`
    """
    _driver("index", base, ours, theirs, 7, path)


@merge_app.command("detail")
def merge_detail(
    base: Base,
    ours: Ours,
    theirs: Theirs,
    marker: Annotated[int, typer.Argument(help="Conflict marker size (%L).")] = 7,
    path: PathArg = "",
):
    """Merge a memory: frontmatter key by key, the body line by line; exit 1 on a body conflict.

    Example: git runs `memcli merge detail base.md ours.md theirs.md 7 memory/x.md`
    """
    _driver("detail", base, ours, theirs, marker, path)


@merge_app.command("episode")
def merge_episode(base: Base, ours: Ours, theirs: Theirs, path: PathArg = ""):
    """Merge an episode log: both sides' sections in time order; never a conflict.

    Example: git runs `memcli merge episode base.md ours.md theirs.md memory/episodes/2026-12-01.md`
    """
    _driver("episode", base, ours, theirs, 7, path)


@app.command()
def sync(
    ctx: typer.Context,
    message: Annotated[
        Optional[str], typer.Option("--message", "-m", help="Commit message (default: generated).")
    ] = None,
    no_push: Annotated[bool, typer.Option("--no-push", help="Commit and merge, but do not push.")] = False,
    command: Command = None,
    json_: Json = False,
):
    """Commit memcli's own files in the root, merge the remote's with memcli's drivers, push.

    Only MEMORY.md, memory/, memcli.yaml, .gitignore and .gitattributes are committed, after a
    scan for secrets; other work in the repository, staged or not, is left as it is. Exit 0 when
    synced (or committed here only when the remote cannot be reached); 1, with nothing pushed,
    when a file needs a person (`memcli resolve ID --ours|--theirs|--both`, then sync again), a
    merge driver failed, or a file about to be committed holds a secret; 3 when git fails.

    Example: memcli sync
    """

    def act():
        res = memory(ctx).sync(message, push=not no_push, command=command)

        def human(o):
            if res["committed"]:
                o.talk(f"committed: {res['committed']}")
            if res["merged"]:
                o.talk(f"merged {res['remote']}/{res['branch']}")
            if res["pushed"]:
                o.talk(f"pushed to {res['remote']}")
            for p in res["conflicts"]:
                o.warn(f"conflict in {p}: settle it ({_way(p)}), then run `memcli sync` again")
            for p in res["driver_failed"]:
                o.warn(
                    f"the merge driver failed on {p}: "
                    + (
                        "it holds only this side; settle it by hand (theirs: `git show :3:" + p + "`), `git add` it "
                        "and sync again, or `git merge --abort`"
                        if res.get("merging")
                        else "nothing was merged or pushed; check the driver (`memcli git setup`), then sync again"
                    )
                )
            for x in res["refused"]:
                what = "the secret" if x in res["secrets"] else "it"
                o.warn(
                    f"{x['path']}:{x['line']}: {x['kind']}: not committed, nothing pushed; remove {what} "
                    "and run `memcli sync` again"
                )
            if res["left_alone"]:
                shown = res["left_alone"][:5]
                more = f" and {len(res['left_alone']) - 5} more" if len(res["left_alone"]) > 5 else ""
                o.talk(f"not memcli's files, left for you to commit: {', '.join(shown)}{more}")
            if res["code"] == 0:
                o.out(
                    "synced"
                    if res["remote"] and not res["offline"]
                    else "committed here only (no remote configured)"
                    if not res["remote"]
                    else f"committed here only ({res['remote']} not reached)"
                )

        return Out.of(res, human, code=res["code"])

    run(ctx, "sync", json_, act)


def _way(path: str) -> str:
    from ..store.markers import way_out

    return way_out(path) if path.endswith(".md") else "edit it, then `git add` it"


@app.command()
def resolve(
    ctx: typer.Context,
    id_: Annotated[str, typer.Argument(metavar="ID", help="The conflicted memory's id.")],
    ours: Annotated[bool, typer.Option("--ours", help="Keep this machine's side.")] = False,
    theirs: Annotated[bool, typer.Option("--theirs", help="Keep the other machine's side.")] = False,
    both: Annotated[bool, typer.Option("--both", help="Keep both sides, ours first.")] = False,
    json_: Json = False,
):
    """Settle a memory left with conflict markers; the side not kept goes into its ## History.

    Example: memcli resolve mysql-charset --theirs && memcli sync
    """

    def act():
        sides = [n for n, v in (("ours", ours), ("theirs", theirs), ("both", both)) if v]
        if len(sides) != 1:
            raise UsageError("choose one of --ours, --theirs or --both")
        res = memory(ctx).resolve(id_, sides[0])

        def human(o):
            kept = "; the other side is in its ## History" if res["kept_in_history"] else ""
            o.out(f"resolved {res['path']} with {res['side']}{kept}")

        return Out.of(res, human)

    run(ctx, "resolve", json_, act)
