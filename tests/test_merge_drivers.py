"""The git merge drivers on what they do not own (issue 16, item 9): a file that is not UTF-8
is left to git's own line merge, byte for byte; long files merge in near-linear time."""

import random
import time

from hypothesis import given, settings
from hypothesis import strategies as st

from memcli.gitmerge import main
from memcli.usecases.merge import merge_detail, merge_index
from tests.conftest import examples


def write(tmp_path, **files):
    paths = {}
    for name, data in files.items():
        p = tmp_path / name
        p.write_bytes(data)
        paths[name] = str(p)
    return paths


LATIN = "caf\xe9\nna\xefve\nr\xe9sum\xe9\nd\xe9j\xe0 vu\n".encode("latin-1")


def test_09_a_file_that_is_not_utf8_keeps_its_bytes(tmp_path):
    ours = LATIN.replace(b"caf\xe9", b"caf\xe9 cr\xe8me")
    theirs = LATIN.replace(b"d\xe9j\xe0 vu", b"d\xe9j\xe0 vu, encore")
    p = write(tmp_path, base=LATIN, ours=ours, theirs=theirs)
    for kind, path in (("detail", "memory/x.md"), ("index", "MEMORY.md"), ("episode", "memory/episodes/2026-01-01.md")):
        (tmp_path / "ours").write_bytes(ours)
        args = [kind, p["base"], p["ours"], p["theirs"], *(["7"] if kind == "detail" else []), path]
        assert main(args) == 0
        merged = (tmp_path / "ours").read_bytes()
        assert merged == LATIN.replace(b"caf\xe9", b"caf\xe9 cr\xe8me").replace(
            b"d\xe9j\xe0 vu", b"d\xe9j\xe0 vu, encore"
        )
        assert "\ufffd".encode() not in merged


def test_09_a_conflict_in_a_file_that_is_not_utf8_gets_markers_and_keeps_bytes(tmp_path, capsys):
    ours = LATIN.replace(b"na\xefve", b"na\xefve (ours)")
    theirs = LATIN.replace(b"na\xefve", b"na\xefve (theirs)")
    p = write(tmp_path, base=LATIN, ours=ours, theirs=theirs)
    assert main(["detail", p["base"], p["ours"], p["theirs"], "9", "memory/x.md"]) == 1
    merged = (tmp_path / "ours").read_bytes()
    assert b"<<<<<<<<< ours\nna\xefve (ours)\n=========\nna\xefve (theirs)\n>>>>>>>>> theirs\n" in merged
    assert merged.startswith(b"caf\xe9\n") and merged.endswith(b"d\xe9j\xe0 vu\n")
    assert "memcli resolve x" in capsys.readouterr().err


def _lines(n, tag, rng):
    return [
        f"{tag} line {i}: " + " ".join(rng.choice("alpha beta gamma delta".split()) for _ in range(4)) if i % 7 else ""
        for i in range(n)
    ]


def _detail(summary, updated, body):
    return (
        f"---\nid: long\ntitle: Long\nsummary: {summary}\ntags: []\naliases: []\ntype: note\nimportance: 0.5\n"
        f"pinned: false\ncreated: 2026-01-01T00:00:00Z\nupdated: {updated}\nexpires: null\nsource: null\n---\n"
        + "\n".join(body)
        + "\n"
    )


def test_09_long_bodies_and_indexes_merge_in_near_linear_time():
    """40,000 lines: each side edits one line and adds 20,000 of its own at the same place.
    (Before: 26 s for the edits and 12 s for the additions; git merge-file itself ~0.05 s.)"""
    rng = random.Random(9)
    n = 40_000
    base = _lines(n, "base", rng)
    ours, theirs = list(base), list(base)
    ours[n // 10] += " (edited on ours)"
    theirs[n * 9 // 10] += " (edited on theirs)"
    ours[n // 2 : n // 2] = _lines(n // 2, "ours", rng)
    theirs[n // 2 : n // 2] = _lines(n // 2, "theirs", rng)
    t0 = time.process_time()
    text, conflicts = merge_detail(
        _detail("first", "2026-01-01T00:00:00Z", base),
        _detail("ours", "2026-01-02T00:00:00Z", ours),
        _detail("theirs", "2026-01-03T00:00:00Z", theirs),
        "long",
    )
    hand = [x for x in _lines(n // 2, "hand", rng) if x]
    index = merge_index(
        "# MEMORY\n\n" + "\n".join(hand[:10]) + "\n",
        "# MEMORY\n\n" + "\n".join(hand[:5] + hand[10 : n // 4] + hand[5:10]) + "\n",
        "# MEMORY\n\n" + "\n".join(hand[:5] + hand[n // 4 :] + hand[5:10]) + "\n",
    )
    spent = time.process_time() - t0
    assert conflicts == 0 and "(edited on ours)" in text and "(edited on theirs)" in text
    assert "ours line 19998:" in text and "theirs line 19998:" in text
    assert hand[-1] in index and hand[10] in index
    assert spent < 3.0, spent


@settings(max_examples=examples(150), deadline=None)
@given(
    st.lists(st.sampled_from(["x", "y", "z", "", "w", "v"]), max_size=700),
    st.lists(st.sampled_from(["x", "y", "z", "", "u"]), max_size=700),
)
def test_09_matching_blocks_are_common_lines_in_order(a, b):
    from memcli.merge3 import matching_blocks

    blocks = matching_blocks(a, b)
    assert blocks[-1] == (len(a), len(b), 0)
    i0 = j0 = 0
    for i, j, n in blocks[:-1]:
        assert n > 0 and i >= i0 and j >= j0 and a[i : i + n] == b[j : j + n]
        i0, j0 = i + n, j + n


# ---------------------------------------------------------------- only memcli's files (issue 31)


def test_31_a_driver_refuses_a_file_memcli_does_not_keep(tmp_path, capsys):
    text = b"x = 1\n"
    p = write(tmp_path, base=text, ours=b"x = 2\n", theirs=b"x = 3\n")
    for kind, path in (("index", "app.py"), ("detail", "src/app.md"), ("episode", "memory/x.md"), ("index", "")):
        args = [kind, p["base"], p["ours"], p["theirs"], *(["7"] if kind == "detail" else []), path]
        assert main(args) == 2
        assert (tmp_path / "ours").read_bytes() == b"x = 2\n"  # left as git gave it
    assert "is not a file memcli's index driver merges" in capsys.readouterr().err


def test_31_a_gitattributes_line_cannot_send_a_code_file_to_memcli(tmp_path, git_env):
    """`app.py merge=memcli-index` committed, both clones change the same line: `git pull` reports
    a conflict in app.py (before, the index driver merged it cleanly, keeping both lines), and
    heartbeat names the line."""
    import json

    from tests.conftest import git, invoke, shared_origin

    def mc(root, *args):
        return invoke(["--root", root, *args])

    clone = shared_origin(tmp_path, mc)
    victim, evil = clone("victim"), clone("evil")
    (evil / "app.py").write_text("DEBUG = False\n")
    with open(evil / ".gitattributes", "a") as f:
        f.write("app.py merge=memcli-index\n")
    git(evil, "add", "-A")
    git(evil, "commit", "-qm", "app")
    git(evil, "push", "-q", "origin", "HEAD")
    git(victim, "pull", "-q", "--no-rebase")
    (victim / "app.py").write_text("DEBUG = True  # here\n")
    git(victim, "commit", "-qam", "mine")
    (evil / "app.py").write_text("DEBUG = 'verbose'\n")
    git(evil, "commit", "-qam", "theirs")
    git(evil, "push", "-q", "origin", "HEAD")
    r = git(victim, "pull", "--no-rebase", "--no-edit", check=False)
    assert r.returncode != 0 and "CONFLICT" in r.stdout + r.stderr and "app.py" in r.stdout + r.stderr
    assert git(victim, "ls-files", "-u", "--", "app.py").stdout.strip()  # unmerged, for a person
    assert "not a file memcli's index driver merges" in r.stderr
    found = json.loads(mc(victim, "heartbeat", "--json").stdout)["data"]["findings"]
    (bad,) = [f for f in found if f["code"] == "git-attributes-foreign"]
    assert bad["path"] == ".gitattributes" and "app.py merge=memcli-index" in bad["message"] and bad["fix"]
