"""Nothing an agent can call reads outside the repository: checked with an audit hook in a real process."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.gitrepo import Repo

# Runs in a child process so the hook sees every open() of the validator and check-refs paths.
PROBE = r"""
import json, sys
secret = sys.argv[2]
opened = []
def hook(event, args):
    if event in ("open", "os.listdir", "os.scandir") and args and isinstance(args[0], (str, bytes)):
        path = args[0].decode() if isinstance(args[0], bytes) else args[0]
        if secret in path:
            opened.append((event, path))
sys.addaudithook(hook)
from codevouch import Index
idx = Index(sys.argv[1])
snippets = json.loads(sys.argv[3])
results = idx.validate(snippets)
refs = idx.check_refs(sys.argv[4])
print(json.dumps({"opened": opened, "reasons": [r.reason for r in results]}))
"""


@pytest.mark.process
def test_validate_and_check_refs_never_open_files_outside_the_repository(repo: Repo, tmp_path: Path) -> None:
    secret = tmp_path / "secret-outside"
    secret.mkdir()
    (secret / "creds.py").write_text("def token():\n    return 'hunter2'\n")
    repo.commit(**{"app.py": "def run():\n    return 1\n"})
    os.symlink(secret, repo.root / "linked")               # a directory symlink out of the repo
    os.symlink(secret / "creds.py", repo.root / "creds.py")  # a file symlink out of the repo
    head = repo.head()
    snippets = [
        {"path": "../secret-outside/creds.py", "text": "def token():"},
        {"path": str(secret / "creds.py"), "commit": head},
        {"path": "linked/creds.py", "symbol": "token"},
        {"path": "creds.py", "text": "    return 'hunter2'"},
        {"path": "app.py", "commit": head, "text": "def run():"},
    ]
    answer = ("See `token` in ../secret-outside/creds.py#L1-L2, linked/creds.py:1, "
              f"{secret / 'creds.py'}:2 and creds.py#L1.\n")
    out = subprocess.run([sys.executable, "-c", PROBE, str(repo.root), str(secret), json.dumps(snippets), answer],
                         capture_output=True, text=True, timeout=120, env=dict(os.environ))
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout.strip().splitlines()[-1])
    assert report["opened"] == []
    # The hostile paths were refused, and the repository's own file was still checked.
    assert report["reasons"][:4] == ["outside-repo"] * 4
    assert report["reasons"][4] == "same-commit"
