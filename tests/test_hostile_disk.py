"""A full disk under the index (issue 19, part 5): a real small tmpfs, mounted in a private mount
namespace (`unshare -rm`: no root needed where user namespaces are allowed; skipped where the
test cannot mount). The build that fills it stops with exit 1, "disk full at ..., nothing
changed", never a crash (exit 70 with `database or disk is full` / `cannot rollback`), and the
index is as the previous build left it."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.clihelp import FAKE
from tests.gitrepo import Repo

# A real process in a private mount namespace.
pytestmark = pytest.mark.process

# Run inside the namespace: mount, build small, add files, build again (fills the disk), then read.
DRIVER = r"""
import json, os, subprocess, sys
index, repo, out, size = sys.argv[1:5]
os.makedirs(index, exist_ok=True)
if subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", index]).returncode != 0:
    sys.exit(99)
env = {**os.environ, "CODEVOUCH_INDEX": index}
def cv(*args):
    p = subprocess.run([sys.executable, "-m", "codevouch", *args], cwd=repo, env=env, capture_output=True,
                       text=True, timeout=600)
    return [p.returncode, p.stdout, p.stderr[-3000:]]
steps = {"first": cv("index", "build", *FAKE)}
subprocess.run(["git", "checkout", "-q", "big"], cwd=repo, check=True)
steps["full"] = cv("index", "build", *FAKE)
subprocess.run(["git", "checkout", "-q", "main"], cwd=repo, check=True)
steps["status"] = cv("index", "status", "--json")
steps["lexical"] = cv("search", "small_function", "--mode", "lexical", "--json")
json.dump(steps, open(out, "w"))
"""


def test_a_build_that_fills_the_disk_says_so_and_changes_nothing(tmp_path: Path) -> None:
    unshare = shutil.which("unshare")
    if unshare is None:
        pytest.skip("no unshare(1) to mount a private tmpfs")
    repo = Repo(tmp_path / "repo")
    repo.commit_files({"src/small.py": "def small_function():\n    return 1\n"})
    small = repo.head()
    repo.git("checkout", "-q", "-b", "big")
    repo.commit_files({f"gen/m{i}.py": "".join(f"def f{i}_{j}(x):\n    return x * {i} + {j * 7919}\n\n"
                                               for j in range(30)) for i in range(500)})
    repo.git("checkout", "-q", "main")
    driver = tmp_path / "driver.py"
    driver.write_text(f"FAKE = {FAKE!r}\n" + DRIVER)
    out = tmp_path / "steps.json"
    ran = subprocess.run([unshare, "-rm", sys.executable, str(driver), str(tmp_path / "index"), str(repo.root),
                          str(out), "3m"], capture_output=True, text=True, timeout=900, env=os.environ.copy())
    if ran.returncode == 99 or (ran.returncode != 0 and not out.exists()):
        pytest.skip(f"cannot mount a tmpfs here: {ran.stderr.strip()[-300:]}")
    steps = json.loads(out.read_text())
    assert steps["first"][0] == 0, steps["first"]
    code, _, err = steps["full"]
    assert code == 1, (code, err)
    assert f"disk full at {tmp_path / 'index'}" in err and "nothing changed" in err, err
    assert "unexpected error" not in err and "Traceback" not in err
    [row] = json.loads(steps["status"][1])["branches"]     # main only: branch big never landed
    assert row["commit"] == small, row           # still the previous build's commit
    code, hits, err = steps["lexical"]
    assert code == 0 and json.loads(hits)[0]["path"] == "src/small.py", err
