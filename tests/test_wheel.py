"""The built wheel ships the templates, the scanner's rules and py.typed: install it in a fresh venv, run
`memcli init` and a write the secret rules refuse; and install it the way users do, with `pipx install`
and `uv tool install` into fresh tool folders, then run the quick start's commands."""

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
    shutil.copytree(
        ROOT_DIR,
        src,
        ignore=shutil.ignore_patterns(
            ".git", ".venv", "build", "dist", "*.egg-info", "__pycache__", ".pytest_cache", ".hypothesis"
        ),
    )
    build = [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(dist), str(src)]
    subprocess.run(build, check=True, capture_output=True, timeout=300, cwd=tmp_path)
    wheels = list(dist.glob("memcli_md-*.whl"))
    assert len(wheels) == 1
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=True)
    py = env_dir / "bin" / "python"
    subprocess.run(
        [str(py), "-m", "pip", "install", "--no-deps", "-q", str(wheels[0])],
        check=True,
        capture_output=True,
        timeout=300,
    )
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
    where = subprocess.run(
        [str(py), "-c", "import memcli; print(memcli.__file__)"],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        check=True,
    ).stdout
    assert str(env_dir) in where
    root = tmp_path / "root"
    res = subprocess.run(
        [str(py), "-m", "memcli", "init", str(root), "--example"],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=120,
    )
    assert res.returncode == 0, res.stderr
    assert (root / "MEMORY.md").read_text() == (ROOT_DIR / "MEMORY.example.md").read_text()
    assert "index:" in (root / "memcli.yaml").read_text()
    assert (root / "memory" / "mysql-charset.md").is_file()
    for args in (
        ["index", "check"],
        ["recall", "charset"],
        ["heartbeat", "--check"],
        ["should-recall", "上次那个"],
        ["recall", "alembic", "--layer", "details"],
    ):
        res = subprocess.run(
            [str(py), "-m", "memcli", "--root", str(root), *args],
            capture_output=True,
            text=True,
            env=env,
            cwd=tmp_path,
            timeout=120,
        )
        assert res.returncode == 0, (args, res.stdout + res.stderr)
    # the scanner's rules are data files: the wheel ships them
    rng = random.Random(1)
    token = "gh" + "p_" + "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(36))
    res = subprocess.run(
        [str(py), "-m", "memcli", "--root", str(root), "remember", "deploy", f"push with {token}"],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=120,
    )
    assert res.returncode == 4 and "GitHub token" in res.stderr, res.stdout + res.stderr


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    """The wheel, built once from a clean copy of the checkout."""
    tmp = tmp_path_factory.mktemp("wheel")
    src = tmp / "src"
    shutil.copytree(
        ROOT_DIR,
        src,
        ignore=shutil.ignore_patterns(
            ".git", ".venv*", "build", "dist", "*.egg-info", "__pycache__", ".pytest_cache", ".hypothesis"
        ),
    )
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp / "dist"), str(src)],
        check=True,
        capture_output=True,
        timeout=300,
        cwd=tmp,
    )
    (found,) = (tmp / "dist").glob("memcli_md-*.whl")
    return found


def _tool_env(tmp_path) -> dict:
    """A user's environment as a fresh machine has it: a home of its own, no virtual environment, no
    PYTHONPATH, no memcli settings."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("MEMCLI_", "PIPX_", "UV_")) and k not in ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME")
    }
    env["HOME"] = str(tmp_path / "home")
    (tmp_path / "home").mkdir(exist_ok=True)
    return env


@pytest.mark.slow
@pytest.mark.parametrize("tool", ["pipx", "uv"])
def test_pipx_and_uv_tool_install_the_wheel_and_the_quick_start_runs(wheel, tool, tmp_path):
    env = _tool_env(tmp_path)
    tools = tmp_path / "tools"
    bin_dir = tmp_path / "bin"
    if tool == "pipx":
        env.update(PIPX_HOME=str(tools), PIPX_BIN_DIR=str(bin_dir), PIPX_MAN_DIR=str(tmp_path / "man"))
        cmd = [sys.executable, "-m", "pipx", "install", str(wheel)]
        venv_python = tools / "venvs" / "memcli-md" / "bin" / "python"
    else:
        # this interpreter, never one uv would download
        env.update(UV_TOOL_DIR=str(tools), UV_TOOL_BIN_DIR=str(bin_dir), UV_PYTHON_DOWNLOADS="never")
        cmd = [sys.executable, "-m", "uv", "tool", "install", "--python", sys.executable, str(wheel)]
        venv_python = tools / "memcli-md" / "bin" / "python"
    res = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=tmp_path, timeout=600)
    assert res.returncode == 0, res.stdout + res.stderr
    memcli = bin_dir / "memcli"
    assert memcli.is_file(), sorted(p.name for p in bin_dir.iterdir())

    def run(*args):
        p = subprocess.run([str(memcli), *args], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120)
        assert p.returncode == 0, (args, p.stdout + p.stderr)
        return p

    assert run("--version").stdout.strip() == f"memcli {__import__('memcli').__version__}"
    # the command runs the wheel's package, not this checkout's, and the package is typed
    where = subprocess.run(
        [
            str(venv_python),
            "-c",
            "import memcli, pathlib; p = pathlib.Path(memcli.__file__).parent; print(p, (p / 'py.typed').is_file())",
        ],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        check=True,
    ).stdout.split()
    assert where[0].startswith(str(tools)) and where[1] == "True", where
    # the quick start (README.md): an example root, and a Chinese question about an English note
    run("init", "demo", "--example")
    said = run("--root", "demo", "recall", "MySQL中文查不到数据").stdout
    assert said.startswith("## MySQL charset double encoding"), said
