"""The built wheel ships the templates and the scanner's rules: install it in a fresh venv, run `memcli init`
and a write the secret rules refuse."""

import os
import random
import shutil
import string
import subprocess
import sys
import venv

import pytest

from tests.conftest import ROOT_DIR, child_env


@pytest.mark.slow
def test_wheel_ships_templates(tmp_path):
    dist = tmp_path / "dist"
    src = tmp_path / "src"
    # Build from a clean copy: a stale build/ folder in the checkout must not hide a missing package.
    shutil.copytree(ROOT_DIR, src, ignore=shutil.ignore_patterns(".git", ".venv", "build", "dist", "*.egg-info",
                                                                 "__pycache__", ".pytest_cache", ".hypothesis"))
    build = [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(dist), str(src)]
    subprocess.run(build, check=True, capture_output=True, timeout=300, cwd=tmp_path)
    wheels = list(dist.glob("memcli-*.whl"))
    assert len(wheels) == 1
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=True)
    py = env_dir / "bin" / "python"
    subprocess.run([str(py), "-m", "pip", "install", "--no-deps", "-q", str(wheels[0])], check=True,
                   capture_output=True, timeout=300)
    # The fresh venv has only memcli; its dependencies are linked from this interpreter's site-packages,
    # leaving out any memcli installed there, so only the wheel's memcli can be imported.
    import typer

    site = os.path.dirname(os.path.dirname(typer.__file__))
    deps = tmp_path / "deps"
    deps.mkdir()
    for name in os.listdir(site):
        if name.startswith(("memcli", "__editable__", "_memcli")) or name.endswith(".pth") or name == "__pycache__":
            continue
        (deps / name).symlink_to(os.path.join(site, name))
    env = child_env()
    env["PYTHONPATH"] = str(deps)
    where = subprocess.run([str(py), "-c", "import memcli; print(memcli.__file__)"], capture_output=True,
                           text=True, env=env, cwd=tmp_path, check=True).stdout
    assert str(env_dir) in where
    root = tmp_path / "root"
    res = subprocess.run([str(py), "-m", "memcli", "init", str(root), "--example"], capture_output=True, text=True,
                         env=env, cwd=tmp_path, timeout=120)
    assert res.returncode == 0, res.stderr
    assert (root / "MEMORY.md").read_text() == (ROOT_DIR / "MEMORY.example.md").read_text()
    assert "index:" in (root / "memcli.yaml").read_text()
    assert (root / "memory" / "mysql-charset.md").is_file()
    for args in (["index", "check"], ["recall", "charset"], ["heartbeat", "--check"], ["should-recall", "上次那个"],
                 ["recall", "alembic", "--layer", "details"]):
        res = subprocess.run([str(py), "-m", "memcli", "--root", str(root), *args], capture_output=True,
                             text=True, env=env, cwd=tmp_path, timeout=120)
        assert res.returncode == 0, (args, res.stdout + res.stderr)
    # the scanner's rules are data files: the wheel ships them
    rng = random.Random(1)
    token = "gh" + "p_" + "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(36))
    res = subprocess.run([str(py), "-m", "memcli", "--root", str(root), "remember", "deploy", f"push with {token}"],
                         capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120)
    assert res.returncode == 4 and "GitHub token" in res.stderr, res.stdout + res.stderr
