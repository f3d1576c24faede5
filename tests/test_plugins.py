"""Plugins by entry points: the test plugin (tests/plugins/memcli-quokka), installed by pip into a
folder on PYTHONPATH, adds a recall layer, a heartbeat check, a command, an embedding provider and
a secret rule, and a turn loads only what it needs of it."""

import base64
import hashlib
import json
import os
import re
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest

from memcli import plugins
from memcli.usecases.init import init_root
from tests.conftest import ROOT_DIR, loaded_modules, run_memcli

PLUGIN = ROOT_DIR / "tests" / "plugins" / "memcli-quokka"


def build_wheel(project: Path, dist: Path) -> Path:
    """A wheel of a pure-Python project whose pyproject names one package (what `pip wheel` makes,
    without a build backend: this runs offline and in milliseconds)."""
    meta = (project / "pyproject.toml").read_text(encoding="utf-8")
    name = re.search(r'^name = "(.+)"', meta, re.M).group(1)
    version = re.search(r'^version = "(.+)"', meta, re.M).group(1)
    groups = re.findall(r'^\[project\.entry-points\."(.+)"\]\n((?:.+ = .+\n)+)', meta, re.M)
    package = re.search(r'^packages = \["(.+)"\]', meta, re.M).group(1)
    info = f"{name.replace('-', '_')}-{version}.dist-info"
    files = {f"{package}/{p.name}": p.read_bytes() for p in sorted((project / package).glob("*.py"))}
    files[f"{info}/METADATA"] = f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n".encode()
    files[f"{info}/WHEEL"] = b"Wheel-Version: 1.0\nGenerator: memcli-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    files[f"{info}/entry_points.txt"] = "".join(
        f"[{g}]\n{lines.replace(chr(34), '')}\n" for g, lines in groups
    ).encode()
    record = [
        f"{path},sha256={base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b'=').decode()},{len(data)}"
        for path, data in files.items()
    ]
    files[f"{info}/RECORD"] = ("\n".join(record + [f"{info}/RECORD,,"]) + "\n").encode()
    dist.mkdir(parents=True, exist_ok=True)
    wheel = dist / f"{name.replace('-', '_')}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as z:
        for path, data in files.items():
            z.writestr(path, data)
    return wheel


def settle(folder: Path) -> None:
    """Date a freshly written folder a minute back: the plugin cache does not trust a time within
    two seconds of now, and these tests want to see it used."""
    then = time.time_ns() - 60_000_000_000
    for path in [folder, *folder.rglob("*")]:
        os.utime(path, ns=(then, then))


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """The test plugin, installed by pip from its wheel into a folder of its own."""
    work = tmp_path_factory.mktemp("quokka")
    wheel = build_wheel(PLUGIN, work / "dist")
    target = work / "site"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--no-deps",
            "--no-index",
            "--no-cache-dir",
            "-q",
            "--disable-pip-version-check",
            "--target",
            str(target),
            str(wheel),
        ],
        check=True,
        capture_output=True,
        timeout=120,
    )
    settle(target)
    return target


@pytest.fixture
def mem(tmp_path):
    root = tmp_path / "mem"
    init_root(root, example=True)
    return root


def memcli(site, *args, input=None, cwd=None):
    return run_memcli(*args, input=input, env={"PYTHONPATH": str(site)}, cwd=cwd)


def test_its_layer_answers_a_recall(site, mem):
    res = memcli(site, "--root", mem, "recall", "where do quokkas live", "--json")
    env = json.loads(res.stdout)
    assert res.returncode == 0, res.stderr
    assert env["data"]["hits"][0]["layer"] == "quokka" and "Rottnest" in env["data"]["hits"][0]["snippet"]
    assert [t["layer"] for t in env["data"]["trace"]][-1] == "quokka"  # answered before the details layer
    listed = memcli(site, "--root", mem, "recall", "--help")
    assert "quokka" in listed.stdout  # --layer's help names it


def test_its_check_reports_in_heartbeat(site, mem):
    from memcli import Memory

    Memory(mem).remember("Quokka feeding times", "the quokkas are fed at nine")
    env = json.loads(memcli(site, "--root", mem, "heartbeat", "--json").stdout)
    found = [f for f in env["data"]["findings"] if f["code"] == "QUOKKA001"]
    assert [f["path"] for f in found] == ["memory/quokka-feeding-times.md"]


def test_its_command_is_listed_and_runs(site, mem):
    from memcli import Memory

    Memory(mem).remember("Quokka feeding times", "the quokkas are fed at nine")
    assert re.search(r"^\W*quokkas\W", memcli(site, "--help").stdout, re.M)
    res = memcli(site, "--root", mem, "quokkas")
    assert res.returncode == 0 and res.stdout == "1 memories mention a quokka\n", res.stderr


def test_its_rule_refuses_a_write(site, mem):
    token = "qk_" + "k3y9" * 5
    res = memcli(site, "--root", mem, "remember", "Quokka API access", f"use {token} for the feed API")
    assert res.returncode == 4 and "Quokka API token" in res.stderr
    assert not (mem / "memory" / "quokka-api-access.md").exists()
    assert run_memcli("--root", mem, "remember", "Quokka API access", f"use {token}").returncode == 0  # without it


def test_its_embedding_provider_serves_the_semantic_layer(site, mem):
    from memcli.search.semantic import enabled

    if not enabled():
        pytest.skip("the semantic layer needs the semantic extra")
    (mem / ".memcli" / "config.yaml").write_text("embed:\n  provider: quokka-trigrams\n", encoding="utf-8")
    res = memcli(site, "--root", mem, "recall", "mysql charset utf8mb4 encoding", "--layer", "semantic", "--json")
    env = json.loads(res.stdout)
    assert res.returncode == 0, res.stderr
    assert env["data"]["hits"] and all(h["layer"] == "semantic" for h in env["data"]["hits"])
    assert any("embedding" in h["methods"] for h in env["data"]["hits"])
    caches = [p.name for p in (mem / ".memcli" / "semantic").iterdir() if p.is_dir()]
    assert any(name.startswith("quokka-trigrams-64-") for name in caches), caches
    assert env["warnings"] == []


def test_memcli_plugins_lists_it(site):
    env = json.loads(memcli(site, "plugins", "--json").stdout)
    assert [(p["name"], p["dist"], p["hooks"]) for p in env["data"]["plugins"]] == [
        ("quokka", "memcli-quokka", list(plugins.HOOKS))
    ]


def loaded(site, *args, pythonpath=None) -> set:
    return loaded_modules(*args, env={"PYTHONPATH": str(pythonpath or site)}, full=True)[1]


def test_a_turn_loads_only_what_it_needs(site, mem):
    memcli(site, "--root", mem, "recall", "charset")  # finds the plugin, and keeps what it found
    mods = loaded(site, "--root", mem, "recall", "charset")
    assert {"memcli_quokka", "memcli_quokka.layer"} <= mods
    assert not mods & {"importlib.metadata", "memcli_quokka.command", "memcli_quokka.check"}, mods
    mods = loaded(site, "--root", mem, "should-recall", "上次那个方案")
    assert not mods & {"importlib.metadata", "memcli_quokka"}, mods


def fake_plugin(folder: Path, name: str, module_text: str) -> Path:
    """An installed plugin as pip leaves it: a module and a dist-info folder with its entry point."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{name}.py").write_text(module_text, encoding="utf-8")
    info = folder / f"{name}-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1\n", encoding="utf-8")
    (info / "entry_points.txt").write_text(f"[memcli.plugins]\n{name} = {name}\n", encoding="utf-8")
    return folder


def test_a_plugin_in_the_current_folder_is_never_loaded(mem, tmp_path):
    clone = fake_plugin(
        tmp_path / "clone",
        "stowaway",
        "import pathlib\npathlib.Path('RAN').write_text('x')\ndef register_layers(register):\n    pass\n",
    )
    res = run_memcli("--root", mem, "recall", "charset", cwd=clone)  # python -m memcli: the folder is on the path
    assert res.returncode == 0 and not (clone / "RAN").exists()


def test_a_broken_plugin_is_a_warning_not_a_failure(mem, tmp_path):
    folder = fake_plugin(
        tmp_path / "site", "brittle", "def register_layers(register):\n    raise RuntimeError('no layer today')\n"
    )
    res = run_memcli("--root", mem, "recall", "charset", env={"PYTHONPATH": str(folder)})
    assert res.returncode == 0 and "mysql-charset" in res.stdout
    assert "plugin brittle: register_layers failed (RuntimeError: no layer today)" in res.stderr


# ---- the cache of what was found, in this process


@pytest.fixture
def fresh(monkeypatch, tmp_path):
    """memcli.plugins as a new process sees it, with sys.path a folder of this test."""
    folder = tmp_path / "site"
    folder.mkdir()
    monkeypatch.setattr(sys, "path", [str(folder)])
    monkeypatch.setattr(plugins, "_found", None)
    monkeypatch.setattr(plugins, "_loaded", {})
    monkeypatch.setattr(plugins, "_problems", [])
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))

    def restart():
        plugins._found, plugins._loaded, plugins._problems[:] = None, {}, []
        for name in [m for m in sys.modules if m.startswith("counter")]:
            del sys.modules[name]

    yield folder, restart
    for name in [m for m in sys.modules if m.startswith("counter")]:
        del sys.modules[name]


def test_what_was_found_is_kept_until_a_folder_on_the_path_changes(fresh, monkeypatch):
    folder, restart = fresh
    settle(folder)
    assert plugins.installed() == []
    assert json.loads(Path(plugins._cache_path()).read_text())["environments"]  # kept: nothing found
    scans = []
    monkeypatch.setattr(plugins, "_may_hold_plugins", lambda paths: scans.append(paths) or True)
    restart()
    assert plugins.installed() == [] and scans == []  # the cache answered
    fake_plugin(folder, "counter", "def register_checks(register):\n    register('a check')\n")
    now = time.time_ns()  # what installing does to the folder's time (on the clock this process reads)
    os.utime(folder, ns=(now, now))
    restart()
    assert [p["name"] for p in plugins.installed()] == ["counter"] and len(scans) == 1
    restart()
    assert [p["name"] for p in plugins.installed()] == ["counter"] and len(scans) == 2  # too recent to keep
    settle(folder)
    restart()
    assert [p["name"] for p in plugins.installed()] == ["counter"] and len(scans) == 3
    restart()
    got = []
    plugins.call("register_checks", got.append)
    assert got == ["a check"] and len(scans) == 3  # from the cache
    plugins.call("register_layers", got.append)  # a hook it does not have: nothing called
    assert got == ["a check"]


def test_24_calendar_a_folder_dated_ahead_of_the_clock_is_still_kept(fresh, monkeypatch):
    """A path folder whose time is ahead of the clock (a clock set back, files unpacked with future
    times) is kept like an old one: a later install changes its time anyway."""
    folder, restart = fresh
    ahead = time.time_ns() + 3600 * 10**9
    os.utime(folder, ns=(ahead, ahead))
    assert plugins.installed() == []
    assert json.loads(Path(plugins._cache_path()).read_text())["environments"]
    scans = []
    monkeypatch.setattr(plugins, "_may_hold_plugins", lambda paths: scans.append(paths) or True)
    restart()
    assert plugins.installed() == [] and scans == []  # the cache answered


def test_a_plugin_whose_module_changed_is_described_again(fresh):
    folder, restart = fresh
    fake_plugin(folder, "counter", "def register_checks(register):\n    register(1)\n")
    settle(folder)
    assert plugins.installed()[0]["hooks"] == ["register_checks"]
    (folder / "counter.py").write_text(
        "def register_checks(register):\n    register(1)\ndef register_layers(register):\n    register(2)\n",
        encoding="utf-8",
    )
    settle(folder / "counter.py")
    os.utime(folder / "counter.py", ns=(time.time_ns() - 30_000_000_000,) * 2)
    restart()
    assert plugins.installed()[0]["hooks"] == ["register_layers", "register_checks"]


def test_the_public_api_names_resolve_and_load_only_what_they_name():
    code = (
        "import sys; from memcli import api; from memcli.api import Layer; "
        "assert 'memcli.heartbeat' not in sys.modules and 'memcli.core' not in sys.modules; "
        "print(sorted(n for n in api.__all__ if getattr(api, n) is None))"
    )
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert res.returncode == 0 and res.stdout.strip() == "[]", res.stderr
