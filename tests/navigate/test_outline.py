"""`codevouch outline`: what a file defines now, with its current lines; refused paths never read."""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from tests.clihelp import cv
from tests.gitrepo import Repo
from tests.navigate.scenario import edited


@pytest.fixture(scope="module")
def scene(tmp_path_factory: pytest.TempPathFactory) -> tuple[Repo, Path]:
    base = tmp_path_factory.mktemp("outline")
    return edited(base / "repo", base / "index"), base / "index"


def _outline(scene: tuple[Repo, Path], path: str) -> dict[str, Any]:
    repo, index_dir = scene
    out = cv("outline", path, "--json", cwd=repo.root, index=index_dir)
    assert out.returncode == 0, out.stderr
    answer: dict[str, Any] = json.loads(out.stdout)
    return answer


def test_the_edited_file_s_current_lines(scene: tuple[Repo, Path]) -> None:
    [entry] = _outline(scene, "shop/pricing.py")["entries"]
    assert entry == {"path": "shop/pricing.py", "kind": "function", "name": "total", "signature": "def total(items):",
                     "start_line": 4, "end_line": 6}
    orders = _outline(scene, "shop/orders.py")["entries"]
    assert [(e["kind"], e["name"], e["start_line"], e["end_line"]) for e in orders] == [
        ("class", "OrderService", 1, 4), ("method", "OrderService.cancel_order", 2, 4)]


def test_go_and_a_directory(scene: tuple[Repo, Path]) -> None:
    server = _outline(scene, "srv/server.go")["entries"]
    assert [(e["kind"], e["name"], e["start_line"]) for e in server] == [
        ("class", "Server", 3), ("function", "NewServer", 5), ("method", "Server.Start", 9)]
    folder = _outline(scene, "srv")
    assert [(e["path"], e["name"]) for e in folder["entries"]] == [
        ("srv/extra.go", "Fresh"), ("srv/main.go", "run"), ("srv/server.go", "Server"), ("srv/server.go", "NewServer")]
    repo, index_dir = scene
    whole = _outline(scene, ".")
    assert whole["path"] == "." and ("srv/extra.go", "Fresh") in [(e["path"], e["name"]) for e in whole["entries"]]
    assert not any(e["path"].startswith("secret/") for e in whole["entries"])     # ignored: not listed, not read
    text = cv("outline", "shop/pricing.py", cwd=repo.root, index=index_dir)
    assert text.stdout == "L4-L6 function total: def total(items):\n"


def test_paths_refused_and_never_read(scene: tuple[Repo, Path], tmp_path: Path) -> None:
    repo, index_dir = scene
    outside = tmp_path / "outside.py"
    outside.write_text("def leaked():\n    pass\n")
    os.symlink(outside, repo.root / "link.py")
    os.mkfifo(repo.root / "pipe.py")
    try:
        for path, said in (("../outside.py", "outside the repository"), (str(outside), "outside the repository"),
                           ("link.py", "outside the repository"), ("pipe.py", "FIFO"),
                           ("secret/hidden.py", "ignored by git"), ("gone.py", "not a file")):
            out = cv("outline", path, cwd=repo.root, index=index_dir, timeout=60)
            assert out.returncode == 2 and said in out.stderr, (path, out.stderr)
            assert "leaked" not in out.stdout + out.stderr and "never read" not in out.stdout
    finally:
        (repo.root / "link.py").unlink()
        (repo.root / "pipe.py").unlink()


def test_escapes_in_names_and_signatures(scene: tuple[Repo, Path]) -> None:
    repo, index_dir = scene
    repo.write("odd.py", "def f(a='\x1b[31m'):\n    pass\n")
    try:
        out = cv("outline", "odd.py", cwd=repo.root, index=index_dir)
        assert out.returncode == 0 and "\x1b" not in out.stdout and "\\x1b" in out.stdout
    finally:
        repo.remove("odd.py")
