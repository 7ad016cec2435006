"""The CLI as a user runs it (in-process, tests/clihelp.py), real git repositories, the fake embedder for speed."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.clihelp import FAKE, cv
from tests.gitrepo import Repo


def test_build_json_summary_and_status(repo: Repo, index_dir: Path) -> None:
    repo.commit(**{"a.py": "def alpha():\n    return 1\n", "vendor/x.py": "X = 1\n", "e.txt": ""})
    out = cv("index", "build", "--repo", str(repo.root), "--json", *FAKE, index=index_dir)
    assert out.returncode == 0, out.stderr
    [b] = json.loads(out.stdout)["branches"]
    assert {k: b[k] for k in ("branch", "files", "chunks", "embedded", "reused", "deleted")} == {
        "branch": "main", "files": 3, "chunks": 1, "embedded": 1, "reused": 0, "deleted": 0}
    assert b["skipped"] == {"empty": 1} and b["excluded"] == {"vendor (vendor/)": 1}
    repo.commit(**{"b.py": "B = 2\n"})
    status = cv("index", "status", "--json", index=index_dir)
    assert status.returncode == 0, status.stderr
    [row] = json.loads(status.stdout)["branches"]
    assert row["commits_behind"] == 1 and row["head"] == repo.head()
    assert row["chunks_by_kind"] == {"source": 1} and row["files_by_kind"]["vendor"] == 1
    text = cv("index", "status", index=index_dir)
    assert "1 commit behind" in text.stdout and "1 commits" not in text.stdout


def test_search_json_fields(repo: Repo, index_dir: Path) -> None:
    repo.commit(**{"a.py": "def alpha_beta():\n    return 1\n"})
    assert cv("index", "build", *FAKE, cwd=repo.root, index=index_dir).returncode == 0
    out = cv("search", "alpha_beta", "--json", "--no-validate", cwd=repo.root, index=index_dir)
    assert out.returncode == 0, out.stderr
    [hit] = json.loads(out.stdout)
    for field in ("repo", "path", "branch", "commit", "symbol", "start_line", "end_line", "indexed_at",
                  "blob_sha", "score", "kind", "status", "text"):
        assert field in hit
    assert (hit["path"], hit["symbol"], hit["start_line"], hit["end_line"]) == ("a.py", "alpha_beta", 1, 2)


def test_errors_have_exit_codes_and_advice(tmp_path: Path, repo: Repo, index_dir: Path) -> None:
    not_repo = cv("index", "build", "--repo", str(tmp_path), *FAKE, index=index_dir)
    assert not_repo.returncode == 1 and "not inside a git repository" in not_repo.stderr
    repo.commit(**{"a.py": "A = 1\n"})
    never = cv("search", "x", "--repo", str(repo.root), index=index_dir)
    assert never.returncode == 5 and "codevouch index build" in never.stderr
    bad = cv("search", "x", "--format", "yaml", "--repo", str(repo.root), index=index_dir)
    assert bad.returncode == 2


@pytest.mark.process
def test_help_is_fast_and_light() -> None:
    # --help must not import the heavy stack (torch, chromadb, sentence-transformers).
    code = ("import sys; from codevouch.cli import app\n"
            "try:\n    app(['--help'])\nexcept SystemExit:\n    pass\n"
            "heavy = [m for m in ('torch', 'chromadb', 'sentence_transformers') if m in sys.modules]\n"
            "print('HEAVY', heavy)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert "HEAVY []" in out.stdout and "index" in out.stdout


def test_git_environment_from_a_hook_cannot_redirect_validate(tmp_path: Path, repo: Repo,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    # Inside a git hook GIT_DIR (and often GIT_INDEX_FILE, GIT_WORK_TREE) point at the hook's
    # repository; `validate --repo r` must still read r.
    text = "def alpha():\n    return 1\n"
    head = repo.commit(**{"a.py": text})
    other = Repo(tmp_path / "other")
    other.commit(**{"a.py": "def alpha():\n    return 2\n"})
    git_dir = other.root / ".git"
    for name, value in {"GIT_DIR": git_dir, "GIT_WORK_TREE": other.root, "GIT_INDEX_FILE": git_dir / "index",
                        "GIT_OBJECT_DIRECTORY": git_dir / "objects", "GIT_COMMON_DIR": git_dir}.items():
        monkeypatch.setenv(name, str(value))
    snippet = {"path": "a.py", "commit": head, "start_line": 1, "end_line": 2, "symbol": "alpha", "text": text}
    out = cv("validate", "-", "--json", "--repo", str(repo.root), stdin=json.dumps(snippet))
    assert out.returncode == 0, out.stderr
    [v] = json.loads(out.stdout)
    assert (v["verdict"], v["reason"]) == ("usable", "same-commit")


def test_search_and_context_kind_filter(repo: Repo, index_dir: Path) -> None:
    repo.commit(**{"shop/cancel.py": "def cancel_order(order):\n    return order.cancel()\n",
                   "tests/test_cancel.py": "def test_cancel_order():\n    assert cancel_order(order)\n",
                   "docs/orders.md": "# Orders\n\nTo cancel an order, call cancel order.\n",
                   "setup.cfg": "[orders]\ncancel_order = yes\n"})
    assert cv("index", "build", *FAKE, cwd=repo.root, index=index_dir).returncode == 0

    def kinds(*args: str) -> list[str]:
        out = cv("search", "cancel order", "--json", "--no-validate", *args, cwd=repo.root, index=index_dir)
        assert out.returncode == 0, out.stderr
        return sorted(h["kind"] for h in json.loads(out.stdout))

    assert kinds() == ["config", "docs", "source", "test"]
    assert kinds("--kind", "test") == ["test"]
    assert kinds("--kind", "source", "--kind", "docs") == ["docs", "source"]
    ctx = cv("context", "cancel order", "--kind", "docs", cwd=repo.root, index=index_dir)
    assert ctx.returncode == 0, ctx.stderr
    assert "docs/orders.md" in ctx.stdout and "shop/cancel.py" not in ctx.stdout
    bad = cv("search", "cancel order", "--kind", "prose", cwd=repo.root, index=index_dir)
    assert bad.returncode != 0 and "source, test, docs, config" in bad.stderr
