"""Words and whole lines looked up across the working tree (or a commit's tree) with one
`git grep` per call: the reference checker and the validator ask about many names at once.

A needle goes after `-e` or on stdin, so git never reads one as an option; `--no-textconv`
keeps the repository's textconv programs from running.
"""
from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path

from codevouch.errors import UnknownRevision
from codevouch.worktree.git.objects import _OID
from codevouch.worktree.git.runner import run


def grep_words(repo: Path, words: Iterable[str], rev: str | None = None,
               leave_out: Iterable[str] = ()) -> dict[str, set[str]]:
    """word -> the files that contain it as a whole word, in one process.

    rev=None searches the working tree (tracked and untracked files, not ignored ones: the
    working tree is the truth); a rev (a full commit id) searches that commit's tree. Binary
    files are skipped, and so are the repo-relative paths in `leave_out` (files over the size
    cap: git grep holds all of a file in memory, 2 GB for a sparse 2 GB file).
    """
    if rev is not None and not _OID.fullmatch(rev):
        raise UnknownRevision(f"grep_words needs a full commit id, not {rev!r}.")
    wanted = [w for w in dict.fromkeys(words) if w and "\n" not in w]
    if not wanted:
        return {}
    args = ["grep", "-z", "-o", "-w", "-F", "-I", "--no-color", "--no-textconv"]
    args += ["--untracked"] if rev is None else []
    for w in wanted:
        args += ["-e", w]
    # Exit 1 means "no match". git grep has no --end-of-options; the rev is a checked object id.
    out = run(repo, *args, *([rev] if rev else []), "--", *_excluded(leave_out), ok_codes=(0, 1))
    found: dict[str, set[str]] = {}
    prefix = f"{rev}:" if rev else ""
    for path, word in _grep_records(out):
        if word in wanted:
            found.setdefault(word, set()).add(path[len(prefix):] if path.startswith(prefix) else path)
    return found


def _excluded(paths: Iterable[str]) -> list[str]:
    """Pathspecs that leave each of `paths` out, exactly as named (`literal`: no glob), from the
    top of the work tree. With only these given, git searches everything else."""
    return [f":(top,exclude,literal){p}" for p in sorted(set(paths)) if p and "\0" not in p]


def _grep_records(out: bytes) -> Iterator[tuple[str, str]]:
    """(path, text) of each `git grep -z` record, `path NUL text LF`. A path may hold a newline
    (it ends at the NUL); the text never does (a match or a line), so it ends at the first LF."""
    fields = out.decode("utf-8", "surrogateescape").split("\0")
    path = fields[0]
    for field in fields[1:]:
        text, sep, following = field.partition("\n")
        yield path, text
        path = following if sep else ""


def grep_lines(repo: Path, needles: Iterable[str], leave_out: Iterable[str] = ()) -> dict[str, list[str]]:
    """Working-tree files (tracked and untracked, not ignored) holding each needle as a whole
    line, leading and trailing whitespace aside: needle -> repo-relative paths, in one process.

    Needles go on stdin (`-f -`), so none is ever read as an option; `leave_out` as for
    grep_words.
    """
    wanted = {n.strip() for n in needles if n.strip() and "\n" not in n and "\0" not in n}
    if not wanted:
        return {}
    out = run(repo, "grep", "-I", "-z", "-F", "--untracked", "--no-color", "--no-textconv", "-f", "-",
              "--", *_excluded(leave_out), stdin="".join(f"{n}\n" for n in sorted(wanted)).encode("utf-8", "surrogateescape"),
              ok_codes=(0, 1))
    found: dict[str, list[str]] = {}
    for path, content in _grep_records(out):
        key = content.strip()
        if key in wanted and path not in found.get(key, ()):
            found.setdefault(key, []).append(path)
    return found


def grep_word_lines(repo: Path, word: str, leave_out: Iterable[str] = ()) -> Iterator[tuple[str, int, str]]:
    """(path, line number, line) of each working-tree line (tracked and untracked files, not
    ignored ones, not binary) that holds `word` as a whole word, in one process; the caller stops
    reading when it has enough. `leave_out` as for grep_words."""
    if not word or "\n" in word or "\0" in word:
        return
    out = run(repo, "grep", "-z", "-n", "-w", "-F", "-I", "--untracked", "--no-color", "--no-textconv",
              "-e", word, "--", *_excluded(leave_out), ok_codes=(0, 1))
    # `path NUL line NUL text LF` each: the path may hold a newline, the text never does.
    data = out.decode("utf-8", "surrogateescape")
    pos = 0
    while pos < len(data):
        path_end = data.find("\0", pos)
        num_end = data.find("\0", path_end + 1) if path_end >= 0 else -1
        if num_end < 0:
            return
        text_end = data.find("\n", num_end + 1)
        text_end = len(data) if text_end < 0 else text_end
        number = data[path_end + 1:num_end]
        if number.isdigit():
            yield data[pos:path_end], int(number), data[num_end + 1:text_end]
        pos = text_end + 1
