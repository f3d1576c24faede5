"""The real MCP clients, pinned, installed with npm into a cache folder outside the repository.

    python benchmarks/clients/install.py          # install (or find) them; prints the folder

The folder is $MEMCLI_CLIENTS_CACHE, else ~/.cache/memcli-clients, with one subfolder per set of
pins, reused while its packages are the pinned versions. npm runs no package's install script but
Claude Code's own (`install.cjs`, which copies its native binary out of its platform package,
offline), and prints no update notice, audit or funding talk.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

PINS = {
    "@anthropic-ai/claude-code": "2.1.332",
    "@openai/codex": "0.171.0",
    "@google/gemini-cli": "0.61.0",
    "@modelcontextprotocol/inspector": "2.12.0",
}
BINARIES = {
    "claude": "@anthropic-ai/claude-code",
    "codex": "@openai/codex",
    "gemini": "@google/gemini-cli",
    "mcp-inspector": "@modelcontextprotocol/inspector",
}
INSTALL_TIMEOUT = 900  # seconds: a cold install downloads about 1 GB

# Read when this module is imported, before a test gives the process another HOME.
CACHE = Path(os.environ.get("MEMCLI_CLIENTS_CACHE") or Path.home() / ".cache" / "memcli-clients")


class ClientsUnavailable(Exception):
    """node or npm is missing, or the install failed (the message says which and why)."""


def folder() -> Path:
    key = hashlib.sha256(json.dumps(PINS, sort_keys=True).encode()).hexdigest()[:12]
    return CACHE / key


def installed(where: Path) -> bool:
    for package, version in PINS.items():
        meta = where / "node_modules" / package / "package.json"
        try:
            if json.loads(meta.read_text())["version"] != version:
                return False
        except (OSError, ValueError, KeyError):
            return False
    if not all((where / "node_modules" / ".bin" / b).exists() for b in BINARIES):
        return False
    claude = where / "node_modules" / ".bin" / "claude"
    return claude.stat().st_size > 1_000_000  # the native binary, not the placeholder script


def npm_env() -> dict:
    env = dict(os.environ)
    env.update(
        npm_config_update_notifier="false",
        npm_config_fund="false",
        npm_config_audit="false",
        npm_config_loglevel="error",
    )
    return env


def ensure() -> Path:
    """The folder holding node_modules/.bin/{claude,codex,gemini,mcp-inspector}, installing the pinned
    versions once (one installer at a time: concurrent test workers wait for it)."""
    for tool in ("node", "npm"):
        if shutil.which(tool) is None:
            raise ClientsUnavailable(f"{tool} is not on PATH")
    where = folder()
    if installed(where):
        return where
    where.mkdir(parents=True, exist_ok=True)
    with open(where.parent / ".install.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if installed(where):
            return where
        (where / "package.json").write_text(
            json.dumps({"name": "memcli-clients", "private": True, "dependencies": PINS}, indent=1) + "\n"
        )
        try:
            r = subprocess.run(
                ["npm", "install", "--no-audit", "--no-fund", "--ignore-scripts", "--no-save"],
                cwd=where,
                capture_output=True,
                text=True,
                timeout=INSTALL_TIMEOUT,
                env=npm_env(),
            )
        except subprocess.TimeoutExpired:
            raise ClientsUnavailable(f"npm install in {where} took over {INSTALL_TIMEOUT} s") from None
        if r.returncode == 0:  # Claude Code's postinstall: its native binary into bin/
            r = subprocess.run(
                ["node", "install.cjs"],
                cwd=where / "node_modules" / "@anthropic-ai" / "claude-code",
                capture_output=True,
                text=True,
                timeout=120,
                env=npm_env(),
            )
        if r.returncode != 0 or not installed(where):
            tail = "\n".join((r.stderr or r.stdout).strip().splitlines()[-15:])
            raise ClientsUnavailable(f"installing the clients in {where} failed (exit {r.returncode}):\n{tail}")
    return where


def binary(where: Path, name: str) -> str:
    return str(where / "node_modules" / ".bin" / name)


if __name__ == "__main__":
    try:
        print(ensure())
    except ClientsUnavailable as e:
        sys.exit(f"clients: {e}")
