"""Issue 21.3: one rule for a renamed file, through the real CLI on a real repository.

Identical content at a new path (the same git blob id) is the same code: validate and search
say stale-but-ok (file-renamed) with `current` at the new path, check-refs names the new path
(never the gone one), and drift calls it a rename with identical content. It holds for a
plain `mv` (git sees a deletion and an untracked file) and for `git mv`.
"""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.clihelp import FAKE, cv
from tests.gitrepo import Repo

MULTIPART = ("def encode_multipart(fields):\n    parts = [f'{k}={v}' for k, v in fields.items()]\n"
             "    return '&'.join(parts)\n\n\ndef boundary():\n    return '----x'\n")
FILES = {"pkg/__init__.py": "", "pkg/_multipart.py": MULTIPART,
         "pkg/client.py": "def send(request):\n    return request\n"}


@pytest.mark.parametrize("how", ["mv", "git mv"])
def test_an_identical_rename_is_the_same_code_in_every_command(repo: Repo, index_dir: Path, how: str) -> None:
    repo.commit_files(FILES)
    assert cv("index", "build", *FAKE, cwd=repo.root, index=index_dir).returncode == 0
    if how == "mv":
        os.rename(repo.root / "pkg/_multipart.py", repo.root / "pkg/_multipart_enc.py")
    else:
        repo.git("mv", "pkg/_multipart.py", "pkg/_multipart_enc.py")

    # search: the index's hit at the old path, checked against the working tree.
    out = cv("search", "encode multipart fields", "--json", "-k", "5", "--no-overlay", cwd=repo.root, index=index_dir)
    assert out.returncode == 0, out.stderr
    [hit] = [h for h in json.loads(out.stdout) if h["path"] == "pkg/_multipart.py"]
    assert (hit["verdict"], hit["reason"]) == ("stale-but-ok", "file-renamed")
    assert hit["current"]["path"] == "pkg/_multipart_enc.py" and "def encode_multipart" in hit["code"]
    # With the overlay (the default), the renamed file's code is nowhere history.
    live = cv("search", "encode multipart fields", "--json", "-k", "5", cwd=repo.root, index=index_dir)
    assert live.returncode == 0, live.stderr
    assert all(h["verdict"] != "historical-only" for h in json.loads(live.stdout))

    # validate: the hit as another tool would hand it back.
    checked = cv("validate", "-", "--json", cwd=repo.root, index=index_dir, stdin=json.dumps([hit]))
    assert checked.returncode == 0, checked.stderr
    [result] = json.loads(checked.stdout)
    assert (result["verdict"], result["reason"], result["current"]["path"]) == \
        ("stale-but-ok", "file-renamed", "pkg/_multipart_enc.py")

    # check-refs: the gone path is renamed, and the suggestion is the new path, never the old one.
    refs = cv("check-refs", "-", "--json", cwd=repo.root, index=index_dir,
              stdin="See pkg/_multipart.py#L1-L3 and `pkg/_multipart.py`.\n")
    results = json.loads(refs.stdout)["references"]
    assert [(r["reason"], r["found"]) for r in results] == [("path-renamed", "pkg/_multipart_enc.py")] * 2
    assert all("pkg/_multipart.py" not in (r["suggestion"] or "").replace("pkg/_multipart_enc.py", "")
               for r in results)
    assert results[0]["suggestion"] == "renamed to pkg/_multipart_enc.py; now at pkg/_multipart_enc.py#L1-L3"

    # drift: a rename, the content identical.
    drift = cv("drift", cwd=repo.root, index=index_dir)
    assert drift.returncode == 0, drift.stderr
    assert "renamed pkg/_multipart.py -> pkg/_multipart_enc.py (content identical: the same code at a new path)" \
        in drift.stdout.splitlines()


def test_check_refs_never_suggests_a_path_the_working_tree_lost(repo: Repo, index_dir: Path) -> None:
    """A deleted file still in git's index is no suggestion: "did you mean" names files that exist."""
    repo.commit_files(FILES)
    (repo.root / "pkg/_multipart.py").unlink()
    refs = cv("check-refs", "-", "--json", cwd=repo.root, index=index_dir, stdin="See `pkg/_multipart.py`.\n")
    [result] = json.loads(refs.stdout)["references"]
    assert result["reason"] == "path-deleted"
    assert "pkg/_multipart.py" not in (result["suggestion"] or "")
