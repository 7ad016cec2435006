"""What changed between an indexed commit and the working tree, read once (the I/O of drift).

A handful of git processes whatever the size of the change: one `diff --raw -M` against the
working tree (git's rename detection), one `ls-files --others` for untracked files, one
`ls-tree` to count the unchanged files, one `cat-file --batch` for the old blobs, and one
`hash-object --stdin-paths` when deleted and untracked files could be a rename git cannot see.
Working-tree files are read directly, never through a symlink.
"""
from __future__ import annotations

import os
import re
import stat
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from codevouch.syntax.lines import BINARY_SNIFF, decode
from codevouch.worktree import gitio
from codevouch.worktree.files import TooLarge, over_cap, read_bytes

_MAX_PARSE_BYTES = 2_000_000   # larger files are listed, not parsed

# A unified diff's hunk header, as git writes it: "@@ -10,7 +10,8 @@ ..." (a count left out is 1).
# Read by the review's patch parser and by check-refs in an agent's patch.
HUNK_HEADER = re.compile(r"^@@ -(?P<old_start>\d+)(?:,(?P<old_count>\d+))? \+(?P<new_start>\d+)(?:,(?P<new_count>\d+))? @@")


@dataclass(frozen=True)
class FileVersions:
    """One changed file: its status, paths, and the text of each side (None when absent)."""
    status: str                  # modified | added | removed | renamed
    old_path: str | None
    new_path: str | None
    old_text: str | None = None
    new_text: str | None = None
    note: str | None = None      # why a side has no text: binary, symlink, unreadable, huge

    @property
    def path(self) -> str:
        return self.new_path or self.old_path or ""


def text_of(data: bytes) -> tuple[str | None, str | None]:
    """(text, None), or (None, why not): binary or too large to parse."""
    if b"\0" in data[:BINARY_SNIFF]:
        return None, "binary"
    if len(data) > _MAX_PARSE_BYTES:
        return None, f"huge (>{_MAX_PARSE_BYTES} bytes)"
    return decode(data), None


def read_worktree(root: Path, path: str) -> tuple[str | None, str | None]:
    """A working-tree file's text, or (None, why): symlinks are not followed, and a FIFO, a
    device or a nested repository is named for what it is, never opened."""
    target = root / path
    try:
        st = os.lstat(target)
    except OSError as exc:
        return None, f"unreadable ({exc.strerror or exc})"
    if stat.S_ISLNK(st.st_mode):
        return None, "symlink"
    if not stat.S_ISREG(st.st_mode):
        return None, gitio.skip_reason(st, str(target), _MAX_PARSE_BYTES) or "not a regular file"
    # Read through the size cap: at most _MAX_PARSE_BYTES + 1 bytes (a sparse 2 GB file was read whole).
    data = read_bytes(root, path, _MAX_PARSE_BYTES)
    if isinstance(data, TooLarge):
        return None, f"huge (>{_MAX_PARSE_BYTES} bytes)"
    if data is None:
        return None, "unreadable"
    return text_of(data)


def untracked_copies(root: Path, lost: Mapping[str, str], untracked: Sequence[str] | None = None) -> dict[str, str]:
    """Files moved without git (a plain `mv`): lost path -> the untracked file that has its old
    blob id exactly (`lost`: path -> that blob id). git sees such a move as a deletion and
    nothing more; the same blob id is the same content, so it is a rename (drift pairs them,
    check-refs names the new path). One `hash-object` for the untracked files, when any is lost;
    the first untracked file in path order wins for each blob."""
    if not lost:
        return {}
    files = sorted(gitio.untracked_files(root) if untracked is None else untracked)
    huge = over_cap(root, files, _MAX_PARSE_BYTES)   # never hashed (a sparse 2 GB file)
    files = [p for p in files if p not in huge]
    if not files:
        return {}
    by_blob: dict[str, list[str]] = {}
    for path, blob in sorted(lost.items()):
        by_blob.setdefault(blob, []).append(path)
    found: dict[str, str] = {}
    hashed = gitio.hash_worktree_files(root, files, _MAX_PARSE_BYTES)
    for path in files:
        olds = by_blob.get(hashed.get(path, ""))
        if olds:
            found[olds.pop(0)] = path
    return found


def worktree_changes(root: Path, commit: str) -> tuple[list[FileVersions], int]:
    """Changed files from `commit` to the working tree (tracked and untracked), with the
    text of each side, and the number of the commit's files that are unchanged."""
    diff = gitio.diff_trees(root, commit, None)
    untracked = [p for p in gitio.untracked_files(root)]
    deleted = {c.old_path: c.old_blob for c in diff if c.status == "D" and c.old_path}
    # git sees an untracked copy of a deleted file as delete + nothing: pair exact copies.
    renamed_untracked = untracked_copies(root, {path: blob for path, blob in deleted.items() if blob}, untracked)
    old_blobs = gitio.read_blobs(root, [c.old_blob for c in diff if c.old_blob and c.status != "A"])
    changes, touched_old = _tracked_changes(root, diff, old_blobs, renamed_untracked)
    paired = {new: old for old, new in renamed_untracked.items()}
    for path in untracked:
        new_text, note = read_worktree(root, path)
        if path in paired:
            old_text, old_note = _old_text(old_blobs, deleted[paired[path]])
            touched_old += 1
            changes.append(FileVersions("renamed", paired[path], path, old_text, new_text, note or old_note))
        else:
            changes.append(FileVersions("added", None, path, None, new_text, note))
    same = gitio.file_count(root, commit) - touched_old
    return changes, max(same, 0)


def _tracked_changes(root: Path, diff: Sequence[gitio.Change], old_blobs: dict[str, bytes],
                     renamed_untracked: Mapping[str, str]) -> tuple[list[FileVersions], int]:
    """The changed tracked files of `diff`, in its order, with the text of each side, and how
    many of them were files of the indexed commit (modified, removed or renamed). A deletion
    paired with an untracked copy (`renamed_untracked`) is left out: it is listed as a rename
    with the untracked files."""
    changes: list[FileVersions] = []
    touched_old = 0
    for c in diff:
        if c.status == "D" and c.old_path in renamed_untracked:
            continue
        old_text, old_note = _old_text(old_blobs, c.old_blob) if c.status != "A" else (None, None)
        new_text, new_note = read_worktree(root, c.new_path) if c.new_path else (None, None)
        status = {"A": "added", "D": "removed", "R": "renamed", "C": "added"}.get(c.status, "modified")
        if status == "modified" and old_text is not None and old_text == new_text:
            continue  # only the file's stat data changed
        touched_old += status in ("modified", "removed", "renamed")
        changes.append(FileVersions(status, None if status == "added" else c.old_path,
                                    c.new_path if status != "removed" else None,
                                    old_text, new_text, old_note or new_note))
    return changes, touched_old


def _old_text(blobs: dict[str, bytes], sha: str | None) -> tuple[str | None, str | None]:
    if sha is None or sha not in blobs:
        return None, "not a regular file in the indexed commit" if sha else None
    return text_of(blobs[sha])
