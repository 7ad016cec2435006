"""Drift between two versions of a repository, in two layers (pure: data in, data out).

Layer 1, files: each changed file is modified, added, removed or renamed (git decides
renames); unchanged files are only counted. Layer 2, definitions: inside each changed file
(a renamed file is aligned with its old path), definitions are aligned by a longest common
subsequence over (qualified name, signature), then classified:

    same               name, signature and own text equal, in the same order
    content_changed    name and signature kept, own text changed
    signature_changed  name kept, signature changed
    moved              reordered within the file, or gone from one file and found in another
    added / removed    no counterpart

A definition's "own text" is its lines minus those of the definitions nested in it, so a
changed method shows up as that method, not also as its class. The first divergence is the
first definition in file order that is not `same` (module-level code when no definition
differs), per file and overall (files in path order; a changed definition before a file
whose definitions are not known).

`with_drift` adds a drift to each row of `codevouch index status`; the working tree's changes
come from the caller (`changes_of`), so this module reads nothing itself.
"""
from __future__ import annotations

from bisect import bisect_left
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import Any

from codevouch.errors import CodevouchError
from codevouch.syntax.outline import Definition
from codevouch.worktree.changes import FileVersions

_FILE_STATES = ("modified", "added", "removed", "renamed")
_DEF_STATES = ("same", "content_changed", "signature_changed", "moved", "added", "removed")

Outline = Callable[[str, str], "list[Definition] | None"]
# (work tree top, branch, indexed commit) -> (changed files, unchanged count) between the commit
# and the working tree, or None when the working tree is not a checkout of the branch.
ChangesOf = Callable[[Path, str, str], "tuple[list[FileVersions], int] | None"]
Each = Callable[[Sequence[Callable[[], "Drift | None"]]], "list[Drift | None]"]


@dataclass(frozen=True)
class Place:
    path: str
    start: int
    end: int

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "start": self.start, "end": self.end}


@dataclass(frozen=True)
class DefinitionDrift:
    state: str
    name: str
    old: Place | None            # None when added
    new: Place | None            # None when removed
    signature: str               # the new signature (the old one when removed)
    old_signature: str | None = None   # only when it changed
    content_changed: bool = False      # own text differs (also said for moved definitions)
    own: str = field(default="", compare=False, repr=False)   # own text (new side, else old)

    def line_in(self, path: str) -> int:
        """Where it is in `path`: its new place there, else its old place."""
        if self.new is not None and (self.new.path == path or self.old is None):
            return self.new.start
        return self.old.start  # type: ignore[union-attr]  # an entry has an old or a new place

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "state": self.state, "name": self.name,
            "old": self.old.to_json() if self.old else None,
            "new": self.new.to_json() if self.new else None, "signature": self.signature}
        if self.old_signature is not None:
            out["old_signature"] = self.old_signature
        if self.state == "moved":
            out["content_changed"] = self.content_changed
        return out


@dataclass(frozen=True)
class Divergence:
    path: str
    line: int
    name: str | None             # None: module-level code (or a file without known definitions)
    state: str

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "line": self.line, "name": self.name, "state": self.state}


@dataclass(frozen=True)
class FileDrift:
    status: str
    path: str                    # the current path (the old one for a removed file)
    old_path: str | None
    definitions: tuple[DefinitionDrift, ...] | None   # None: not known (see note)
    module_changed: bool         # code outside every definition changed
    first_changed_line: int | None
    note: str | None = None

    def changed(self) -> list[DefinitionDrift]:
        return [d for d in self.definitions or () if d.state != "same"]

    def first_divergence(self) -> Divergence | None:
        first = next(iter(self.changed()), None)
        if first is not None:
            return Divergence(self.path, first.line_in(self.path), first.name, first.state)
        if self.first_changed_line is not None:
            return Divergence(self.path, self.first_changed_line, None, self.status)
        return None

    def to_json(self) -> dict[str, Any]:
        first = self.first_divergence()
        return {"status": self.status, "path": self.path, "old_path": self.old_path,
                "note": self.note, "module_changed": self.module_changed,
                "first_divergence": first.to_json() if first else None,
                "definitions": None if self.definitions is None
                else [d.to_json() for d in self.definitions]}


@dataclass(frozen=True)
class Drift:
    files: tuple[FileDrift, ...]   # changed files, in path order
    same_files: int
    branch: str | None = None      # what the old side is: the branch's indexed commit
    commit: str | None = None
    instead_of: str | None = None  # the checked-out branch, when it is not indexed and `branch` stands in

    def definition_counts(self) -> dict[str, int]:
        # A definition moved between files is listed in both; count it once.
        unique = {id(d): d for f in self.files for d in f.definitions or ()}
        counts = Counter(d.state for d in unique.values())
        return {state: counts.get(state, 0) for state in _DEF_STATES}

    def file_counts(self) -> dict[str, int]:
        counts = Counter(f.status for f in self.files)
        return {"same": self.same_files, **{s: counts.get(s, 0) for s in _FILE_STATES}}

    def changed_definitions(self) -> int:
        return sum(n for state, n in self.definition_counts().items() if state != "same")

    def first_divergence(self) -> Divergence | None:
        """The first changed definition, files in path order; else the first changed file."""
        firsts = [d for d in (f.first_divergence() for f in self.files) if d]
        return next((d for d in firsts if d.name is not None), next(iter(firsts), None))

    def summary(self) -> str:
        files = len(self.files)
        if not files:
            return "no changes since the index"
        n = self.changed_definitions()
        return (f"{n} definition{'s' * (n != 1)} changed since the index "
                f"({files} file{'s' * (files != 1)} changed)")

    def to_json(self) -> dict[str, Any]:
        first = self.first_divergence()
        return {"branch": self.branch, "commit": self.commit, "instead_of": self.instead_of,
                "summary": self.summary(), "files_by_state": self.file_counts(),
                "definitions_by_state": self.definition_counts(),
                "first_divergence": first.to_json() if first else None,
                "files": [f.to_json() for f in self.files]}


# -- definitions: own text ------------------------------------------------------------------

@dataclass(frozen=True)
class _Def:
    d: Definition
    own: str          # the definition's lines minus those of definitions nested in it


def _own_texts(defs: Sequence[Definition], lines: Sequence[str]) -> tuple[list[_Def], str]:
    """Each definition with its own text, and the module's own text (outside every definition)."""
    children: dict[int, list[tuple[int, int]]] = {i: [] for i in range(len(defs))}
    top: list[tuple[int, int]] = []
    stack: list[int] = []
    for i, d in enumerate(defs):
        while stack and defs[stack[-1]].end < d.start:
            stack.pop()
        parent = next((p for p in reversed(stack)
                       if (defs[p].start, defs[p].end) != (d.start, d.end)
                       and defs[p].start <= d.start and d.end <= defs[p].end), None)
        (children[parent] if parent is not None else top).append((d.start, d.end))
        stack.append(i)

    def own(start: int, end: int, holes: list[tuple[int, int]]) -> str:
        # The segments between nested definitions (holes are sorted and may overlap).
        parts: list[str] = []
        row = start
        for s, e in holes:
            if s > row:
                parts.extend(lines[row - 1:min(s, end + 1) - 1])
            row = max(row, e + 1)
        parts.extend(lines[row - 1:end])
        return "\n".join(parts)

    result = [_Def(d, own(d.start, d.end, children[i])) for i, d in enumerate(defs)]
    return result, own(1, len(lines), top)


# -- alignment ------------------------------------------------------------------------------

def lcs(a: Sequence[Any], b: Sequence[Any]) -> list[tuple[int, int]]:
    """Index pairs of a longest common subsequence of a and b (hashable items).

    Common prefix and suffix are taken first; the edited middle is solved as Hunt and
    Szymanski do, a longest increasing subsequence over the matching pairs: definitions'
    keys are nearly unique, so this costs about n log n instead of the n * m table.
    """
    n, m = len(a), len(b)
    pre = 0
    while pre < n and pre < m and a[pre] == b[pre]:
        pre += 1
    suf = 0
    while suf < n - pre and suf < m - pre and a[n - 1 - suf] == b[m - 1 - suf]:
        suf += 1
    ma, mb = a[pre:n - suf], b[pre:m - suf]
    where: dict[Any, list[int]] = {}
    for j, key in enumerate(mb):
        where.setdefault(key, []).append(j)
    tails: list[int] = []        # tails[k]: the smallest j ending a common run of length k + 1
    ends: list[int] = []         # the node of that run's last pair
    nodes: list[tuple[int, int, int]] = []   # (i, j, previous node or -1)
    for i, key in enumerate(ma):
        # Positions in decreasing order, so one i never extends a run through itself.
        for j in reversed(where.get(key, ())):
            k = bisect_left(tails, j)
            nodes.append((i, j, ends[k - 1] if k else -1))
            if k == len(tails):
                tails.append(j)
                ends.append(len(nodes) - 1)
            else:
                tails[k] = j
                ends[k] = len(nodes) - 1
    middle: list[tuple[int, int]] = []
    node = ends[-1] if ends else -1
    while node != -1:
        i, j, node = nodes[node]
        middle.append((pre + i, pre + j))
    middle.reverse()
    return ([(k, k) for k in range(pre)] + middle
            + [(n - suf + k, m - suf + k) for k in range(suf)])


def _entry(old: _Def | None, new: _Def | None, old_path: str, new_path: str,
           state: str | None = None) -> DefinitionDrift:
    o = Place(old_path, old.d.start, old.d.end) if old else None
    n = Place(new_path, new.d.start, new.d.end) if new else None
    if old is None:
        return DefinitionDrift("added", new.d.name, None, n, new.d.signature, own=new.own)  # type: ignore[union-attr]  # one side is set
    if new is None:
        return DefinitionDrift("removed", old.d.name, o, None, old.d.signature, own=old.own)
    changed = old.own != new.own
    signature_changed = old.d.signature != new.d.signature
    if state is None:
        state = ("signature_changed" if signature_changed
                 else "content_changed" if changed else "same")
    return DefinitionDrift(state, new.d.name, o, n, new.d.signature,
                           old.d.signature if signature_changed else None, changed, new.own)


def _late_pairs(old: Sequence[_Def], new: Sequence[_Def], paired_old: set[int],
                paired_new: set[int]) -> dict[int, tuple[int, str]]:
    """Pairs the LCS left out, new index -> (old index, state); marks both sides paired."""
    # Out of LCS order but the same name and signature: reordered. Then the same name only:
    # its signature changed. First unmatched counterpart in file order, for duplicates.
    late: dict[int, tuple[int, str]] = {}
    for key_of, state in ((lambda x: (x.d.name, x.d.signature), "moved"),
                          (lambda x: x.d.name, "signature_changed")):
        waiting: dict[Any, list[int]] = {}
        for i, x in enumerate(old):
            if i not in paired_old:
                waiting.setdefault(key_of(x), []).append(i)
        for j, x in enumerate(new):
            if j in paired_new:
                continue
            queue = waiting.get(key_of(x))
            if queue:
                i = queue.pop(0)
                paired_old.add(i)
                paired_new.add(j)
                late[j] = (i, state)
    return late


def align(old: Sequence[_Def], new: Sequence[_Def], old_path: str, new_path: str
          ) -> list[DefinitionDrift]:
    """Definitions of two versions of one file, aligned, in the new file's order (a removed
    one just after where its predecessor went)."""
    keys_old = [(x.d.name, x.d.signature) for x in old]
    keys_new = [(x.d.name, x.d.signature) for x in new]
    anchors = lcs(keys_old, keys_new)
    paired_old = {i for i, _ in anchors}
    paired_new = {j for _, j in anchors}
    late = _late_pairs(old, new, paired_old, paired_new)
    partner = {i: j for i, j in anchors} | {i: j for j, (i, _) in late.items()}
    out: list[tuple[float, DefinitionDrift]] = []
    for i, j in anchors:
        out.append((new[j].d.start, _entry(old[i], new[j], old_path, new_path)))
    for j, (i, state) in late.items():
        out.append((new[j].d.start, _entry(old[i], new[j], old_path, new_path, state)))
    for j in range(len(new)):
        if j not in paired_new:
            out.append((new[j].d.start, _entry(None, new[j], old_path, new_path)))
    # A removed definition stands just after the place its predecessor went to.
    after = 0.0
    for i in range(len(old)):
        if i in partner:
            after = new[partner[i]].d.start
        elif i not in paired_old:
            out.append((after + 0.5, _entry(old[i], None, old_path, new_path)))
    return [entry for _, entry in sorted(out, key=lambda item: item[0])]


def _first_changed_line(old: Sequence[str], new: Sequence[str]) -> int | None:
    for k, (a, b) in enumerate(zip(old, new)):
        if a != b:
            return k + 1
    if len(old) != len(new):
        return min(len(old), len(new)) + 1
    return None


def _file_drift(change: FileVersions, outline: Outline) -> FileDrift:
    old_lines = change.old_text.split("\n") if change.old_text is not None else []
    new_lines = change.new_text.split("\n") if change.new_text is not None else []
    old_defs = outline(change.old_text, change.old_path or "") if change.old_text is not None else []
    new_defs = outline(change.new_text, change.new_path or "") if change.new_text is not None else []
    path = change.path
    first_line = (1 if change.status in ("added", "removed")
                  else _first_changed_line(old_lines, new_lines))
    known = (change.old_text is not None or change.status == "added") and \
            (change.new_text is not None or change.status == "removed")
    if not known or old_defs is None or new_defs is None:
        return FileDrift(change.status, path, change.old_path, None, first_line is not None,
                         first_line, change.note or "definitions not known for this language")
    old_own, old_module = _own_texts(old_defs, old_lines) if old_lines else ([], "")
    new_own, new_module = _own_texts(new_defs, new_lines) if new_lines else ([], "")
    entries = align(old_own, new_own, change.old_path or path, change.new_path or path)
    # Blank lines are not module code: appending a function adds the blank lines before it.
    return FileDrift(change.status, path, change.old_path, tuple(entries),
                     _code_lines(old_module) != _code_lines(new_module), first_line, change.note)


def _code_lines(text: str) -> list[str]:
    return [line for line in text.split("\n") if line.strip()]


def _moves(removed: list[tuple[int, DefinitionDrift]], added: list[tuple[int, DefinitionDrift]]
           ) -> dict[int, DefinitionDrift]:
    """id(old entry) -> the move that replaces it, for each removed and added entry paired
    across files (same name and signature first, then the same name)."""
    swap: dict[int, DefinitionDrift] = {}
    for key_of in (lambda d: (d.name, d.signature), lambda d: d.name):
        waiting: dict[Any, list[tuple[int, DefinitionDrift]]] = {}
        for k, d in removed:
            if id(d) not in swap:
                waiting.setdefault(key_of(d), []).append((k, d))
        for k, d in added:
            if id(d) in swap:
                continue
            queue = [(kk, dd) for kk, dd in waiting.get(key_of(d), []) if kk != k and id(dd) not in swap]
            if not queue:
                continue
            _, gone = queue[0]
            move = DefinitionDrift("moved", d.name, gone.old, d.new, d.signature,
                                   gone.signature if gone.signature != d.signature else None,
                                   gone.own != d.own, d.own)
            swap[id(gone)] = swap[id(d)] = move
    return swap


def _cross_file_moves(files: list[FileDrift]) -> list[FileDrift]:
    """A definition removed from one file and added to another is one move."""
    removed = [(k, d) for k, f in enumerate(files) for d in f.definitions or () if d.state == "removed"]
    added = [(k, d) for k, f in enumerate(files) for d in f.definitions or () if d.state == "added"]
    if not removed or not added:
        return files
    swap = _moves(removed, added)
    if not swap:
        return files
    return [replace(f, definitions=tuple(swap.get(id(d), d) for d in f.definitions))
            if f.definitions else f for f in files]


def drift(changes: Iterable[FileVersions], same_files: int, outline: Outline | None = None,
          branch: str | None = None, commit: str | None = None, instead_of: str | None = None) -> Drift:
    """Both layers for a set of changed files (parsed here; no I/O)."""
    if outline is None:
        from codevouch.syntax.outline import outline as default_outline
        outline = default_outline
    files = [_file_drift(c, outline) for c in sorted(changes, key=lambda c: c.path)]
    return Drift(tuple(_cross_file_moves(files)), same_files, branch, commit, instead_of)


def with_drift(rows: list[dict[str, Any]], changes_of: ChangesOf, file_limit: int,
               embed_limit: Callable[[], int], each: Each | None = None) -> list[dict[str, Any]]:
    """Add `drift` to each status row of a checked-out branch: the working tree against the
    indexed commit ({"summary", "changed_definitions", "changed_files"}), else None; and
    `overlay`, how far a search's working-tree overlay reaches there ({"changed_files",
    "searched_live", "file_limit", "embed_limit"}), else None. `embed_limit` is asked only for
    a row that has a drift. `each` runs the rows' tasks (reading each working tree and
    parsing its changes), returning their results in order (None: one after another; a caller
    may run them on threads)."""
    def drift_of(row: dict[str, Any]) -> Drift | None:
        try:
            changes = changes_of(Path(row["repo"]), row["branch"], row["commit"])
            return None if changes is None else drift(*changes)
        except CodevouchError:
            return None   # a repository gone or in an odd state: status still lists the branch

    tasks = [partial(drift_of, row) for row in rows]
    reports = each(tasks) if each is not None else [task() for task in tasks]
    for row, report in zip(rows, reports):
        row["drift"] = None
        row["overlay"] = None
        if report is None:
            continue
        row["drift"] = {"summary": report.summary(), "changed_definitions": report.changed_definitions(),
                        "changed_files": len(report.files)}
        row["overlay"] = {"changed_files": len(report.files), "searched_live": min(len(report.files), file_limit),
                          "file_limit": file_limit, "embed_limit": embed_limit()}
    return rows
