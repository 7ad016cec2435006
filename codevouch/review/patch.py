"""Unified diffs from `git diff` parsed into files and hunks (pure).

Hunk bodies are read by their line counts, never by looking for the next header, so a
changed line that reads like a header (`+diff --git ...`, `+@@ ...`) stays content. Paths come
from `rename from/to`, `---`/`+++` and, for binary or mode-only changes, the `diff --git` line;
C-quoted paths (git's quoting of unusual bytes) are unquoted.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from codevouch.worktree.changes import HUNK_HEADER

_ESCAPES = {"a": 7, "b": 8, "t": 9, "n": 10, "v": 11, "f": 12, "r": 13, '"': 34, "\\": 92}
_SUBMODULE_MODE = "160000"


@dataclass(frozen=True)
class Hunk:
    header: str                  # "@@ -10,7 +10,8 @@ def cancel(self):"
    old_start: int
    old_count: int
    new_start: int
    new_count: int
    lines: tuple[str, ...]       # body lines with their " ", "+", "-" or "\\" prefix

    @property
    def new_end(self) -> int:
        return self.new_start + max(self.new_count, 1) - 1

    @property
    def old_end(self) -> int:
        return self.old_start + max(self.old_count, 1) - 1

    def text(self, keep: int | None = None) -> str:
        body = self.lines if keep is None else self.lines[:keep]
        return "\n".join((self.header, *body))


@dataclass(frozen=True)
class FilePatch:
    status: str                  # added | deleted | modified | renamed | copied
    old_path: str | None         # None when added
    new_path: str | None         # None when deleted
    old_mode: str | None = None
    new_mode: str | None = None
    similarity: int | None = None
    binary: bool = False
    hunks: tuple[Hunk, ...] = ()
    untracked: bool = False      # a file git does not track (made here, not by git)

    @property
    def path(self) -> str:
        return self.new_path or self.old_path or ""

    @property
    def submodule(self) -> bool:
        return _SUBMODULE_MODE in (self.old_mode, self.new_mode)

    @property
    def mode_changed(self) -> bool:
        return self.old_mode is not None and self.new_mode is not None and self.old_mode != self.new_mode


def unquote(text: str) -> str:
    """A path as git printed it: C-quoted ("a\\tb", "\\303\\251") or plain."""
    if not (len(text) >= 2 and text[0] == '"' and text[-1] == '"'):
        return text
    out = bytearray()
    body = text[1:-1]
    i = 0
    while i < len(body):
        ch = body[i]
        if ch == "\\" and i + 1 < len(body):
            nxt = body[i + 1]
            if nxt in "01234567" and i + 3 < len(body) + 1 and all(c in "01234567" for c in body[i + 1:i + 4]):
                out.append(int(body[i + 1:i + 4], 8))
                i += 4
                continue
            out.append(_ESCAPES.get(nxt, ord(nxt)))
            i += 2
            continue
        out.extend(ch.encode("utf-8", "surrogateescape"))
        i += 1
    return out.decode("utf-8", "surrogateescape")


def _side(text: str, prefix: str) -> str | None:
    """`a/x` -> `x`; `/dev/null` -> None (a trailing tab follows names with spaces)."""
    text = text.rstrip("\t") if not text.startswith('"') else text
    if text == "/dev/null":
        return None
    path = unquote(text)
    return path[len(prefix):] if path.startswith(prefix) else path


def _git_line_paths(rest: str) -> tuple[str, str]:
    """Both paths of `diff --git a/X b/Y` (quoted, or plain with X == Y)."""
    if rest.startswith('"'):
        end = 1
        while end < len(rest) and not (rest[end] == '"' and rest[end - 1] != "\\"):
            end += 1
        first, second = rest[:end + 1], rest[end + 2:]
        return _side(first, "a/") or "", _side(second, "b/") or ""
    if rest.endswith('"'):
        start = rest.index(' "')
        return _side(rest[:start], "a/") or "", _side(rest[start + 1:], "b/") or ""
    half = (len(rest) - 1) // 2     # "a/X b/X": the same name on both sides
    return _side(rest[:half], "a/") or "", _side(rest[half + 1:], "b/") or ""


def parse_patch(text: str) -> list[FilePatch]:
    """Every file of a `git diff --patch` output, in order."""
    lines = text.split("\n")
    files: list[FilePatch] = []
    i = 0
    while i < len(lines):
        if not lines[i].startswith("diff --git "):
            i += 1
            continue
        i = _parse_file(lines, i, files)
    return files


@dataclass
class _Header:
    """What a file's extended header lines (between `diff --git` and its first hunk) say."""
    old_path: str | None
    new_path: str | None
    status: str = "modified"
    binary: bool = False
    info: dict[str, str | None] = field(default_factory=dict)


def _parse_file(lines: list[str], i: int, files: list[FilePatch]) -> int:
    git_old, git_new = _git_line_paths(lines[i][len("diff --git "):])
    head = _Header(git_old, git_new)
    i += 1
    while i < len(lines) and not lines[i].startswith(("diff --git ", "@@ ")):
        _read_header_line(lines[i], head)
        i += 1
    hunks: list[Hunk] = []
    while i < len(lines) and lines[i].startswith("@@ "):
        hunk, i = _parse_hunk(lines, i)
        hunks.append(hunk)
    info = head.info
    if head.status == "added":
        info.pop("old_mode", None)
    if head.status == "deleted":
        info.pop("new_mode", None)
    files.append(FilePatch(head.status, head.old_path, head.new_path, info.get("old_mode"), info.get("new_mode"),
                           int(similarity) if (similarity := info.get("similarity")) else None, head.binary,
                           tuple(hunks)))
    return i


def _read_header_line(line: str, head: _Header) -> None:
    """One extended header line into what the header says so far."""
    info = head.info
    key, _, value = line.partition(" ")
    if line.startswith("new file mode "):
        head.status, head.old_path, info["new_mode"] = "added", None, line.rsplit(" ", 1)[1]
    elif line.startswith("deleted file mode "):
        head.status, head.new_path, info["old_mode"] = "deleted", None, line.rsplit(" ", 1)[1]
    elif key in ("old", "new") and value.startswith("mode "):
        info[f"{key}_mode"] = value[5:]
    elif line.startswith(("rename from ", "copy from ")):
        head.status = "renamed" if key == "rename" else "copied"
        head.old_path = unquote(line.split(" ", 2)[2])
    elif line.startswith(("rename to ", "copy to ")):
        head.new_path = unquote(line.split(" ", 2)[2])
    elif line.startswith(("similarity index ", "dissimilarity index ")):
        info["similarity"] = line.rsplit(" ", 1)[1].rstrip("%")
    elif line.startswith("index "):
        parts = line.split()
        if len(parts) == 3:     # "index a..b 100644": the mode did not change
            info.setdefault("old_mode", parts[2])
            info.setdefault("new_mode", parts[2])
    elif line.startswith(("Binary files ", "GIT binary patch")):
        head.binary = True
    elif line.startswith("--- "):
        head.old_path = _side(line[4:], "a/")
    elif line.startswith("+++ "):
        head.new_path = _side(line[4:], "b/")


def _parse_hunk(lines: list[str], i: int) -> tuple[Hunk, int]:
    header = lines[i]
    m = HUNK_HEADER.match(header)
    if m is None:
        raise ValueError(f"not a hunk header: {header!r}")
    old_start, new_start = int(m["old_start"]), int(m["new_start"])
    old_count = int(m["old_count"]) if m["old_count"] is not None else 1
    new_count = int(m["new_count"]) if m["new_count"] is not None else 1
    body: list[str] = []
    old_left, new_left = old_count, new_count
    i += 1
    while i < len(lines) and (old_left > 0 or new_left > 0 or lines[i].startswith("\\")):
        line = lines[i]
        tag = line[:1]
        if tag == "\\":
            pass                     # "\ No newline at end of file"
        elif tag == "+":
            new_left -= 1
        elif tag == "-":
            old_left -= 1
        else:                        # context (an empty line is a context line whose space was eaten)
            old_left -= 1
            new_left -= 1
        body.append(line)
        i += 1
    return Hunk(header, old_start, old_count, new_start, new_count, tuple(body)), i


def added_file(path: str, text: str | None, note: str | None = None) -> FilePatch:
    """An untracked file as git would show it added: one hunk of `+` lines (or binary)."""
    if text is None:
        return FilePatch("added", None, path, None, "100644", binary=note == "binary", untracked=True)
    if not text:
        return FilePatch("added", None, path, None, "100644", untracked=True)
    body = text.split("\n")
    no_newline = body[-1] != ""
    if not no_newline:
        body = body[:-1]
    lines = tuple(f"+{line}" for line in body) + (("\\ No newline at end of file",) if no_newline else ())
    header = f"@@ -0,0 +1{',' + str(len(body)) if len(body) != 1 else ''} @@"
    return FilePatch("added", None, path, None, "100644", hunks=(Hunk(header, 0, 0, 1, len(body), lines),),
                     untracked=True)
