"""`codevouch review` on real repositories: every scope, every edge, coverage that adds up,
related code from a real index, and the four outcomes of --exec (real processes)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from codevouch import Index
from codevouch.errors import EmptyScope, InputError, UnknownRevision
from codevouch.models import budget_counter
from codevouch.review import Review
from tests.gitrepo import Repo

BODY = "".join(f"def f{i}(x):\n    return x + {i}\n\n\n" for i in range(60))


def cv(*args: str, index: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "CODEVOUCH_INDEX": str(index)}
    return subprocess.run([sys.executable, "-m", "codevouch", *args], env=env, capture_output=True,
                          text=True, timeout=300)


def git_truth(repo: Repo, *diff_args: str, untracked: bool = False) -> dict[str, int]:
    """path -> number of hunks, as git itself reports the scope (never from codevouch)."""
    out = repo.git("-c", "core.quotePath=false", "diff", "-M", "--no-ext-diff", "--no-color", *diff_args)
    truth: dict[str, int] = {}
    path = None
    for line in out.split("\n"):
        if line.startswith("diff --git "):
            path = line.rsplit(" b/", 1)[1]
            truth[path] = 0
        elif line.startswith("rename to "):
            del truth[path]  # type: ignore[arg-type]
            path = line[len("rename to "):]
            truth[path] = 0
        elif line.startswith("@@ ") and path is not None:
            truth[path] += 1
    if untracked:
        for p in repo.git("ls-files", "--others", "--exclude-standard").split("\n"):
            if p:
                text = (repo.root / p).read_bytes()
                truth[p] = 0 if (not text or b"\0" in text) else 1
    return truth


def assert_coverage(review: Review, truth: dict[str, int]) -> dict[str, dict[str, Any]]:
    """Every changed file and hunk once: included, truncated or left out; parts fit the budget."""
    manifest = review.manifest()
    cov = manifest["coverage"]
    assert cov["complete"]
    files = {f["path"]: f for f in cov["files"]}
    assert {p: len(f["hunks"]) for p, f in files.items()} == truth
    seen = []
    for part in manifest["parts"]:
        for entry in part["files"]:
            seen += [(entry["path"], h) for h in entry["hunks"]]
    assert len(seen) == len(set(seen))                       # no hunk in two parts
    shown = {(p, h["hunk"]) for p, f in files.items() for h in f["hunks"] if h["coverage"] != "left_out"}
    assert set(seen) == shown                                # every shown hunk is in exactly one part
    for f in files.values():
        assert (f["reason"] is None) == (f["coverage"] != "left_out")
    count = budget_counter(review.budget)
    for part in review.parts:
        assert count(part.markdown) == part.tokens <= review.budget.tokens
    t = cov["totals"]
    assert t["files"] == len(truth) and t["hunks"] == sum(truth.values())
    return files


@pytest.fixture
def shop(repo: Repo) -> Repo:
    repo.commit_files({"shop/orders.py": BODY, "shop/util.py": "def helper():\n    return 1\n",
                       "README.md": "# shop\n", "run.sh": "echo hi\n", "logo.png": b"\x89PNG\0\1\2",
                       "old.txt": "".join(f"row {i}\n" for i in range(30)), "gone.py": "def bye():\n    pass\n",
                       ".gitignore": "*.log\n"})
    return repo


def test_all_local_changes_with_every_edge(shop: Repo, index_dir: Path) -> None:
    repo = shop
    repo.write("shop/orders.py", BODY.replace("return x + 3\n", "return x * 3\n")
               .replace("return x + 50\n", "return x - 50\n"))          # two hunks
    repo.git("add", "shop/orders.py")
    repo.write("shop/util.py", "def helper():\n    return 2\n")          # unstaged
    repo.write("logo.png", b"\x89PNG\0\1\3")                             # binary
    repo.git("mv", "old.txt", "moved.txt")                                # pure rename
    repo.remove("gone.py")                                                # deleted
    os.chmod(repo.root / "run.sh", 0o755)                                 # mode only
    repo.write("vendor/lib.py", "def vendored():\n    pass\n")           # excluded, untracked
    repo.write("notes.py", "def note():\n    return 'n'\n")              # untracked
    repo.write("empty.py", "")                                            # untracked, empty
    repo.write("debug.log", "ignored\n")                                  # ignored: not in scope
    review = Index(repo.root, index_dir).review(budget=4000, related=False)
    truth = git_truth(repo, "HEAD", untracked=True)
    assert "debug.log" not in truth and {"vendor/lib.py", "notes.py", "shop/util.py"} <= set(truth)
    files = assert_coverage(review, truth)
    reasons = {p: f["reason"] for p, f in files.items()}
    assert reasons["logo.png"] == "binary"
    assert reasons["moved.txt"] == "renamed without content changes"
    assert reasons["gone.py"] == "deleted" and files["gone.py"]["hunks"][0]["coverage"] == "left_out"
    assert reasons["run.sh"] == "mode change only (100644 -> 100755)"
    assert reasons["vendor/lib.py"] == "excluded: vendor (rule vendor/)"
    assert reasons["empty.py"] == "empty file"
    assert reasons["notes.py"] is None and files["notes.py"]["untracked"]
    assert reasons["shop/orders.py"] is None and len(files["shop/orders.py"]["hunks"]) == 2
    # The list of what is not shown is in part 1, so the reviewer knows it exists.
    first = review.parts[0].markdown
    assert "## Not shown" in first and "`gone.py`: deleted" in first and "`logo.png`: binary" in first
    assert "+    return x * 3" in "".join(p.markdown for p in review.parts)


def test_each_local_scope_alone(shop: Repo, index_dir: Path) -> None:
    repo = shop
    repo.write("shop/orders.py", BODY.replace("return x + 3\n", "return x * 3\n"))
    repo.git("add", "shop/orders.py")
    repo.write("shop/orders.py", BODY.replace("return x + 3\n", "return x * 3\n")
               .replace("return x + 40\n", "return x * 40\n"))              # staged and unstaged edits
    repo.write("shop/util.py", "def helper():\n    return 2\n")
    repo.write("fresh.py", "def fresh():\n    pass\n")
    idx = Index(repo.root, index_dir)
    staged = idx.review(staged=True, related=False)
    assert_coverage(staged, git_truth(repo, "--cached", "HEAD"))
    assert "return x * 40" not in staged.parts[0].markdown and "return x * 3" in staged.parts[0].markdown
    unstaged = idx.review(unstaged=True, related=False)
    assert_coverage(unstaged, git_truth(repo))
    assert "return x * 40" in unstaged.parts[0].markdown and "-    return x + 3" not in unstaged.parts[0].markdown
    only_new = idx.review(untracked=True, related=False)
    assert_coverage(only_new, git_truth(repo, "--", ":(exclude)*", untracked=True))
    both = idx.review(staged=True, untracked=True, related=False)
    assert_coverage(both, {**git_truth(repo, "--cached", "HEAD"), "fresh.py": 1})
    everything = idx.review(related=False)      # the same as --all
    files = assert_coverage(everything, git_truth(repo, "HEAD", untracked=True))
    assert len(files["shop/orders.py"]["hunks"]) == 2     # staged + unstaged edits, once


def test_ranges_and_base(shop: Repo, index_dir: Path) -> None:
    repo = shop
    base = repo.head()
    repo.checkout("-b", "feature")
    repo.commit_files({"shop/util.py": "def helper():\n    return 3\n"}, "feature work")
    repo.checkout("main")
    repo.commit_files({"README.md": "# shop, main\n"}, "main moves on")
    repo.checkout("feature")
    idx = Index(repo.root, index_dir)
    two_dot = idx.review("main..feature", related=False)
    assert_coverage(two_dot, git_truth(repo, "main", "feature"))
    assert set(f["path"] for f in two_dot.plan.coverage()["files"]) == {"shop/util.py", "README.md"}
    three_dot = idx.review("main...feature", related=False)
    assert_coverage(three_dot, git_truth(repo, "main...feature"))
    assert three_dot.scope.old == base
    repo.write("local.py", "def local():\n    pass\n")
    on_base = idx.review(base="main", related=False)
    assert_coverage(on_base, {**git_truth(repo, base), "local.py": 1})
    assert on_base.scope.old == base


def test_bad_scopes(shop: Repo, index_dir: Path) -> None:
    idx = Index(shop.root, index_dir)
    with pytest.raises(EmptyScope):
        idx.review()
    with pytest.raises(UnknownRevision):
        idx.review("main..nope")
    with pytest.raises(UnknownRevision):
        idx.review(base="nope")
    with pytest.raises(InputError):
        idx.review("main..main", staged=True)
    with pytest.raises(InputError):
        idx.review("main")                # not a range
    with pytest.raises(InputError):
        idx.review("main..main", command="")
    assert cv("review", "--repo", str(shop.root), index=index_dir).returncode == 20
    out = cv("review", "main..nope", "--repo", str(shop.root), index=index_dir)
    assert out.returncode == 21 and "'nope' is not a branch or commit" in out.stderr
    assert cv("review", "main..HEAD", "--repo", str(shop.root), index=index_dir).returncode == 20
    assert cv("review", "--staged", "--base", "main", "--repo", str(shop.root), index=index_dir).returncode == 2


def test_huge_hunk_is_truncated_and_big_files_split_at_hunks(repo: Repo, index_dir: Path) -> None:
    repo.commit_files({"many.py": BODY, "small.py": "A = 1\n"})
    edited = BODY
    for i in range(0, 60, 4):
        edited = edited.replace(f"return x + {i}\n", f"return x * {i} + {i}  # changed\n")
    repo.write("many.py", edited)                                            # many hunks
    repo.write("huge.py", "".join(f"VALUE_{i} = {i} * 12345  # a long enough line\n" for i in range(3000)))
    repo.write("small.py", "A = 2\n")
    review = Index(repo.root, index_dir).review(budget=600, related=False)
    files = assert_coverage(review, git_truth(repo, "HEAD", untracked=True))
    huge = files["huge.py"]
    [hunk] = huge["hunks"]
    assert huge["coverage"] == "truncated" and hunk["coverage"] == "truncated"
    assert 0 < hunk["lines_kept"] < hunk["lines_total"] == 3000
    [part] = [p for p in review.parts if p.index == hunk["part"]]
    assert f"{hunk['lines_kept']} of 3000 lines shown" in part.markdown
    assert part.markdown.count("+VALUE_") == hunk["lines_kept"]
    many = files["many.py"]
    assert many["coverage"] == "included" and len(many["parts"]) > 1       # split at hunk boundaries
    assert all(h["coverage"] == "included" for h in many["hunks"])
    assert "hunks 1-" in "".join(p.markdown for p in review.parts)


REVIEWERS = {
    "findings": "import sys; d = sys.stdin.read(); print('finding: part has', len(d.splitlines()), 'lines')",
    "empty": "import sys; sys.stdin.read()",
    "fail": "import sys; sys.stdin.read(); print('partial'); sys.exit(3)",
    "hang": "import sys, time; sys.stdin.read(); time.sleep(60)",
}


@pytest.mark.parametrize("kind,status,code", [("findings", "findings", 0), ("empty", "no_findings", 0),
                                              ("fail", "failed", 22), ("hang", "timed_out", 22)])
def test_exec_outcomes(kind: str, status: str, code: int, shop: Repo, index_dir: Path, tmp_path: Path) -> None:
    shop.write("shop/util.py", "def helper():\n    return 2\n")
    shop.write("shop/orders.py", BODY.replace("return x + 3\n", "return x * 3\n")
               .replace("return x + 30\n", "return x * 30\n").replace("return x + 55\n", "return x * 55\n"))
    shop.write("shop/extra.py", "".join(f"def extra{i}(y):\n    return y - {i}\n\n\n" for i in range(12)))
    script = tmp_path / "reviewer.py"
    script.write_text(REVIEWERS[kind])
    out_dir = tmp_path / "out"
    res = cv("review", "--repo", str(shop.root), "--budget", "200", "--no-related", "--out", str(out_dir),
             "--exec", f"{sys.executable} {script}", "--timeout", "1", "--json", index=index_dir)
    assert res.returncode == code, res.stderr
    manifest = json.loads(res.stdout)
    assert manifest == json.loads((out_dir / "manifest.json").read_text())
    assert len(manifest["parts"]) >= 2
    for part in manifest["parts"]:
        run = part["exec"]
        assert run["status"] == status
        if kind == "findings":       # the reviewer read exactly this part's markdown
            lines = len((out_dir / part["file"]).read_text().splitlines())
            assert run["output"].strip() == f"finding: part has {lines} lines"
        if kind == "fail":
            assert run["exit_code"] == 3 and run["output"].strip() == "partial"
        if kind == "hang":
            assert run["exit_code"] is None and 1 <= run["duration_s"] < 30
    assert manifest["exec"]["ok"] == (code == 0)
    assert manifest["exec"]["failed_parts"] == ([] if code == 0 else [p["part"] for p in manifest["parts"]])
    text = cv("review", "--repo", str(shop.root), "--budget", "200", "--no-related",
              "--exec", f"{sys.executable} {script}", "--timeout", "1", index=index_dir)
    label = {"findings": "findings", "no_findings": "no findings", "failed": "FAILED", "timed_out": "TIMED OUT"}
    assert f"## part 1 of {len(manifest['parts'])}: {label[status]}" in text.stdout
    assert "no findings" not in text.stdout or status == "no_findings"


def test_exec_command_that_cannot_start(shop: Repo, index_dir: Path) -> None:
    shop.write("shop/util.py", "def helper():\n    return 2\n")
    review = Index(shop.root, index_dir).review(related=False, command="/nonexistent/reviewer --x")
    [result] = review.results
    assert result.status == "failed" and "could not start" in (result.error or "")
    assert review.failed() == [1]


SHOP = {
    "shop/orders.py": ("def refund(order):\n    return order.total\n\n\n"
                       "def cancel_order(order):\n    order.state = 'cancelled'\n    return refund(order)\n"),
    "shop/checkout.py": ("from shop.orders import cancel_order\n\n\n"
                         "def abandon(cart):\n    return cancel_order(cart.order)\n"),
}


def test_related_code_is_validated_and_cited(repo: Repo, index_dir: Path) -> None:
    repo.commit_files(SHOP)
    idx = Index(repo.root, index_dir, embedder="fake-bow-64")
    idx.build()
    repo.write("shop/orders.py", SHOP["shop/orders.py"].replace("'cancelled'", "'canceled'"))
    review = idx.review(budget=3000)
    assert review.related["status"] == "ok" and review.related["definitions"] == 1
    [part] = review.parts
    kinds = {(r.kind, r.path) for r in part.related}
    assert ("caller", "shop/checkout.py") in kinds            # calls cancel_order, found lexically
    assert ("callee", "shop/orders.py") in kinds              # refund, which it calls
    assert ("previous version", "shop/orders.py") in kinds
    md = part.markdown
    assert "#### caller of `cancel_order`\nsource: shop/checkout.py#L1-L5 (<module>, abandon)" in md
    assert "check: usable" in md and "```python\nfrom shop.orders import cancel_order" in md
    # The callee's chunk changed in the working tree: its current code is re-read and said so.
    assert "check: current code, re-read from the working tree" in md
    previous = next(r for r in part.related if r.kind == "previous version")
    assert "historical-only" in previous.citation and "'cancelled'" in previous.code
    assert part.tokens <= review.budget.tokens


def test_without_an_index_related_code_says_so_and_the_review_goes_on(repo: Repo, index_dir: Path) -> None:
    repo.commit_files(SHOP)
    repo.write("shop/orders.py", SHOP["shop/orders.py"].replace("'cancelled'", "'canceled'"))
    review = Index(repo.root, index_dir).review()
    assert review.related["status"] == "partial" and "index build" in review.related["reason"]
    assert [r.kind for r in review.parts[0].related] == ["previous version"]
    assert not index_dir.exists()
