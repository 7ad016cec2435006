"""Many repositories in one build: the repositories file, and one failure never stopping the others."""
from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path

import pytest

from codevouch import api
from codevouch.commands.exits import EXIT_USAGE
from codevouch.embedding import embedder_by_name
from codevouch.errors import InputError, NotARepository
from codevouch.indexer.build import BranchSummary
from codevouch.indexer.manyrepos import RepoSpec, Shard, build_repos, load_repos_file, parse_repos, shard_of
from codevouch.store import writer_lock
from tests.clihelp import FAKE, cv
from tests.gitrepo import Repo


def _repo(path: Path, *branches: str) -> Repo:
    repo = Repo(path)
    repo.commit(**{"shop.py": f"def {path.name}_main():\n    return 1\n"})
    for name in branches:
        repo.git("branch", name)
    return repo


def _corrupt(path: Path) -> Path:
    """A repository whose HEAD names an object that is not there."""
    repo = _repo(path)
    (repo.root / ".git" / "refs" / "heads" / "main").write_text("0123456789abcdef0123456789abcdef01234567\n")
    return repo.root


def test_the_issue_example_parses_with_branch_selection(tmp_path: Path) -> None:
    specs = parse_repos('''
[[repo]]
path = "~/src/shop"
branches = ["main", "release/*"]

[[repo]]
path = "billing"
all_branches = true
include_branches = ["main", "release/*"]
exclude_branches = ["release/old"]
''', base=tmp_path)
    assert specs == [
        RepoSpec(Path("~/src/shop").expanduser(), ("main", "release/*")),
        RepoSpec(tmp_path / "billing", (), True, ("main", "release/*"), ("release/old",))]


@pytest.mark.parametrize(("text", "says"), [
    ('[[repo]]\npath = "a"\nbranch = ["main"]\n', "unknown key(s) branch"),
    ('[[repo]]\npath = "a"\nbranches = ["main"]\nall_branches = true\n', "not both"),
    ('[[repo]]\npath = "a"\ninclude_branches = ["x"]\n', "add `all_branches = true`"),
    ('[[repo]]\nbranches = ["main"]\n', "`path` must be"),
    ('[[repo]]\npath = "a"\nbranches = "main"\n', "must be a list"),
    ('[[repo]]\npath = "a"\nall_branches = "yes"\n', "true or false"),
    ('repos = ["a"]\n', "unknown top-level key(s) repos"),
    ("", "no repositories"),
    ('[[repo]\npath = "a"\n', "not valid TOML"),
])
def test_a_repositories_file_that_says_something_else_is_refused(text: str, says: str) -> None:
    with pytest.raises(InputError) as caught:
        parse_repos(text, "repos.toml")
    assert says in str(caught.value) and "repos.toml" in str(caught.value)


def test_relative_paths_are_relative_to_the_file(tmp_path: Path) -> None:
    (tmp_path / "conf").mkdir()
    (tmp_path / "conf" / "repos.toml").write_text('[[repo]]\npath = "../shop"\n')
    [spec] = load_repos_file(tmp_path / "conf" / "repos.toml")
    assert spec.path.resolve() == (tmp_path / "shop").resolve()
    with pytest.raises(InputError, match="cannot read the repositories file"):
        load_repos_file(tmp_path / "missing.toml")


def test_one_failing_repository_never_stops_the_others(tmp_path: Path, index_dir: Path) -> None:
    shop = _repo(tmp_path / "shop", "release/1")
    billing = _repo(tmp_path / "billing")
    (tmp_path / "plain").mkdir()
    specs = [RepoSpec(tmp_path / "gone"), RepoSpec(shop.root, all_branches=True, include_branches=("release/*",)),
             RepoSpec(tmp_path / "plain"), RepoSpec(_corrupt(tmp_path / "corrupt")), RepoSpec(billing.root)]
    seen: list[str] = []
    outcomes = build_repos(specs, index_dir, embedder_by_name("fake-bow-64"), on_repo=lambda o: seen.append(o.spec.path.name))
    assert seen == ["gone", "shop", "plain", "corrupt", "billing"]
    assert [o.ok for o in outcomes] == [False, True, False, False, True]
    assert isinstance(outcomes[0].error, NotARepository) and isinstance(outcomes[2].error, NotARepository)
    assert [b.branch for b in outcomes[1].branches] == ["release/1"]
    assert outcomes[3].to_json()["status"] == "failed" and outcomes[3].to_json()["error"]["message"]
    status = {(row["repo"], row["branch"]) for row in api.index_status_all(index_dir)}
    assert status == {(str(shop.root.resolve()), "release/1"), (str(billing.root.resolve()), "main")}


def test_cli_repos_file_reports_each_outcome_and_exits_23(tmp_path: Path, index_dir: Path) -> None:
    shop = _repo(tmp_path / "shop", "release/1", "wip")
    billing = _repo(tmp_path / "billing", "feature")
    listing = tmp_path / "repos.toml"
    listing.write_text(f'''
[[repo]]
path = "{shop.root}"
branches = ["main", "release/1"]

[[repo]]
path = "gone"

[[repo]]
path = "billing"
all_branches = true
exclude_branches = ["feat*"]
''')
    out = cv("index", "build", "--repos", str(listing), "--json", *FAKE, index=index_dir)
    assert out.returncode == 23, out.stderr
    report = json.loads(out.stdout)
    assert (report["ok"], report["failed"]) == (2, 1)
    rows = {Path(r["repo"]).name: r for r in report["repos"]}
    assert [b["branch"] for b in rows["shop"]["branches"]] == ["main", "release/1"]
    assert [b["branch"] for b in rows["billing"]["branches"]] == ["main"]
    assert rows["gone"]["status"] == "failed" and rows["gone"]["error"]["type"] == "NotARepository"
    assert rows["gone"]["error"]["exit_code"] == 1 and rows["gone"]["branches"] == []
    again = cv("index", "build", "--repo", str(shop.root), "--repo", str(billing.root), *FAKE, index=index_dir)
    assert again.returncode == 0, again.stderr
    assert "2 repositories: 2 built, 0 failed" in again.stdout and "up to date" in again.stdout


def test_a_named_branch_that_is_gone_costs_only_itself(tmp_path: Path, index_dir: Path) -> None:
    shop = _repo(tmp_path / "shop", "release/1")
    listing = tmp_path / "repos.toml"
    listing.write_text(f'[[repo]]\npath = "{shop.root}"\nbranches = ["main", "no-such-branch", "release/1"]\n')
    out = cv("index", "build", "--repos", str(listing), *FAKE, index=index_dir)
    assert out.returncode == 23, out.stderr
    # The branches that exist are built and listed; the missing one is named on its own line.
    assert "2 branch(es) built" in out.stdout and "main@" in out.stdout and "release/1@" in out.stdout
    [line] = [ln for ln in out.stderr.splitlines() if "no-such-branch" in ln]
    assert "UnknownRevision" in line and "built main, release/1" in line and "repos.toml line 1" in line
    status = {row["branch"] for row in api.index_status_all(index_dir)}
    assert status == {"main", "release/1"}
    only_gone = build_repos([RepoSpec(shop.root, branches=("gone",))], index_dir, embedder_by_name("fake-bow-64"))
    assert not only_gone[0].ok and only_gone[0].branches == [] and "built nothing" in str(only_gone[0].error)


def test_cli_single_repository_keeps_its_exit_codes(tmp_path: Path, index_dir: Path) -> None:
    assert cv("index", "build", "--repo", str(tmp_path / "gone"), *FAKE, index=index_dir).returncode == 1
    shop = _repo(tmp_path / "shop")
    with writer_lock(index_dir, 0):
        alone = cv("index", "build", "--repo", str(shop.root), *FAKE, index=index_dir)
        both = cv("index", "build", "--repo", str(shop.root), "--repo", str(tmp_path / "gone"), "--json", *FAKE,
                  index=index_dir)
    assert alone.returncode == 4, alone.stderr
    assert both.returncode == 23, both.stderr
    rows = json.loads(both.stdout)["repos"]
    assert [(r["status"], r["error"]["type"], r["error"]["exit_code"]) for r in rows] == [
        ("failed", "IndexLocked", 4), ("failed", "NotARepository", 1)]


def test_cli_repos_file_and_branch_flags_do_not_mix(tmp_path: Path, index_dir: Path) -> None:
    listing = tmp_path / "repos.toml"
    listing.write_text('[[repo]]\npath = "x"\n')
    mixed = cv("index", "build", "--repos", str(listing), "--branch", "main", *FAKE, index=index_dir)
    assert mixed.returncode == 2 and "[[repo]] table" in mixed.stderr
    bad = tmp_path / "bad.toml"
    bad.write_text('[[repo]]\npath = "x"\nbranchs = ["main"]\n')
    refused = cv("index", "build", "--repos", str(bad), *FAKE, index=index_dir)
    assert refused.returncode == 2 and "unknown key(s) branchs" in refused.stderr


def test_a_queued_build_builds_the_head_it_finds_once_it_holds_the_lock(tmp_path: Path, index_dir: Path) -> None:
    shop = _repo(tmp_path / "shop")
    embedder = embedder_by_name("fake-bow-64")
    outcome: list[list[BranchSummary]] = []
    with writer_lock(index_dir, 0):
        waiting = threading.Thread(target=lambda: outcome.append(
            build_repos([RepoSpec(shop.root)], index_dir, embedder, wait=60)[0].branches))
        waiting.start()
        time.sleep(3)   # it has read the branch head and waits on the lock
        newer = shop.commit(**{"later.py": "def later():\n    return 2\n"})
    waiting.join(timeout=120)
    assert [s.commit for s in outcome[0]] == [newer]


@pytest.mark.parametrize("kind", ["fifo", "device", "directory", "oversized"])
def test_a_repositories_file_that_is_not_a_small_regular_file_is_refused_unread(tmp_path: Path, kind: str) -> None:
    listing = tmp_path / "repos.toml"
    if kind == "fifo":
        os.mkfifo(listing)                       # opened non-blocking: refused at once, never waited on
    elif kind == "device":
        listing.symlink_to("/dev/zero")           # never ends: refused before a byte is read
    elif kind == "directory":
        listing.mkdir()
    else:
        with listing.open("wb") as sparse:        # 64 MB of nothing: over the cap by its size alone
            sparse.truncate(64 << 20)
    out = cv("index", "build", "--repos", str(listing), *FAKE, index=tmp_path / "index")
    assert out.returncode == 2, out.stderr
    says = "over the 1048576-byte cap" if kind == "oversized" else "is not a regular file"
    assert says in out.stderr and str(listing) in out.stderr and "Traceback" not in out.stderr



def test_shards_build_the_list_once_between_them(tmp_path: Path, index_dir: Path) -> None:
    for name in ("shop", "billing", "library"):
        _repo(tmp_path / name)
    listing = tmp_path / "repos.toml"
    listing.write_text('[[repo]]\npath = "shop"\n\n[[repo]]\npath = "billing"\n\n[[repo]]\npath = "library"\n')
    built: list[set[str]] = []
    for part in ("1/2", "2/2"):
        out = cv("index", "build", "--repos", str(listing), "--shard", part, "--json", *FAKE, index=index_dir)
        assert out.returncode == 0, out.stderr
        report = json.loads(out.stdout)
        assert (report["shard"], report["listed"]) == (part, 3)
        built.append({Path(r["repo"]).name for r in report["repos"]})
    assert built[0] and built[1] and not built[0] & built[1]
    assert built[0] | built[1] == {"shop", "billing", "library"}
    assert {Path(row["repo"]).name for row in api.index_status_all(index_dir)} == {"shop", "billing", "library"}
    # By each path as written, not by its place: reordered and with one more entry, no repository moves.
    listing.write_text('[[repo]]\npath = "library"\n\n[[repo]]\npath = "new"\n\n[[repo]]\npath = "billing"\n\n'
                       '[[repo]]\npath = "shop"\n')
    again = cv("index", "build", "--repos", str(listing), "--shard", "1/2", "--json", *FAKE, index=index_dir)
    assert {Path(r["repo"]).name for r in json.loads(again.stdout)["repos"]} - {"new"} == built[0]
    text = cv("index", "build", "--repo", str(tmp_path / "shop"), "--shard", "1/1", *FAKE, index=index_dir)
    assert text.returncode == 0 and "1 repositories (shard 1/1 of 1 listed): 1 built" in text.stdout


def test_shard_keys_are_stable_and_spread() -> None:
    keys = [f"~/src/repo{n}" for n in range(200)]
    three = [shard_of(k, 3) for k in keys]
    assert set(three) == {1, 2, 3} and min(three.count(n) for n in (1, 2, 3)) > 40
    # A fourth machine takes repositories from the others and moves none between them.
    four = [shard_of(k, 4) for k in keys]
    assert all(b in (a, 4) for a, b in zip(three, four)) and 30 < four.count(4) < 70


@pytest.mark.parametrize("value", ["0/2", "3/2", "1/0", "2", "a/b", "-1/2", "1/2/3", ""])
def test_a_shard_that_is_not_number_of_count_is_a_usage_error(tmp_path: Path, index_dir: Path, value: str) -> None:
    listing = tmp_path / "repos.toml"
    listing.write_text('[[repo]]\npath = "shop"\n')
    out = cv("index", "build", "--repos", str(listing), "--shard", value, *FAKE, index=index_dir)
    assert out.returncode == EXIT_USAGE and "NUMBER/COUNT" in out.stderr and "Traceback" not in out.stderr
    with pytest.raises(InputError, match="NUMBER/COUNT"):
        Shard.parse(value)


def test_repair_with_a_shard_is_a_usage_error_before_anything_is_repaired(tmp_path: Path, index_dir: Path) -> None:
    repo = _repo(tmp_path / "shop")
    assert cv("index", "build", "--repo", str(repo.root), *FAKE, index=index_dir).returncode == 0
    out = cv("index", "build", "--repair", "--shard", "1/2", *FAKE, index=index_dir, cwd=repo.root)
    assert out.returncode == EXIT_USAGE and "--shard" in out.stderr and "Traceback" not in out.stderr
    bad = cv("index", "build", "--repair", "--shard", "9/2", *FAKE, index=index_dir, cwd=repo.root)
    assert bad.returncode == EXIT_USAGE


def test_status_of_many_repositories_counts_each_in_its_own_clone(tmp_path: Path, index_dir: Path) -> None:
    # The rows are counted on threads (health/status.py, api._with_drift): each must still be its
    # own repository's, whatever order the threads finish in.
    repos = {name: _repo(tmp_path / name) for name in ("shop", "billing", "library", "ledger")}
    build_repos([RepoSpec(r.root) for r in repos.values()], index_dir, embedder_by_name("fake-bow-64"))
    for _ in range(2):
        repos["billing"].commit(**{"more.py": f"N = {time.monotonic_ns()}\n"})
    repos["library"].write("library.py", "def library_main():\n    return 2\n")
    rows = {Path(row["repo"]).name: row for row in api.index_status_all(index_dir)}
    assert {name: (row["head"], row["commits_behind"]) for name, row in rows.items()} == {
        name: (r.head(), 2 if name == "billing" else 0) for name, r in repos.items()}
    assert {name: row["drift"]["changed_files"] for name, row in rows.items()} == {
        "shop": 0, "billing": 1, "library": 1, "ledger": 0}
    assert rows["library"]["drift"]["changed_definitions"] and not rows["shop"]["drift"]["changed_definitions"]


def test_status_asks_each_checkouts_head_once_and_not_again_while_it_is_unchanged(
        tmp_path: Path, index_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from codevouch import clear_caches
    from codevouch.worktree import gitio
    from codevouch.worktree.git import unchanged

    monkeypatch.setattr(unchanged, "RACY_NS", 0)     # files written a moment ago count as settled
    repos = [_repo(tmp_path / name) for name in ("shop", "billing", "library")]
    build_repos([RepoSpec(r.root) for r in repos], index_dir, embedder_by_name("fake-bow-64"))
    repos[1].commit(**{"more.py": "N = 1\n"})
    clear_caches()

    def heads_asked() -> tuple[list[dict], int]:
        before = sum(gitio.PROCESSES[c] for c in ("rev-parse", "symbolic-ref"))
        rows = api.index_status_all(index_dir)
        return rows, sum(gitio.PROCESSES[c] for c in ("rev-parse", "symbolic-ref")) - before
    rows, first = heads_asked()
    again, second = heads_asked()
    # One process for HEAD's branch and commit per checkout, shared by the count and the drift.
    assert (first, second) == (3, 0)
    for found in (rows, again):
        assert {Path(r["repo"]).name: (r["head"], r["commits_behind"]) for r in found} == {
            "shop": (repos[0].head(), 0), "billing": (repos[1].head(), 1), "library": (repos[2].head(), 0)}
