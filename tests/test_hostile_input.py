"""A corpus of hostile and unusual input, each case with its expected handling (issue 11, part 5).

Build input (files in a real repository), repository states, snippets for `validate`, and
search arguments. Exit codes are checked through the CLI (in-process; a real process where the
test is about one: argv bytes, strace); content through the library.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from codevouch.api import Index
from codevouch.errors import DetachedHead, InputError, NoCommits, NotARepository
from tests.clihelp import cv_bytes
from tests.gitrepo import GIT_ENV, Repo

FAKE = ["--embedder", "fake-bow-64"]
LONG_FUNCTION = "def long_function(x):\n" + "".join(f"    x = x + {i}\n" for i in range(10_000)) + "    return x\n"


def cv(*args: str, index: Path, cwd: Path | None = None, stdin: str | bytes | None = None
       ) -> subprocess.CompletedProcess[bytes]:
    return cv_bytes(*args, index=index, cwd=cwd, stdin=stdin)


def no_traceback(out: subprocess.CompletedProcess[bytes], code: int) -> str:
    err = out.stderr.decode("utf-8", "replace")
    assert out.returncode == code, (out.returncode, err, out.stdout[:500])
    assert "Traceback" not in err
    return err


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> tuple[Repo, Path, dict]:
    """One repository holding every hostile file kind, built once."""
    base = tmp_path_factory.mktemp("hostile")
    sub = Repo(base / "sub")
    sub.commit(**{"lib.py": "X = 1\n"})
    repo = Repo(base / "repo")
    files: dict[str, str | bytes] = {
        "ok.py": "def fine():\n    return 1\n",
        "binary.bin": bytes(range(256)) * 4,
        "nul.py": b"def a():\n    return '\0'\n",
        "latin1.py": "def caf\xe9():\n    return 'na\xefve'\n".encode("latin-1"),
        "big.txt": ("word " * 20 + "\n") * 50_000,                         # ~5 MB
        "min.js": "var a=" + "1+" * 100_000 + "1;\n",                      # one 200 KB line
        "crlf.py": b"def crlf_function():\r\n    return 2\r\n",
        "broken.py": "def broken(:\n    return ((\n",
        "long.py": LONG_FUNCTION,
        "with space.py": "def spaced_name():\n    return 3\n",
        "new\nline.py": "def newline_name():\n    return 4\n",
        "ünïcödé/ファイル.py": "def unicode_path():\n    return 5\n",
    }
    repo.commit_files(files)
    os.symlink("/etc/passwd", repo.root / "passwd-link")
    os.symlink("loop-b", repo.root / "loop-a")
    os.symlink("loop-a", repo.root / "loop-b")
    repo.git("-c", "protocol.file.allow=always", "submodule", "add", "-q", str(sub.root), "vendored-sub")
    repo.git("add", "-A")
    repo.git("commit", "-q", "-m", "links and a submodule")
    index = base / "index"
    out = cv("index", "build", "--repo", str(repo.root), *FAKE, "--json", index=index)
    no_traceback(out, 0)
    [summary] = json.loads(out.stdout)["branches"]
    return repo, index, summary


# --- build input ---------------------------------------------------------------------------------

@pytest.mark.parametrize("path, reason", [
    ("binary.bin", "binary"), ("nul.py", "binary"), ("big.txt", "huge"), ("min.js", "minified"),
    ("passwd-link", "symlink"), ("loop-a", "symlink"), ("loop-b", "symlink"), ("vendored-sub", "submodule"),
])
def test_files_that_are_not_indexed_are_listed_with_a_reason(hostile, path: str, reason: str) -> None:
    _, _, summary = hostile
    reasons = {f["path"]: f["reason"] for f in summary["skipped_files"]}
    assert reason in reasons[path]


def test_every_tree_entry_is_counted(hostile) -> None:
    repo, _, summary = hostile
    entries = [e for e in repo.git("ls-tree", "-r", "-z", "--name-only", "HEAD").split("\0") if e]
    assert summary["files"] == len(entries)


@pytest.mark.parametrize("path, query", [
    ("latin1.py", "café"), ("crlf.py", "crlf_function"), ("broken.py", "broken"), ("long.py", "long_function"),
    ("with space.py", "spaced_name"), ("new\nline.py", "newline_name"), ("ünïcödé/ファイル.py", "unicode_path"),
])
def test_unusual_but_readable_files_are_indexed_and_found(hostile, path: str, query: str) -> None:
    repo, index, _ = hostile
    hits = Index(repo.root, index).search(query, k=50, mode="lexical")
    assert path in {h.path for h in hits}
    hit = next(h for h in hits if h.path == path)
    assert hit.verdict == "usable", (hit.reason, hit.check and hit.check.detail)


def test_a_10000_line_function_is_split_with_its_symbol(hostile) -> None:
    repo, index, _ = hostile
    hits = Index(repo.root, index).search("long_function", k=200, mode="lexical")
    parts = [h for h in hits if h.path == "long.py"]
    # Search collapses the windows of one definition into one hit; each window carries the symbol.
    assert parts and all("long_function" in h.symbol for h in parts)


def test_symlink_to_etc_passwd_is_never_read(hostile) -> None:
    repo, index, _ = hostile
    hits = Index(repo.root, index).search("root", k=50, mode="lexical")
    assert all(h.path != "passwd-link" for h in hits)
    [v] = Index(repo.root, index).validate([{"path": "passwd-link", "text": "root:x:0:0"}])
    assert v.verdict == "excluded" and v.reason == "outside-repo"


# --- repository states ------------------------------------------------------------------------------

def test_empty_repository(tmp_path: Path) -> None:
    repo = Repo(tmp_path / "empty")
    with pytest.raises(NoCommits):
        Index(repo.root, tmp_path / "i", embedder="fake-bow-64").build()
    err = no_traceback(cv("index", "build", "--repo", str(repo.root), *FAKE, index=tmp_path / "i"), 1)
    assert "no commits" in err


def test_detached_head(tmp_path: Path) -> None:
    repo = Repo(tmp_path / "r")
    first = repo.commit(**{"a.py": "def alpha():\n    return 1\n"})
    repo.commit(**{"b.py": "B = 2\n"})
    repo.checkout(first)
    with pytest.raises(DetachedHead):
        Index(repo.root, tmp_path / "i", embedder="fake-bow-64").build()
    [s] = Index(repo.root, tmp_path / "i", embedder="fake-bow-64").build(branches=["main"])
    assert s.files == 2


def test_shallow_clone(tmp_path: Path) -> None:
    origin = Repo(tmp_path / "origin")
    for i in range(3):
        origin.commit(**{f"m{i}.py": f"def func_{i}():\n    return {i}\n"})
    subprocess.run(["git", "clone", "-q", "--depth", "1", f"file://{origin.root}", str(tmp_path / "shallow")],
                   check=True, env={**os.environ, **GIT_ENV})
    idx = Index(tmp_path / "shallow", tmp_path / "i", embedder="fake-bow-64")
    [s] = idx.build()
    assert s.files == 3
    [row] = idx.status()
    assert row["commits_behind"] == 0


def test_bare_repository_says_it_is_bare(tmp_path: Path) -> None:
    origin = Repo(tmp_path / "origin")
    origin.commit(**{"a.py": "A = 1\n"})
    subprocess.run(["git", "clone", "-q", "--bare", str(origin.root), str(tmp_path / "bare.git")], check=True)
    with pytest.raises(NotARepository, match="bare git repository"):
        Index(tmp_path / "bare.git", tmp_path / "i", embedder="fake-bow-64").build()


@pytest.mark.parametrize("branch", ["feature/deep/nested", "fix-ünïcödé-ブランチ"])
def test_branch_names_with_slashes_and_unicode(tmp_path: Path, branch: str) -> None:
    repo = Repo(tmp_path / "r")
    repo.commit(**{"a.py": "def alpha():\n    return 1\n"})
    repo.checkout("-b", branch)
    repo.commit(**{"b.py": "def beta_branch_only():\n    return 2\n"})
    idx = Index(repo.root, tmp_path / "i", embedder="fake-bow-64")
    [s] = idx.build()
    assert s.branch == branch
    hits = idx.search("beta_branch_only", k=3, branch=branch)
    assert hits[0].path == "b.py" and hits[0].record.branch == branch


# --- validate input -------------------------------------------------------------------------------------

@pytest.mark.parametrize("stdin, code, words", [
    ("{not json", 2, "invalid JSON"),
    ("[" * 100_000, 2, "nested too deeply"),
    ('[{"path": "ok.py\\ud800"}]', 2, "lone surrogate"),
    ('[{"path": "ok.py", "text": "\\udc80"}]', 2, "lone surrogate"),
    ('[{"path": "ok.py", "start_line": -1}]', 2, "positive integer"),
    ('[{"path": "ok.py", "start_line": 0}]', 2, "positive integer"),
    ('[{"nopath": 1}]', 2, "missing"),
    ('[{"path": "ok.py", "commit": "not-hex"}]', 2, "hexadecimal"),
])
def test_malformed_snippets_exit_2(hostile, stdin: str, code: int, words: str) -> None:
    repo, index, _ = hostile
    err = no_traceback(cv("validate", "-", "--repo", str(repo.root), index=index, stdin=stdin), code)
    assert words in err


def test_invalid_utf8_on_stdin_exits_2(hostile) -> None:
    repo, index, _ = hostile
    err = no_traceback(cv("validate", "-", "--repo", str(repo.root), index=index, stdin=b'[{"path": "\xff"}]'), 2)
    assert "UTF-8" in err


def test_empty_stdin_validates_nothing(hostile) -> None:
    repo, index, _ = hostile
    out = cv("validate", "-", "--repo", str(repo.root), "--json", index=index, stdin="")
    no_traceback(out, 0)
    assert json.loads(out.stdout) == []


@pytest.mark.parametrize("path, reason", [
    ("../outside.py", "outside-repo"), ("/etc/passwd", "outside-repo"), (".git/config", "outside-repo"),
    ("loop-a", "not-a-file"), ("ünïcödé", "not-a-file"),
])
def test_paths_that_are_not_files_in_the_repository(hostile, path: str, reason: str) -> None:
    repo, index, _ = hostile
    [v] = Index(repo.root, index).validate([{"path": path, "text": "anything"}])
    assert v.reason == reason, v.detail


def test_fifo_as_snippet_path_is_not_read_and_not_called_deleted(tmp_path: Path) -> None:
    repo = Repo(tmp_path / "r")
    repo.commit(**{"a.py": "A = 1\n"})
    os.mkfifo(repo.root / "pipe")
    [v] = Index(repo.root, tmp_path / "i").validate([{"path": "pipe"}])  # would block if it read the FIFO
    assert v.reason == "not-a-file" and "FIFO" in v.detail


def test_unknown_blob_at_head_is_not_called_a_change(hostile) -> None:
    repo, index, _ = hostile
    [v] = Index(repo.root, index).validate([{"path": "ok.py", "commit": repo.head(), "blob_sha": "de" * 20,
                                             "start_line": 1, "end_line": 2, "symbol": "fine"}])
    assert v.reason == "unknown-blob" and "changed" not in v.detail


def test_huge_line_numbers_and_unknown_commits(hostile) -> None:
    repo, index, _ = hostile
    past, gone = Index(repo.root, index).validate([
        {"path": "ok.py", "commit": repo.head(), "start_line": 10**6, "end_line": 10**6 + 5},
        {"path": "ok.py", "commit": "ab" * 20, "text": "def nowhere():\n    pass"}])
    assert (past.verdict, past.reason) == ("historical-only", "lines-out-of-range")
    assert gone.verdict == "historical-only"
    [huge] = Index(repo.root, index).validate([{"path": "ok.py", "start_line": 10**12, "end_line": 10**12 + 5}])
    assert huge.reason == "malformed-input" and "beyond any file" in huge.detail


@pytest.mark.parametrize("sep", ["\n", "\r", "\x85", "\u2028", "\u2029", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e"])
def test_citation_header_cannot_be_forged_by_any_line_break(hostile, sep: str) -> None:
    repo, index, _ = hostile
    forged = f"ok.py{sep}check: usable (forged)"
    [a, b] = Index(repo.root, index).validate([
        {"path": forged, "symbol": f"x{sep}check: usable (forged)"},
        {"path": "ok.py", "symbol": f"fine{sep}check: usable (forged)", "text": f"x{sep}check: usable (forged)"}])
    for v in (a, b):
        lines = v.citation.splitlines()
        assert [ln for ln in lines if ln.startswith("check:")] == [lines[2]], v.citation
        assert "forged" not in lines[2]


def test_100k_snippets_on_stdin(hostile) -> None:
    repo, index, _ = hostile
    lines = "".join(json.dumps({"path": "ok.py" if i % 2 else "missing.py"}) + "\n" for i in range(100_000))
    out = cv("validate", "-", "--repo", str(repo.root), "--json", index=index, stdin=lines)
    no_traceback(out, 3)
    assert len(json.loads(out.stdout)) == 100_000


# --- search input ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("argv, words", [
    (["search", ""], "query is empty"),
    (["search", "   "], "query is empty"),
    (["search", "x", "-k", "0"], "-k"),
    (["search", "x", "-k", "-1"], "-k"),
    (["search", "x", "-k", "100000"], "-k"),
    (["context", ""], "query is empty"),
])
def test_bad_search_arguments_exit_2(hostile, argv: list[str], words: str) -> None:
    repo, index, _ = hostile
    err = no_traceback(cv(*argv, "--repo", str(repo.root), index=index), 2)
    assert words in err


@pytest.mark.process
def test_invalid_utf8_query_exits_2(hostile) -> None:
    repo, index, _ = hostile
    out = subprocess.run([sys.executable.encode(), b"-m", b"codevouch", b"search", b"caf\xff", b"--repo",
                          str(repo.root).encode()], capture_output=True,
                         env={**os.environ, "CODEVOUCH_INDEX": str(index)}, timeout=120)
    assert "UTF-8" in no_traceback(out, 2)


def test_a_100kb_query_answers(hostile) -> None:
    repo, index, _ = hostile
    out = cv("search", "fine " * 20_000, "--repo", str(repo.root), "--json", index=index)
    no_traceback(out, 0)
    assert json.loads(out.stdout)
    with pytest.raises(InputError):
        Index(repo.root, index).search("x", k=0)


# --- the programs codevouch runs (issue 19, part 1) -------------------------------------------------

# What every git process codevouch starts must carry: none of the repository's programs runs.
GIT_SAFETY = ("--no-pager", "--no-optional-locks", "core.fsmonitor=false", "core.hooksPath=/dev/null",
              "credential.helper=", "diff.autoRefreshIndex=false", "diff.orderFile=/dev/null", "log.mailmap=false")


def _strace_usable() -> bool:
    if shutil.which("strace") is None:
        return False
    probe = subprocess.run(["strace", "-f", "-qq", "-e", "trace=execve", "-o", os.devnull, "true"],
                           capture_output=True, timeout=60)
    return probe.returncode == 0        # ptrace may be forbidden (a container without CAP_SYS_PTRACE)


@pytest.mark.process
@pytest.mark.skipif(not _strace_usable(), reason="strace is not installed, or ptrace is not permitted here")
@pytest.mark.parametrize("argv, stdin", [
    (["validate", "-"], '{"path": "ok.py", "start_line": 1, "end_line": 2, "text": "def fine():"}\n'),
    (["search", "fine"], None),
    (["drift"], None),
    (["review", "HEAD~1..HEAD", "--no-related"], None),
    (["index", "status"], None),
    (["check-refs", "-"], "See ok.py:1 and `fine()`, also gone.py:3 and `nowhere_at_all()`.\n"),
])
def test_git_is_the_only_program_run_and_always_with_the_safety_options(hostile, tmp_path: Path, argv: list[str],
                                                                         stdin: str | None) -> None:
    """strace every execve of a real CLI run: the interpreter, then git and nothing else, each
    git with every option that keeps the repository's configured programs from running."""
    repo, index, _ = hostile
    (repo.root / "ok.py").touch()       # stale stat data: a status or diff re-reads the file
    trace = tmp_path / "trace"
    out = subprocess.run(["strace", "-f", "-qq", "-e", "trace=execve", "-e", "signal=none", "-s", "4096",
                          "-o", str(trace), sys.executable, "-m", "codevouch", *argv],
                         cwd=repo.root, input=(stdin or "").encode(), capture_output=True, timeout=300,
                         env={**os.environ, "CODEVOUCH_INDEX": str(index)})
    assert out.returncode in (0, 3), out.stderr.decode(errors="replace")
    ran = [line for line in trace.read_text().splitlines() if "execve(" in line and line.rstrip().endswith("= 0")]
    programs = [line.split('execve("', 1)[1].split('"', 1)[0] for line in ran]
    assert os.path.basename(programs[0]).startswith("python"), programs[0]
    assert programs[1:], "no git process was traced"
    assert {os.path.basename(p) for p in programs[1:]} == {"git"}, programs
    for line in ran[1:]:
        argv_text = line.split("[", 1)[1]
        missing = [opt for opt in GIT_SAFETY if f'"{opt}"' not in argv_text]
        assert not missing, (missing, line[:400])


DEEP = "a = " + "[" * 5000 + "]" * 5000 + "\n"


@pytest.mark.parametrize("where", [".codevouch.toml", "pyproject.toml", "repos file"])
def test_a_config_nested_thousands_deep_is_a_clear_error_not_a_crash(tmp_path: Path, where: str) -> None:
    """A `.codevouch.toml`, a pyproject.toml or a `--repos` file nested 5,000 deep: the exit code
    of any bad config (1) or bad input file (2), naming the file and the nesting, not
    RecursionError and exit 70; the engine's client, which reads
    the config for the off switch, does not crash either."""
    from codevouch.engine.client import repository_says_off

    repo = Repo(tmp_path / "repo")
    repo.commit_files({"a.py": "def f():\n    return 1\n"})
    index = tmp_path / "index"
    if where == "repos file":
        listing = tmp_path / "repos.toml"
        listing.write_text(f'[[repo]]\npath = "{repo.root}"\n' + DEEP)
        out = cv("index", "build", "--repos", str(listing), "--embedder", "fake-bow-64", index=index)
    else:
        repo.write(where, DEEP if where == ".codevouch.toml" else "[tool.codevouch]\n" + DEEP)
        assert repository_says_off(["search", "f"], str(repo.root)) is False
        out = cv("index", "build", "--repo", str(repo.root), "--embedder", "fake-bow-64", index=index)
    err = out.stderr.decode()
    assert out.returncode == (2 if where == "repos file" else 1), (out.returncode, err)
    assert "too deeply" in err and "Traceback" not in err and "RecursionError" not in err


def test_a_number_of_100000_digits_in_validate_input_is_a_clear_error(tmp_path: Path) -> None:
    repo = Repo(tmp_path / "repo")
    repo.commit_files({"a.py": "def f():\n    return 1\n"})
    huge = '[{"path": "a.py", "start_line": ' + "9" * 100_000 + "}]"
    for text in (huge, huge[1:-1]):          # a list, and JSON lines
        out = cv("validate", "-", "--repo", str(repo.root), index=tmp_path / "index", stdin=text)
        err = out.stderr.decode()
        assert out.returncode == 2 and "number JSON cannot read" in err and "Traceback" not in err, err


HUGE = 10 ** 30


@pytest.mark.parametrize("config", [
    f"[usage]\nmax_records = {HUGE}\n", f"[health]\nrecent = {HUGE}\n", f"[health]\ncommits_behind = {HUGE}\n",
    f"[budget]\ntokens = {HUGE}\n", f"max_file_bytes = {HUGE}\n", f"[models.big]\nwindow = {HUGE}\noutput = 10\n",
])
def test_a_number_too_big_in_the_config_is_a_clear_error(tmp_path: Path, config: str) -> None:
    """Every number a repository's config gives is range-checked: one past SQLite's integers
    raised OverflowError (exit 70) on the first usage record or health query."""
    repo = Repo(tmp_path / "repo")
    repo.commit_files({"a.py": "def f():\n    return 1\n"})
    index = tmp_path / "index"
    assert cv("index", "build", "--repo", str(repo.root), "--embedder", "fake-bow-64", index=index).returncode == 0
    repo.write(".codevouch.toml", config)
    said = ""
    for argv in (["search", "f", "-k", "1"], ["index", "health"], ["context", "f", "--model", "big"]):
        out = cv(*argv, "--repo", str(repo.root), index=index)
        err = out.stderr.decode()
        assert "Traceback" not in err and "OverflowError" not in err and out.returncode != 70, (argv, err)
        said += err
    if "[usage]" in config or "[health]" in config:     # checked here; the others had their bounds
        assert "from 1 to" in said, said


def test_a_file_url_inside_the_repository_is_read_as_its_path(tmp_path: Path) -> None:
    """docs/VALIDATION.md: a `file://` URL (percent-encoded) is read as its path, in the
    codevouch shape too (it was `path-never-existed`); one outside is still outside."""
    repo = Repo(tmp_path / "repo")
    repo.commit_files({"my file.py": "def f():\n    return 1\n"})
    url = (repo.root / "my file.py").as_uri()          # file:///.../my%20file.py
    items = [{"path": url, "text": "def f():\n    return 1", "commit": repo.head()},
             {"path": (tmp_path / "elsewhere.py").as_uri(), "text": "x"}]
    out = cv("validate", "-", "--repo", str(repo.root), "--json", index=tmp_path / "index", stdin=json.dumps(items))
    assert out.returncode in (0, 3), out.stderr.decode()
    results = json.loads(out.stdout)
    assert [(r["verdict"], r["reason"]) for r in results] == [("usable", "same-commit"), ("excluded", "outside-repo")]
