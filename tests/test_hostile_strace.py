"""Hostile repository configs under strace: no program but git runs, and nothing outside the
repository is opened, through search, context and validate on the CLI and over MCP (stdio).

Each case is a real repository whose configuration tries one way out:
- `process`: a long-running filter (`filter.x.process`) for every file;
- `equals`: drivers whose names hold `=`, which `-c filter.<name>.<key>=` cannot name: `x=y`,
  and `x.process=touch ... #`, whose name, pasted into a `-c` option, set filter.x.process to
  a shell command (on main that command ran from search and validate);
- `odd`: names with a quote, a space, a dot and a non-UTF-8 byte;
- `newline`: a name with a newline, which git refuses to read (a clear error, nothing run);
- `worktree`: `core.worktree` in .git/config moves the work tree to a directory outside the
  repository, whose files search and validate used to show: refused;
- `worktree-include`: the same setting in a file .git/config includes, which git (2.39) does
  not take when it finds the work tree: the repository is read as it is, nothing outside.
Every program a config names touches a marker in a directory outside the repository.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import codevouch
from codevouch import Index
from tests.gitrepo import Repo
from tests.test_hostile_input import _strace_usable

# Real processes, traced.
pytestmark = [pytest.mark.process,
              pytest.mark.skipif(not _strace_usable(), reason="strace is not installed, or ptrace is not permitted here")]

ORDERS = "def cancel_order(order):\n    return order.cancel()\n"
NOTES = "cancel the order when asked\n"
SECRET = "def cancel_everything():\n    return 'outside-secret'\n"
# The foreign work tree's a.py has the size of the committed one: a status in that tree would
# read it to compare (a size that differs says "modified" without a read).
LEAKED = ORDERS.replace("cancel", "leaked")


def _config(repo: Repo, text: bytes) -> None:
    with open(repo.root / ".git" / "config", "ab") as handle:
        handle.write(text)


def _process(repo: Repo, marks: Path, outside: Path) -> None:
    repo.git("config", "filter.x.process", f"touch {marks}/process; false")
    repo.git("config", "filter.x.required", "true")


def _equals(repo: Repo, marks: Path, outside: Path) -> None:
    _config(repo, (f'[filter "x=y"]\n\tclean = touch {marks}/equals-clean; cat\n'
                   f'\tprocess = touch {marks}/equals-process\n'
                   f'[filter "x.process=touch {marks}/injected #"]\n\tclean = cat\n'
                   '[filter "x"]\n\tclean = cat\n').encode())


def _odd(repo: Repo, marks: Path, outside: Path) -> None:
    _config(repo, (f'[filter "q\\"u\'o"]\n\tclean = touch {marks}/quote; cat\n\tprocess = touch {marks}/quote-p\n'
                   f'[filter "a.b"]\n\tclean = touch {marks}/dot; cat\n\tprocess = touch {marks}/dot-p\n'
                   f'[filter "s p"]\n\tclean = touch {marks}/space; cat\n').encode()
            + b'[filter "caf\xe9"]\n\tclean = touch ' + str(marks).encode() + b'/latin; cat\n')


def _newline(repo: Repo, marks: Path, outside: Path) -> None:
    _config(repo, f'[filter "a\nb"]\n\tclean = touch {marks}/newline; cat\n'.encode())


def _worktree(repo: Repo, marks: Path, outside: Path) -> None:
    repo.git("config", "core.worktree", str(outside))


def _worktree_include(repo: Repo, marks: Path, outside: Path) -> None:
    (repo.root / ".git" / "moved.cfg").write_text(f"[core]\n\tworktree = {outside}\n")
    repo.git("config", "include.path", "moved.cfg")


ATTRIBUTES = {
    "process": b"* filter=x\n",
    "equals": b"*.txt filter=x=y\n*.py filter=x\n",
    "odd": b"*.py filter=a.b\n*.txt filter=q\"u'o\n*.md filter=caf\xe9\n",
    "newline": b"",
    "worktree": b"",
    "worktree-include": b"",
}
SETUPS: dict[str, Callable[[Repo, Path, Path], None]] = {
    "process": _process, "equals": _equals, "odd": _odd, "newline": _newline,
    "worktree": _worktree, "worktree-include": _worktree_include,
}
REFUSED = ("newline", "worktree")     # every command ends in a clear error


class Case:
    """One hostile repository, built (and indexed) before its config turns hostile."""

    def __init__(self, base: Path, name: str) -> None:
        self.name = name
        self.base = base
        self.outside = base / "outside"         # markers and the foreign work tree live here
        self.marks = self.outside / "marks"
        self.marks.mkdir(parents=True)
        (self.outside / "a.py").write_text(LEAKED)
        (self.outside / "secret.py").write_text(SECRET)
        self.repo = Repo(base / "repo")
        self.repo.commit_files({".gitattributes": ATTRIBUTES[name], "a.py": ORDERS, "notes.txt": NOTES,
                                "c.md": "# cancel\n"})
        self.index = base / "index"
        Index(self.repo.root, self.index, embedder="fake-bow-64").build()
        SETUPS[name](self.repo, self.marks, self.outside)
        self.restat()

    def restat(self) -> None:
        """Uncommitted edits with old stat data: every read path hashes the files again."""
        for path, text in (("a.py", ORDERS + "\n# edited\n"), ("notes.txt", NOTES + "more\n")):
            self.repo.write(path, text)
            os.utime(self.repo.root / path, (1_000_000_000, 1_000_000_000))

    def fired(self) -> list[str]:
        return sorted(p.name for p in self.marks.iterdir())


@pytest.fixture(scope="module", params=list(SETUPS))
def case(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Case:
    return Case(tmp_path_factory.mktemp(f"strace-{request.param}"), request.param)


# --- reading a trace ---------------------------------------------------------------------------

def _strace(prefix: Path) -> list[str]:
    """strace's argv before the traced command: every process to its own file (`-ff`, so no
    call is split across lines), the path of every descriptor an openat returns (`-y`), each line
    stamped with its time (`-ttt`), which orders the files."""
    return ["strace", "-f", "-ff", "-qq", "-y", "-ttt", "-s", "4096", "-e", "trace=execve,openat",
            "-e", "signal=none", "-o", str(prefix)]


def _trace_lines(prefix: Path) -> list[str]:
    """Every traced line without its time stamp, the processes in the order they started (the
    interpreter first). Not by pid: pids wrap around on a machine that has run many processes,
    and then a child's pid can be lower than its parent's."""
    parts = []
    for part in prefix.parent.glob(prefix.name + ".*"):
        stamped = [line.split(" ", 1) for line in part.read_text(errors="replace").splitlines() if line]
        if stamped:
            parts.append((float(stamped[0][0]), [rest for _, rest in stamped]))
    return [line for _, lines in sorted(parts, key=lambda p: p[0]) for line in lines]


def programs_run(lines: list[str]) -> list[str]:
    ran = [line for line in lines if line.startswith("execve(") and line.rstrip().endswith("= 0")]
    return [line.split('execve("', 1)[1].split('"', 1)[0] for line in ran]


def paths_opened(lines: list[str], cwd: Path | None = None) -> list[str]:
    """The file each successful openat opened, as the kernel resolved it. Where strace could not
    read it back (`<unavailable>`: the fd closed, or the process ended, before strace looked;
    seen once under load), the path the call named, made absolute from `cwd` (where the command
    ran), so that the open still counts."""
    opened = []
    for line in lines:
        if line.startswith("openat(") and "<" in line.rsplit("= ", 1)[-1]:
            resolved = line.rsplit("= ", 1)[-1].split("<", 1)[1].rsplit(">", 1)[0]
            if resolved == "unavailable" and '"' in line:
                named = line.split('"', 2)[1]
                resolved = os.path.normpath(os.path.join(str(cwd or "/"), named))
            opened.append(resolved)
    return opened


def _within(path: str, folder: Path | str) -> bool:
    folder = os.path.realpath(str(folder))
    return path == folder or path.startswith(folder.rstrip("/") + "/")


# What git and Python open on their own account: the interpreter and its libraries, the system's
# files, the (test's) home directory, codevouch's own source, private temporary files.
_ALLOWED = tuple({sys.prefix, sys.base_prefix, sys.exec_prefix, "/usr", "/lib", "/lib64", "/etc", "/proc",
                  "/sys", "/dev", str(Path(codevouch.__file__).resolve().parents[1]), tempfile.gettempdir()})


def outside_opens(case: Case, lines: list[str]) -> list[str]:
    """Files opened that are neither the repository's nor the index's, nor one a process opens
    on its own account; any under the hostile case's own directory (the foreign work tree, the
    markers) always counts."""
    bad = []
    for path in paths_opened(lines, case.repo.root):
        if _within(path, case.repo.root) or _within(path, case.index):
            continue
        if _within(path, case.base):
            bad.append(path)
            continue
        if not any(_within(path, allowed) for allowed in (*_ALLOWED, os.environ["HOME"])):
            bad.append(path)
    return bad


def _assert_only_git(lines: list[str]) -> None:
    programs = programs_run(lines)
    assert programs and os.path.basename(programs[0]).startswith("python"), programs[:1]
    assert programs[1:], "no git process was traced"
    assert {os.path.basename(p) for p in programs[1:]} == {"git"}, programs


# --- the CLI -------------------------------------------------------------------------------------

def _snippets(case: Case) -> str:
    return "\n".join(json.dumps(s) for s in [
        {"path": "a.py", "symbol": "cancel_order"},
        {"path": "notes.txt", "start_line": 1, "end_line": 1, "text": "cancel the order when asked"},
        {"path": "secret.py", "symbol": "cancel_everything"},
    ]) + "\n"


COMMANDS = {
    "search": (["search", "cancel order", "--json"], None),
    "context": (["context", "cancel order", "--budget", "800"], None),
    "validate": (["validate", "-"], _snippets),
}


@pytest.mark.parametrize("command", list(COMMANDS))
def test_cli_runs_only_git_and_opens_nothing_outside(case: Case, command: str, tmp_path: Path) -> None:
    argv, stdin = COMMANDS[command]
    case.restat()
    prefix = tmp_path / "trace"
    out = subprocess.run([*_strace(prefix), sys.executable, "-m", "codevouch", *argv], cwd=case.repo.root,
                         input=(stdin(case) if stdin else "").encode(), capture_output=True, timeout=300,
                         env={**os.environ, "CODEVOUCH_INDEX": str(case.index)})
    err = out.stderr.decode(errors="replace")
    lines = _trace_lines(prefix)
    assert case.fired() == []
    _assert_only_git(lines)
    assert outside_opens(case, lines) == []
    assert b"outside-secret" not in out.stdout and b"leaked_order" not in out.stdout
    assert "Traceback" not in err
    if case.name in REFUSED:
        assert out.returncode == 1, (out.returncode, err)
        assert ("core.worktree" if case.name == "worktree" else "cannot read the configuration") in err, err
    else:
        assert out.returncode in ((0, 3) if command == "validate" else (0,)), (out.returncode, err)
        assert b"cancel_order" in out.stdout


# --- the MCP server over stdio ---------------------------------------------------------------------

def _mcp_session(case: Case, prefix: Path, hostile_after_start: bool) -> dict[str, Any]:
    """search, context and validate through a real MCP session of a server run under strace; a
    case whose config is set only after the server started shows that each call checks again."""
    import anyio
    from mcp import Client, StdioServerParameters
    params = StdioServerParameters(
        command="strace", cwd=str(case.repo.root), env=dict(os.environ),
        args=[*_strace(prefix)[1:], sys.executable, "-m", "codevouch", "mcp", "--repo", str(case.repo.root),
              "--index", str(case.index)])
    answers: dict[str, Any] = {}

    async def main() -> None:
        with anyio.fail_after(180):
            async with Client(params, mode="legacy") as client:
                if hostile_after_start:
                    SETUPS[case.name](case.repo, case.marks, case.outside)
                for tool, args in (("search", {"query": "cancel order", "k": 5}),
                                   ("context", {"query": "cancel order", "k": 3}),
                                   ("validate", {"snippets": _mcp_validate_args(case)})):
                    case.restat()
                    result = await client.call_tool(tool, args)
                    answers[tool] = (result.is_error, " ".join(getattr(c, "text", "") for c in result.content))
    anyio.run(main)
    return answers


def _mcp_validate_args(case: Case) -> list[dict[str, Any]]:
    return [json.loads(line) for line in _snippets(case).splitlines()]


def test_mcp_runs_only_git_and_opens_nothing_outside(case: Case, tmp_path: Path) -> None:
    prefix = tmp_path / "trace"
    if case.name in REFUSED:
        # A server is never started on such a repository: it says why and exits.
        out = subprocess.run([*_strace(prefix), sys.executable, "-m", "codevouch", "mcp", "--repo",
                              str(case.repo.root), "--index", str(case.index)], stdin=subprocess.DEVNULL,
                             capture_output=True, timeout=120)
        err = out.stderr.decode(errors="replace")
        assert out.returncode == 1 and "Traceback" not in err, (out.returncode, err)
        answers = {}
    else:
        answers = _mcp_session(case, prefix, hostile_after_start=False)
    lines = _trace_lines(prefix)
    assert case.fired() == []
    _assert_only_git(lines)
    assert outside_opens(case, lines) == []
    assert "outside-secret" not in json.dumps(answers) and "leaked_order" not in json.dumps(answers)
    if answers:
        assert all(not failed for failed, _ in answers.values()), answers
        assert "cancel_order" in answers["search"][1]


def test_mcp_refuses_a_work_tree_moved_while_it_runs(tmp_path: Path) -> None:
    """The server started on a clean repository; core.worktree set afterwards is refused on the
    next call, and the foreign directory is never read."""
    base = tmp_path / "case"
    base.mkdir()
    case = Case.__new__(Case)
    case.name, case.base, case.outside = "worktree", base, base / "outside"
    case.marks = case.outside / "marks"
    case.marks.mkdir(parents=True)
    (case.outside / "secret.py").write_text(SECRET)
    (case.outside / "a.py").write_text(LEAKED)
    case.repo = Repo(base / "repo")
    case.repo.commit_files({"a.py": ORDERS, "notes.txt": NOTES})
    case.index = base / "index"
    Index(case.repo.root, case.index, embedder="fake-bow-64").build()
    prefix = tmp_path / "trace"
    answers = _mcp_session(case, prefix, hostile_after_start=True)
    lines = _trace_lines(prefix)
    _assert_only_git(lines)
    assert outside_opens(case, lines) == []
    assert "outside-secret" not in json.dumps(answers)
    assert all(failed and "core.worktree" in text for failed, text in answers.values()), answers


# --- config includes: which outside files git opens, exactly ------------------------------------

def test_git_opens_only_the_documented_files_a_repository_config_names_outside(tmp_path: Path) -> None:
    """git follows a repository's `include.path` and `includeIf.<cond>.path` wherever they point
    (git has no switch that turns includes off for one scope and keeps the user's own), and
    opens the `core.excludesFile` and `core.attributesFile` they set: those, and only those, are
    opened outside (SECURITY.md lists them; each is stat-checked first). `diff.orderFile` (read by
    every status and diff: a FIFO there hung search) and `mailmap.file` (read by every log) are
    set off on git's command line, and never opened."""
    outside = tmp_path / "outside"
    outside.mkdir()
    names = {"evil.inc": (f"[include]\n\tpath = {outside}/second.inc\n"
                          f"[core]\n\texcludesFile = {outside}/ex\n\tattributesFile = {outside}/attr\n"
                          f"[diff]\n\torderFile = {outside}/order\n[mailmap]\n\tfile = {outside}/map\n"),
             "second.inc": "[x]\n\ty = 1\n", "cond.inc": "[x]\n\tz = 1\n",
             "ex": "*.log\n", "attr": "*.bin binary\n", "order": "*.py\n", "map": "A <a@b> T <t@e>\n"}
    for name, text in names.items():
        (outside / name).write_text(text)
    repo = Repo(tmp_path / "repo")
    repo.commit_files({"a.py": ORDERS, "gone.py": "def gone():\n    return 1\n"})
    repo.git("rm", "-q", "gone.py")
    repo.git("commit", "-q", "-m", "gone")
    index = tmp_path / "index"
    Index(repo.root, index, embedder="fake-bow-64").build()
    repo.git("config", "include.path", str(outside / "evil.inc"))
    repo.git("config", f"includeIf.gitdir:{repo.root}/.path", str(outside / "cond.inc"))
    repo.write("a.py", ORDERS + "\n# edited\n")
    snippet = json.dumps({"path": "never.py", "text": "def never():\n    pass\n"}) + "\n"
    runs = {"search": (["search", "cancel order", "--json"], ""),
            "validate": (["validate", "-"], snippet),
            "check-refs": (["check-refs", "-"], "see `gone.py:1`\n"),
            "review": (["review", "--base", "HEAD~1"], "")}
    opened: set[str] = set()
    for name, (argv, stdin) in runs.items():
        prefix = tmp_path / f"trace-{name}"
        out = subprocess.run([*_strace(prefix), sys.executable, "-m", "codevouch", *argv], cwd=repo.root,
                             input=stdin.encode(), capture_output=True, timeout=300,
                             env={**os.environ, "CODEVOUCH_INDEX": str(index)})
        assert out.returncode in (0, 3) and b"Traceback" not in out.stderr, (name, out.returncode, out.stderr)
        lines = _trace_lines(prefix)
        _assert_only_git(lines)
        opened |= {os.path.basename(p) for p in paths_opened(lines) if _within(p, outside)}
    assert {"evil.inc", "second.inc", "cond.inc"} <= opened <= {"evil.inc", "second.inc", "cond.inc", "ex", "attr"}, opened
