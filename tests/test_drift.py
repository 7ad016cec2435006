"""`codevouch drift`: files and definitions between the indexed commit and the working tree,
on real repositories indexed into a real store, in Python, TypeScript, Go, Rust and Java."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from codevouch import Index, NotIndexed
from codevouch.cli import app
from codevouch.drift import FileVersions, drift, lcs, with_drift
from codevouch.errors import GitError
from codevouch.syntax.outline import outline
from tests.gitrepo import Repo

# Per language: the indexed file, and an edit that produces every definition state once:
# `keep` same, `body` content_changed, `sig` signature_changed, `gone` removed, `fresh`
# added, `late` reordered (moved); `away` goes to another file (moved across files).
LANGS = {
    "python": ("m.py", "other.py", """\
import os


def keep(a):
    return a


def body(a):
    return a + 1


def late():
    return 0


def sig(a):
    return a


def gone():
    return 1


def away(x):
    return x
""", """\
import os


def late():
    return 0


def keep(a):
    return a


def body(a):
    return a + 2


def sig(a, b):
    return a


def fresh():
    return 2
""", "def away(x):\n    return x\n"),
    "typescript": ("m.ts", "other.ts", """\
export function keep(a: number): number {
  return a;
}

export function body(a: number): number {
  return a + 1;
}

function late(): number {
  return 0;
}

export function sig(a: number): number {
  return a;
}

function gone(): number {
  return 1;
}

function away(x: number): number {
  return x;
}
""", """\
function late(): number {
  return 0;
}

export function keep(a: number): number {
  return a;
}

export function body(a: number): number {
  return a + 2;
}

export function sig(a: number, b: string): number {
  return a;
}

function fresh(): number {
  return 2;
}
""", "function away(x: number): number {\n  return x;\n}\n"),
    "go": ("m.go", "other.go", """\
package m

func keep(a int) int {
	return a
}

func body(a int) int {
	return a + 1
}

func late() int {
	return 0
}

func sig(a int) int {
	return a
}

func gone() int {
	return 1
}

func away(x int) int {
	return x
}
""", """\
package m

func late() int {
	return 0
}

func keep(a int) int {
	return a
}

func body(a int) int {
	return a + 2
}

func sig(a int, b string) int {
	return a
}

func fresh() int {
	return 2
}
""", "package m\n\nfunc away(x int) int {\n\treturn x\n}\n"),
    "rust": ("m.rs", "other.rs", """\
fn keep(a: i32) -> i32 {
    a
}

fn body(a: i32) -> i32 {
    a + 1
}

fn late() -> i32 {
    0
}

fn sig(a: i32) -> i32 {
    a
}

fn gone() -> i32 {
    1
}

fn away(x: i32) -> i32 {
    x
}
""", """\
fn late() -> i32 {
    0
}

fn keep(a: i32) -> i32 {
    a
}

fn body(a: i32) -> i32 {
    a + 2
}

fn sig(a: i32, b: &str) -> i32 {
    a
}

fn fresh() -> i32 {
    2
}
""", "fn away(x: i32) -> i32 {\n    x\n}\n"),
}

EXPECTED = {"keep": "same", "body": "content_changed", "sig": "signature_changed", "gone": "removed",
            "fresh": "added", "away": "moved"}


def _index(repo: Repo, index_dir: Path) -> Index:
    idx = Index(repo.root, index_dir, embedder="fake-bow-64")
    idx.build()
    return idx


@pytest.mark.parametrize("lang", sorted(LANGS))
def test_every_definition_state_and_the_first_divergence(lang: str, repo: Repo, index_dir: Path) -> None:
    path, other, old, new, moved_in = LANGS[lang]
    repo.commit_files({path: old, "README.md": "# r\n", "same.txt": "unchanged\n"})
    idx = _index(repo, index_dir)
    repo.write(path, new)
    repo.write(other, moved_in)          # untracked: the working tree is the truth
    report = idx.drift()
    states = {}
    for f in report.files:
        for d in f.definitions or ():
            states.setdefault(d.name.split(".")[-1], set()).add(d.state)
    got = {name: states[name] for name in EXPECTED}
    assert got == {name: {state} for name, state in EXPECTED.items()}
    # `keep` and `late` swapped: the LCS keeps the longer run in order, so exactly one moved.
    assert {"late", "keep"} & {n for n, s in states.items() if s == {"moved"}}
    assert report.file_counts() == {"same": 2, "modified": 1, "added": 1, "removed": 0, "renamed": 0}
    # File order of the working tree: the first definition that is not the same.
    by_path = {f.path: f for f in report.files}
    first = by_path[path].first_divergence()
    assert first is not None and first.path == path
    changed = by_path[path].changed()
    assert first.name == changed[0].name and first.line == changed[0].new.start  # type: ignore[union-attr]
    assert new.split("\n")[first.line - 1].strip() != ""   # a real line of the working tree
    assert report.first_divergence() == first                # m.* sorts before other.*
    moved = next(d for d in by_path[other].definitions or () if d.name == "away")
    assert (moved.old.path, moved.new.path) == (path, other)  # type: ignore[union-attr]


def test_renamed_file_is_aligned_with_its_old_path(repo: Repo, index_dir: Path) -> None:
    body = "".join(f"def f{i}(x):\n    return x + {i}\n\n\n" for i in range(12))
    repo.commit_files({"old.py": body})
    idx = _index(repo, index_dir)
    repo.git("mv", "old.py", "new.py")
    repo.write("new.py", body.replace("return x + 3\n", "return x * 3\n"))
    report = idx.drift()
    [f] = report.files
    assert (f.status, f.old_path, f.path) == ("renamed", "old.py", "new.py")
    changed = f.changed()
    assert [(d.name, d.state) for d in changed] == [("f3", "content_changed")]
    assert changed[0].old.path == "old.py" and changed[0].new.path == "new.py"  # type: ignore[union-attr]
    assert report.first_divergence().line == 13  # type: ignore[union-attr]


def test_java_members_and_untracked_exact_rename(repo: Repo, index_dir: Path) -> None:
    java = ("class Shop {\n    int size() {\n        return 1;\n    }\n\n"
            "    void cancel(int id) {\n        run(id);\n    }\n}\n")
    repo.commit_files({"Shop.java": java, "notes.txt": "n\n"})
    idx = _index(repo, index_dir)
    repo.write("Shop.java", java.replace("run(id);", "run(id, true);"))
    (repo.root / "notes.txt").rename(repo.root / "notes2.txt")   # not staged: git cannot see it
    report = idx.drift()
    by_path = {f.path: f for f in report.files}
    assert by_path["notes2.txt"].status == "renamed" and by_path["notes2.txt"].old_path == "notes.txt"
    shop = by_path["Shop.java"]
    # The class itself is the same: only the member's own text changed.
    assert [(d.name, d.state) for d in shop.definitions or ()] == [
        ("Shop", "same"), ("Shop.size", "same"), ("Shop.cancel", "content_changed")]
    assert shop.first_divergence().line == 6  # type: ignore[union-attr]
    assert report.summary() == "1 definition changed since the index (2 files changed)"


def test_module_code_binary_and_unsupported_files(repo: Repo, index_dir: Path) -> None:
    repo.commit_files({"a.py": "import os\n\n\ndef f():\n    return 1\n", "b.bin": b"\0\1\2",
                       "c.txt": "one\ntwo\n"})
    idx = _index(repo, index_dir)
    repo.write("a.py", "import os\nimport sys\n\n\ndef f():\n    return 1\n")
    repo.write("b.bin", b"\0\1\3")
    repo.write("c.txt", "one\nthree\n")
    report = idx.drift()
    by_path = {f.path: f for f in report.files}
    a = by_path["a.py"]
    assert a.module_changed and not a.changed()
    assert a.first_divergence().to_json() == {"path": "a.py", "line": 2, "name": None, "state": "modified"}  # type: ignore[union-attr]
    assert by_path["b.bin"].note == "binary" and by_path["b.bin"].definitions is None
    assert by_path["c.txt"].first_divergence().line == 2  # type: ignore[union-attr]
    assert report.changed_definitions() == 0


def test_clean_tree_and_not_indexed(repo: Repo, index_dir: Path) -> None:
    repo.commit_files({"a.py": "def f():\n    return 1\n"})
    with pytest.raises(NotIndexed):
        Index(repo.root, index_dir).drift()
    assert not index_dir.exists()     # reading never creates an index
    report = _index(repo, index_dir).drift()
    assert report.files == () and report.summary() == "no changes since the index"
    assert report.first_divergence() is None and report.file_counts()["same"] == 1


def test_cli_text_and_json(repo: Repo, index_dir: Path) -> None:
    path, other, old, new, moved_in = LANGS["python"]
    repo.commit_files({path: old})
    _index(repo, index_dir)
    repo.write(path, new)
    runner = CliRunner()
    args = ["drift", "--repo", str(repo.root), "--index", str(index_dir)]
    text = runner.invoke(app, args)
    assert text.exit_code == 0, text.output
    assert "first divergence: m.py:" in text.output and "signature_changed  sig" in text.output
    assert "was: def sig(a):" in text.output
    data = json.loads(runner.invoke(app, [*args, "--json"]).output)
    assert data["definitions_by_state"]["removed"] == 2     # gone, and away (its new file is absent)
    assert data["first_divergence"]["path"] == "m.py"
    missing = runner.invoke(app, [*args, "--branch", "nope"])
    assert missing.exit_code == 5


def test_alignment_is_an_lcs_and_orders_removed_where_they_stood() -> None:
    assert lcs("abcbdab", "bdcaba") and len(lcs("abcbdab", "bdcaba")) == 4
    assert lcs("", "abc") == [] and lcs("abc", "abc") == [(0, 0), (1, 1), (2, 2)]
    old = "def a():\n    pass\n\ndef b():\n    pass\n\ndef c():\n    pass\n"
    new = "def a():\n    pass\n\ndef c():\n    pass\n\ndef d():\n    pass\n"
    report = drift([FileVersions("modified", "x.py", "x.py", old, new)], 0)
    assert [(d.name, d.state) for d in report.files[0].definitions or ()] == [
        ("a", "same"), ("b", "removed"), ("c", "same"), ("d", "added")]
    # Overloads: the same name with two signatures stay apart.
    old_j = "class K {\n  void f(int a) {}\n  void f(String s) {}\n}\n"
    new_j = "class K {\n  void f(String s) { run(); }\n  void f(int a) {}\n}\n"
    entries = drift([FileVersions("modified", "K.java", "K.java", old_j, new_j)], 0).files[0].definitions
    # One overload stays in order (its body changed), the other is reordered; never a
    # signature change, since each signature still exists.
    assert [(d.name, d.state, d.signature) for d in entries or ()] == [
        ("K", "same", "class K"), ("K.f", "content_changed", "void f(String s)"),
        ("K.f", "moved", "void f(int a)")]


def test_outline_signatures() -> None:
    defs = outline("@dec\ndef f(a,\n      b) -> int:\n    return a\n", "x.py")
    assert defs is not None and defs[0].signature == "def f(a, b) -> int:" and defs[0].start == 1
    ts = outline("const g = (a: number): number => a + 1;\n", "x.ts")
    assert ts is not None and ts[0].name == "g" and ts[0].signature == "g = (a: number): number =>"
    assert outline("x", "notes.txt") is None


def test_index_status_carries_a_one_line_drift_summary(repo: Repo, index_dir: Path) -> None:
    repo.commit_files({"a.py": "def f():\n    return 1\n\n\ndef g():\n    return 2\n"})
    idx = _index(repo, index_dir)
    assert idx.status()[0]["drift"]["summary"] == "no changes since the index"
    repo.write("a.py", "def f():\n    return 10\n\n\ndef g(x):\n    return 2\n")
    [row] = idx.status()
    assert row["drift"] == {"summary": "2 definitions changed since the index (1 file changed)",
                            "changed_definitions": 2, "changed_files": 1}
    out = CliRunner().invoke(app, ["index", "status", "--repo", str(repo.root), "--index", str(index_dir)])
    assert "  drift: 2 definitions changed since the index (1 file changed)" in out.output
    repo.git("checkout", "-q", "-b", "other")   # another branch is checked out: no drift for main
    assert idx.status()[0]["drift"] is None


def test_nested_functions_are_definitions_of_their_own() -> None:
    old = "def outer(x):\n    def inner(y):\n        return y\n\n    return inner(x)\n"
    new = "def outer(x):\n    def inner(y):\n        return y + 1\n\n    return inner(x)\n"
    entries = drift([FileVersions("modified", "n.py", "n.py", old, new)], 0).files[0].definitions
    # The change is inside `inner`: `outer`'s own text (without inner's lines) is the same.
    assert [(d.name, d.state) for d in entries or ()] == [("outer", "same"), ("outer.inner", "content_changed")]


def test_lcs_is_longest_against_the_textbook_table() -> None:
    import random

    def table_length(a: list[str], b: list[str]) -> int:
        t = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
        for i in range(len(a) - 1, -1, -1):
            for j in range(len(b) - 1, -1, -1):
                t[i][j] = t[i + 1][j + 1] + 1 if a[i] == b[j] else max(t[i + 1][j], t[i][j + 1])
        return t[0][0]

    rng = random.Random(7)
    for _ in range(2000):
        a = [rng.choice("abcde") for _ in range(rng.randint(0, 12))]
        b = [rng.choice("abcde") for _ in range(rng.randint(0, 12))]
        pairs = lcs(a, b)
        assert len(pairs) == table_length(a, b)
        assert all(a[i] == b[j] for i, j in pairs)
        assert all(p[0] < q[0] and p[1] < q[1] for p, q in zip(pairs, pairs[1:]))


def test_a_deleted_file_is_one_line_and_json_keeps_the_detail(repo: Repo, index_dir: Path) -> None:
    """Issue 21.7: drift listed every definition of a deleted file under "(module-level code
    changed)". Text gives the file one line with its count; --json still lists each definition."""
    legacy = "import os\n\n\n" + "".join(f"def f{n}(x):\n    return x + {n}\n\n\n" for n in range(6))
    repo.commit_files({"shop/legacy.py": legacy, "shop/keep.py": "def keep():\n    return 1\n"})
    _index(repo, index_dir)
    repo.remove("shop/legacy.py")
    repo.write("shop/keep.py", "def keep():\n    return 1\n\n\ndef f5(x):\n    return x + 5\n")
    runner = CliRunner()
    args = ["drift", "--repo", str(repo.root), "--index", str(index_dir)]
    text = runner.invoke(app, args)
    assert text.exit_code == 0, text.output
    lines = text.output.splitlines()
    assert "removed shop/legacy.py (file deleted: 6 definitions, 1 of them moved to shop/keep.py)" in lines
    assert "legacy.py (module-level code changed)" not in text.output
    assert not [ln for ln in lines if ln.lstrip().startswith("removed ") and ln.startswith("  ")]
    assert any(ln.strip().startswith("moved") and "f5" in ln and "from shop/legacy.py" in ln for ln in lines)
    data = json.loads(runner.invoke(app, [*args, "--json"]).output)
    [gone] = [f for f in data["files"] if f["path"] == "shop/legacy.py"]
    assert gone["status"] == "removed" and len(gone["definitions"]) == 6
    assert sorted(d["state"] for d in gone["definitions"]) == ["moved"] + ["removed"] * 5


def test_with_drift_fills_each_status_row_from_the_changes_it_is_given() -> None:
    old, new = "def a():\n    return 1\n", "def a():\n    return 2\n"
    asked: list[tuple[Path, str, str]] = []

    def changes_of(root: Path, branch: str, commit: str) -> tuple[list[FileVersions], int] | None:
        asked.append((root, branch, commit))
        if branch == "gone":
            raise GitError("no such repository")
        return ([FileVersions("modified", "a.py", "a.py", old, new)], 3) if branch == "main" else None

    limits: list[int] = []

    def embed_limit() -> int:
        limits.append(1)
        return 7

    rows = [{"repo": "/r", "branch": "main", "commit": "c1"}, {"repo": "/r", "branch": "other", "commit": "c2"},
            {"repo": "/r", "branch": "gone", "commit": "c3"}]
    assert with_drift(rows, changes_of, 1, embed_limit) is rows
    assert asked == [(Path("/r"), "main", "c1"), (Path("/r"), "other", "c2"), (Path("/r"), "gone", "c3")]
    assert rows[0]["drift"] == {"summary": "1 definition changed since the index (1 file changed)",
                                "changed_definitions": 1, "changed_files": 1}
    assert rows[0]["overlay"] == {"changed_files": 1, "searched_live": 1, "file_limit": 1, "embed_limit": 7}
    # not a checkout of the branch, or a repository in an odd state: listed without a drift
    assert [(r["drift"], r["overlay"]) for r in rows[1:]] == [(None, None), (None, None)]
    assert limits == [1]     # the embed limit is read only for a row with a drift


def test_appending_a_function_is_not_module_code_changed(repo: Repo, index_dir: Path) -> None:
    repo.commit_files({"a.py": "import os\n\n\ndef f():\n    return 1\n"})
    _index(repo, index_dir)
    repo.write("a.py", "import os\n\n\ndef f():\n    return 1\n\n\ndef g():\n    return 2\n")
    a = next(f for f in Index(repo.root, index_dir).drift().files if f.path == "a.py")
    assert not a.module_changed and [d.state for d in a.changed()] == ["added"]
    text = CliRunner().invoke(app, ["drift", "--repo", str(repo.root), "--index", str(index_dir)]).output
    assert "modified a.py\n" in text and "module-level" not in text


def test_drift_and_review_take_the_same_stand_in_on_an_unindexed_branch(repo: Repo, index_dir: Path) -> None:
    """review borrowed the base branch's index for a branch not built yet and said so; drift
    exited 5. Both follow one rule now (Index.stand_in_branch)."""
    from codevouch.review import review as review_change

    repo.commit_files({"a.py": "def f():\n    return 1\n"})
    _index(repo, index_dir)
    repo.checkout("-b", "topic")
    repo.write("a.py", "def f():\n    return 2\n")
    idx = Index(repo.root, index_dir, embedder="fake-bow-64")
    report = idx.drift()
    assert (report.branch, report.instead_of) == ("main", "topic")
    assert [d.state for f in report.files for d in f.changed()] == ["content_changed"]
    reviewed = review_change(idx)
    assert reviewed.manifest()["related"]["index_branch"] == report.branch
    args = ["drift", "--repo", str(repo.root), "--index", str(index_dir)]
    out = CliRunner().invoke(app, args)
    assert out.exit_code == 0 and "topic is not indexed: compared with the index of main" in out.output
    assert json.loads(CliRunner().invoke(app, [*args, "--json"]).output)["instead_of"] == "topic"
    assert CliRunner().invoke(app, [*args, "--branch", "topic"]).exit_code == 5   # named: used as named
