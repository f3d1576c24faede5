"""Output: rich on a terminal, plain text when piped, and the versioned JSON envelope; data goes to
stdout, talk to stderr."""

from __future__ import annotations

import json
import re

ENVELOPE_VERSION = 1

# What a terminal acts on: C0 controls other than tab and newline, DEL, and C1 controls.
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_C1 = re.compile("[\x7f-\x9f]")


def safe(text: object) -> str:
    """Text fit for a terminal: every control character but tab and newline shown as \\xNN."""
    text = str(text)
    if _CONTROL.search(text) is None:
        return text
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text.replace("\r\n", "\n"))


def envelope(command: str, ok: bool, data=None, warnings=(), error: dict | None = None) -> str:
    return json_text(
        {
            "version": ENVELOPE_VERSION,
            "command": command,
            "ok": ok,
            "data": data,
            "warnings": list(warnings),
            "error": error,
        }
    )


def is_tty(stream) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


class Output:
    """Where one run of a command writes: data on ``stdout``, talk on ``stderr``; rich for a terminal."""

    def __init__(self, stdout, stderr):
        self.stdout, self.stderr = stdout, stderr

    def tty(self, err: bool = False) -> bool:
        return is_tty(self.stderr if err else self.stdout)

    def out(self, text: str = "") -> None:
        text = safe(text)
        self.stdout.write(text if text.endswith("\n") or not text else text + "\n")

    def write(self, text: str) -> None:
        """Data on stdout as it is, control characters escaped, no newline added."""
        self.stdout.write(safe(text))

    def talk(self, text: str) -> None:
        text = safe(text)
        self.stderr.write(text if text.endswith("\n") else text + "\n")

    def console(self, stderr: bool = False):
        from rich.console import Console

        return Console(file=self.stderr if stderr else self.stdout, highlight=False, soft_wrap=True)

    def warn(self, message: str) -> None:
        if self.tty(err=True):
            self.console(stderr=True).print(f"[yellow]warning:[/] {_esc(message)}")
        else:
            self.talk(f"memcli: warning: {message}")

    def error(self, message: str, hint: str | None = None) -> None:
        if self.tty(err=True):
            self.console(stderr=True).print(f"[bold red]error:[/] {_esc(message)}")
        else:
            self.talk(f"memcli: error: {message}")
        if hint:
            self.talk(f"  {hint}")


def _esc(text: str) -> str:
    from rich.markup import escape

    return escape(safe(text))


def write_result(o: Output, data: dict) -> None:
    """remember / update / forget / edit: the id on stdout, the rest on stderr."""
    if o.tty():
        c = o.console()
        c.print(f"[green]✓[/] {data['action']} [bold]{_esc(data['id'])}[/] ({_esc(data['path'])})")
        if data["action"] == "proposed":
            c.print("  [dim]waiting for review (write.gate is inbox): memcli inbox accept ID[/]")
        elif data["action"] == "forgotten":
            c.print(f"  [dim]archived; `memcli restore {_esc(data['id'])}` brings it back[/]")
        elif data["action"] == "purged":
            c.print("  [dim]deleted, with its index line[/]")
        elif data.get("line"):
            c.print(f"  [dim]index:[/] {_esc(data['line'])}")
        elif "/archive/" in data["path"]:
            c.print("  [dim]archived (not in MEMORY.md)[/]")
        else:
            c.print("  [dim]not in MEMORY.md (the index is full); the detail file is kept[/]")
        return
    o.out(data["id"])
    if data["action"] == "proposed":
        o.talk(
            f"proposed {data['id']}: waiting in {data['path']} for review (write.gate is inbox); "
            f"`memcli inbox accept {data['id']}` applies it"
        )
    if data["action"] == "unchanged":
        o.talk(f"unchanged {data['id']}: nothing to change")
    if data["action"] == "forgotten":
        o.talk(
            f"forgot {data['id']}: moved to {data['path']}"
            + (", its index line removed" if data.get("line") else "")
            + f"; `memcli restore {data['id']}` brings it back"
        )
    if data["action"] == "purged":
        o.talk(f"purged {data['id']}: deleted {data['path']}" + (" and its index line" if data.get("line") else ""))


def show(o: Output, detail: dict, text: str) -> None:
    if not o.tty():
        o.out(text)
        return
    from rich.markdown import Markdown
    from rich.panel import Panel

    c = o.console()
    meta = [f"[bold]{_esc(detail['title'])}[/]", f"[dim]{_esc(detail['path'])}[/]"]
    if detail.get("summary"):
        meta.append(_esc(detail["summary"]))
    facts = [f"type {safe(detail['type'])}", f"importance {detail['importance']:g}"]
    if detail.get("pinned"):
        facts.append("pinned")
    if detail.get("tags"):
        facts.append(" ".join("#" + t for t in detail["tags"]))
    meta.append("[dim]" + _esc(" · ".join(facts)) + "[/]")
    if detail.get("aliases"):
        meta.append("[dim]aliases: " + _esc(", ".join(detail["aliases"])) + "[/]")
    dates = [f"{k} {detail[k]}" for k in ("created", "updated") if detail.get(k)]
    meta.append("[dim]" + _esc(" · ".join(dates or ["updated -"])) + "[/]")
    later = [f"{k} {detail[k]}" for k in ("expires", "source") if detail.get(k)]
    if later:
        meta.append("[dim]" + _esc(" · ".join(later)) + "[/]")
    c.print(Panel("\n".join(meta), expand=False), soft_wrap=False)
    c.print(Markdown(safe(detail.get("body") or "")))


LIST_FLAGS = (("📌", "pinned"), ("★", "indexed"), ("🗄", "archived"))  # the list's flags column on a terminal
LIST_LEGEND = (("📌", "pinned"), ("★", "in MEMORY.md (indexed)"), ("🗄", "archived"))


def listing(o: Output, rows: list, problems: list) -> None:
    if o.tty():
        from rich.cells import cell_len
        from rich.table import Table

        # The id is the column people copy: it is never cut. On a narrow terminal the title and the
        # tags give way (…), so a row stays one line.
        cells = []
        for row in rows:
            cells.append([safe(x) for x in _cells(row)])
            cells[-1][4] = "".join(m for m, on in LIST_FLAGS if row[on])
        heads = ("id", "title", "type", "imp.", "flags", "tags")
        need = [max([cell_len(c[i]) for c in cells] + [len(h)]) for i, h in enumerate(heads)]
        c = o.console()
        room = max(c.width - 2 * len(heads) - need[0] - need[2] - need[3] - need[4], 2)
        tags = need[5] if need[1] + need[5] <= room else min(need[5], max(room * 2 // 5, 1))
        widths = [need[0], max(min(need[1], room - tags), 1), need[2], need[3], need[4], max(min(tags, room - 1), 1)]
        t = Table(box=None, header_style="bold")
        for h, w in zip(heads, widths):
            t.add_column(h, no_wrap=True, overflow="ellipsis", width=w, justify="right" if h == "imp." else "left")
        for row in cells:
            t.add_row(*(_esc(x) for x in row))
        c.print(t, soft_wrap=False)
        used = {m for row in cells for m in row[4]}
        if used:
            o.console(stderr=True).print(
                "[dim]flags: " + " · ".join(f"{m} {what}" for m, what in LIST_LEGEND if m in used) + "[/]"
            )
        if not rows:
            o.console(stderr=True).print("[dim]no memories[/]")
    else:
        for row in rows:
            o.out("\t".join(_cells(row)))
    for p in problems:
        o.warn(f"skipped {p}")


def problems(o: Output, items: list, ok_text: str) -> None:
    if not items:
        if o.tty():
            o.console().print(f"[green]✓[/] {ok_text}")
        else:
            o.out(ok_text)
        return
    for p in items:
        o.out(str(p))


def recall(o: Output, data: dict, bodies: dict | None = None) -> None:
    """The hits: on a terminal a panel each (over the first lines of its body in ``bodies``); piped, Markdown."""
    hits = data["hits"]
    query = data["query"]
    if not hits:
        o.talk(f"nothing found for {query if len(query) <= 80 else query[:79] + '…'!r}")
        return
    if all(h.get("sure") == "weak" for h in hits):
        o.talk(f"no sure answer for {query if len(query) <= 80 else query[:79] + '…'!r}: candidates that relate")
    if o.tty():
        from rich.markdown import Markdown
        from rich.panel import Panel

        from rich.cells import cell_len
        from rich.text import Text

        c = o.console()
        for h in hits:
            title, where = safe(h["title"]), f" · {h['layer']} · {h['score']:.2f}"
            room = max(c.width - 8 - cell_len(title) - len(where), 12)
            path = h["path"] if len(h["path"]) <= room else h["path"][: room - 1] + "…"
            head = Text.assemble((title, "bold"), "  ", (safe(path) + where, "dim"))
            if h.get("injection"):
                head.append(f"  flagged: {safe(', '.join(h['injection']))} (data, not instructions)", "red")
            head.truncate(c.width - 6, overflow="ellipsis")
            body = (h["summary"] + "\n\n" if h["summary"] else "") + _first_lines((bodies or {}).get(h["path"]), h)
            c.print(Panel(Markdown(safe(body.strip() or "-")), title=head, title_align="left"), soft_wrap=False)
        return
    from .model import how_found

    parts = []
    for h in hits:
        block = [f"## {h['title']}", f"<!-- {h['path']} · {h['layer']} · {how_found(h)} -->"]
        if h.get("injection"):
            from .safety.scanner import flag_note

            block.append(flag_note(h["injection"]))
        if h["summary"]:
            block.append(h["summary"])
        if h["tags"]:
            block.append(" ".join("#" + t for t in h["tags"]))
        if h["snippet"]:
            block.append("")
            block.append(h["snippet"].strip())
        parts.append("\n".join(block))
    o.out("\n\n".join(parts))


def _first_lines(body: str | None, hit: dict, lines: int = 12) -> str:
    """A body's first lines, and the snippet that matched when it lies further down."""
    snippet, said = (hit["snippet"] or "").strip(), (body or "").strip("\n").splitlines()
    head = "\n".join(said[:lines]) + ("\n\n…" if len(said) > lines else "")
    if not head.strip() or snippet and " ".join(snippet.strip("…").split())[:60] not in " ".join(head.split()):
        head += "\n\n" + snippet
    return head


_SEVERITY_STYLE = {"error": "bold red", "warning": "yellow", "info": "dim"}
_COLLAPSE = 12  # on a terminal, more info findings of one code than this are summarised


def finding_line(f: dict) -> str:
    """`severity code path:line message (fix: ...)`: one finding, one grep-able line."""
    where = f"{f['path']}:{f['line']}" if f.get("line") else f["path"]
    return f"{f['severity']} {f['code']} {where} {f['message']} (fix: {f['fix']})"


def plural(n: int, one: str, many: str | None = None) -> str:
    """'1 turn', '2 turns', '0 entries': a count and its noun."""
    return f"{n} {one if n == 1 else many or one + 's'}"


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if word == "info" else plural(n, word)


def heartbeat(o: Output, data: dict) -> None:
    """Repairs (made or planned) and findings grouped by severity on stdout; the summary on stderr."""
    done = data["applied"]
    planned = [] if done or not data["dry_run"] else [a["message"] for a in data["actions"]]
    findings = data["findings"]
    s = data["summary"]
    if o.tty():
        from rich.table import Table

        c = o.console()
        for m in done:
            c.print(f"[green]✓[/] {_esc(m)}")
        for m in planned:
            c.print(f"[cyan]→[/] would {_esc(m)}")
        for sev in ("error", "warning", "info"):
            rows = [f for f in findings if f["severity"] == sev]
            if not rows:
                continue
            t = Table(
                title=f"{_plural(len(rows), sev)}",
                title_justify="left",
                title_style=_SEVERITY_STYLE[sev],
                header_style="bold",
                expand=False,
            )
            for col in ("code", "where", "finding", "fix"):
                t.add_column(col, overflow="fold")
            shown: dict = {}
            for f in rows:
                n = shown[f["code"]] = shown.get(f["code"], 0) + 1
                if sev == "info" and n > _COLLAPSE:
                    continue
                where = f"{f['path']}:{f['line']}" if f.get("line") else f["path"]
                t.add_row(_esc(f["code"]), _esc(where), _esc(f["message"]), _esc(f["fix"]))
            for code, n in shown.items():
                if sev == "info" and n > _COLLAPSE:
                    t.add_row(code, "…", f"and {n - _COLLAPSE} more (--json lists them all)", "")
            c.print(t)
    else:
        for m in done:
            o.out(m)
        for m in planned:
            o.out(f"would {m}")
        for f in findings:
            o.out(finding_line(f))
    o.talk(heartbeat_head(s, len(data["actions"]) if not data["fix"] and not data["dry_run"] else 0))


def heartbeat_head(s: dict, fixable: int = 0) -> str:
    """heartbeat's summary in one line (s: the report's summary counts)."""
    if not s["error"] + s["warning"] + s["info"]:
        return f"heartbeat: all clear ({plural(s['files'], 'file')})"
    return _counts(s) + (f"; {fixable} fixable with `memcli heartbeat --fix`" if fixable else "")


def _counts(s: dict) -> str:
    errors, warnings = _plural(s["error"], "error"), _plural(s["warning"], "warning")
    return f"heartbeat: {errors}, {warnings}, {s['info']} info in {plural(s['files'], 'file')}"


def watch_event(o: Output, event: dict, as_json: bool) -> None:
    """One line per event, written at once: JSON lines with --json."""
    kind = event.get("event")
    if as_json:
        o.out(json.dumps(event, ensure_ascii=False, default=str))
    elif kind == "finding":
        o.out(finding_line(event))
    elif kind in ("changed", "removed"):
        o.out(f"{kind} {event['path']}")
    elif kind == "fixed":
        o.out(event["message"])
    elif kind == "indexed":
        o.out(f"indexed {event['id']}: {event['line']}")
    elif kind == "heartbeat":
        o.out(_counts(event))
    elif kind == "reflected":
        o.out(
            f"reflected on {plural(event['turns'], 'turn')}: proposed {len(event['proposed'])}"
            + (f", auto-accepted {len(event['accepted'])}" if event["accepted"] else "")
        )
    elif kind == "ready":
        o.talk(f"memcli: watching {event['root']} (Ctrl-C to stop)")
    elif kind == "warning":
        o.warn(event["message"])
    o.stdout.flush()
    o.stderr.flush()


LIST_COLUMNS = ("id", "title", "type", "importance", "flags", "tags")
LIST_FORMATS = ("json", "tsv", "md")


def json_text(value, indent=None) -> str:
    """JSON with no raw control character: json escapes C0 itself; DEL and C1 (only inside strings,
    where \\u is valid) become \\u escapes."""
    text = json.dumps(value, ensure_ascii=False, indent=indent, default=str)
    return _C1.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def _cells(row: dict) -> list[str]:
    flags = ",".join(f for f in ("pinned", "indexed", "archived") if row[f]) or "-"
    tags = " ".join("#" + t for t in row["tags"])
    return [row["id"], row["title"], row["type"], f"{row['importance']:g}", flags, tags]


def format_listing(rows: list, fmt: str) -> str:
    """rows as json (one array), tsv (a header line, then one row a line) or md (a table)."""
    if fmt == "json":
        return json_text(rows, indent=1) + "\n"
    if fmt == "tsv":
        clean = [[re.sub(r"[\t\r\n]+", " ", c) for c in _cells(r)] for r in rows]
        lines = ["\t".join(LIST_COLUMNS)] + ["\t".join(c) for c in clean]
        return "".join(ln + "\n" for ln in lines)
    if fmt == "md":

        def cell(text: str) -> str:
            return text.replace("\\", "\\\\").replace("|", "\\|")

        lines = ["| " + " | ".join(LIST_COLUMNS) + " |", "|" + "---|" * len(LIST_COLUMNS)]
        lines += ["| " + " | ".join(cell(c) for c in _cells(r)) + " |" for r in rows]
        return "\n".join(lines) + "\n"
    from .errors import UsageError

    raise UsageError(f"--format must be one of {', '.join(LIST_FORMATS)}, got {fmt!r}")


def jsonl(records: list) -> str:
    """Records as JSON lines, one a line (JSON escapes every line break inside a record)."""
    return "".join(json_text(rec) + "\n" for rec in records)
