"""The review plan (pure): which files are shown, how they are cut into parts, and coverage.

Files come first: a file's whole diff goes into the current part when it fits, else into a
fresh part. A file too big for any part is split at hunk boundaries; a single hunk too big
for an empty part is truncated (lines kept out of total are recorded and said in the part).
Files whose content a reviewer cannot read as a diff are listed with a reason, never
dropped: binary files, excluded ones (the repository's rules), deletions, renames without
content changes, mode-only changes, submodules, empty and unreadable files.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from codevouch.context.windows import TokenCounter
from codevouch.printable import one_line
from codevouch.review.patch import FilePatch
from codevouch.validator.render import fence
from codevouch.worktree.rules import Rules, classify

MIN_PART_TOKENS = 200        # below this not even a file header and a hunk header fit


@dataclass(frozen=True)
class Section:
    """One file's hunks (all of them, or a run of them) inside one part."""
    file: int                          # index into Plan.files
    hunks: tuple[int, ...]
    text: str
    tokens: int
    truncated: tuple[int, int] | None = None   # (lines kept, lines in the hunk) for a cut hunk


@dataclass(frozen=True)
class Plan:
    files: tuple[FilePatch, ...]       # every changed file of the scope, in path order
    left_out: Mapping[int, str]        # file index -> why it is not shown
    parts: tuple[tuple[Section, ...], ...]

    def coverage(self) -> dict[str, Any]:
        """Every changed file and hunk exactly once: included, truncated or left out."""
        placed: dict[tuple[int, int], tuple[int, Section]] = {}
        for p, sections in enumerate(self.parts, start=1):
            for s in sections:
                for h in s.hunks:
                    placed[(s.file, h)] = (p, s)
        files: list[dict[str, Any]] = []
        for i, fp in enumerate(self.files):
            reason = self.left_out.get(i)
            hunks: list[dict[str, Any]] = []
            for h, hunk in enumerate(fp.hunks):
                total = len(hunk.lines)
                if reason is not None:
                    hunks.append({"hunk": h, "header": hunk.header, "coverage": "left_out", "part": None,
                                  "lines_kept": 0, "lines_total": total})
                    continue
                part, s = placed[(i, h)]
                kept = s.truncated[0] if s.truncated else total
                hunks.append({"hunk": h, "header": hunk.header, "part": part,
                              "coverage": "truncated" if s.truncated else "included",
                              "lines_kept": kept, "lines_total": total})
            state = ("left_out" if reason is not None
                     else "truncated" if any(h["coverage"] == "truncated" for h in hunks) else "included")
            files.append({"path": fp.path, "old_path": fp.old_path, "status": fp.status, "untracked": fp.untracked,
                          "coverage": state, "reason": reason,
                          "parts": sorted({h["part"] for h in hunks if h["part"] is not None}),
                          "hunks": hunks})
        totals: dict[str, int] = {"files": len(files), "hunks": sum(len(f["hunks"]) for f in files)}
        for state in ("included", "truncated", "left_out"):
            totals[f"files_{state}"] = sum(f["coverage"] == state for f in files)
            totals[f"hunks_{state}"] = sum(h["coverage"] == state for f in files for h in f["hunks"])
        # Complete means the reviewer saw everything: no file left out, no hunk cut short (it was
        # true whenever every file was accounted for, which is always, so a left-out file said true).
        complete = totals["files_included"] == totals["files"] and totals["hunks_included"] == totals["hunks"]
        return {"complete": complete, "totals": totals, "files": files}


def left_out_reason(fp: FilePatch, rules: Rules, head: str, note: str | None = None) -> str | None:
    """Why a changed file's diff is not shown to the reviewer, or None to show it."""
    if fp.submodule:
        return "submodule"
    if fp.binary or note == "binary":
        return "binary"
    found = classify(fp.path, head, rules)
    if found.excluded:
        return f"excluded: {found.kind} (rule {found.rule})"
    if fp.status == "deleted":
        return "deleted"
    if note:
        return note
    if not fp.hunks:
        if fp.status in ("renamed", "copied"):
            return f"{fp.status} without content changes"
        if fp.mode_changed:
            return f"mode change only ({fp.old_mode} -> {fp.new_mode})"
        return "empty file" if fp.status == "added" else "no content changes"
    return None


def title(fp: FilePatch) -> str:
    if fp.status in ("renamed", "copied"):
        what = f"{fp.status} from `{one_line(fp.old_path or '')}`"
    else:
        what = fp.status
    if fp.mode_changed:
        what += f", mode {fp.old_mode} -> {fp.new_mode}"
    return f"`{one_line(fp.path)}` ({what})"


class _Packer:
    def __init__(self, files: Sequence[FilePatch], count: TokenCounter, cap: int, first_used: int) -> None:
        self.files, self.count, self.cap = files, count, cap
        self.parts: list[list[Section]] = [[]]
        self.used = [first_used]

    def room(self) -> int:
        return self.cap - self.used[-1]

    def new_part(self) -> None:
        if self.parts[-1]:
            self.parts.append([])
            self.used.append(0)

    def put(self, section: Section) -> None:
        self.parts[-1].append(section)
        self.used[-1] += section.tokens + 1

    def section(self, fi: int, hunks: Sequence[int], keep: int | None = None) -> Section:
        fp = self.files[fi]
        label = title(fp)
        if len(hunks) < len(fp.hunks):
            first, last = hunks[0] + 1, hunks[-1] + 1
            label += f", hunk{'s' if last > first else ''} {first}{f'-{last}' if last > first else ''} of {len(fp.hunks)}"
        body = "\n".join(fp.hunks[h].text(keep) for h in hunks)
        mark = fence(body)
        text = f"### {label}\n{mark}diff\n{body}\n{mark}"
        truncated = None
        if keep is not None:
            total = len(fp.hunks[hunks[0]].lines)
            truncated = (keep, total)
            text += (f"\n> codevouch: this hunk is truncated: {keep} of {total} lines shown; "
                     "the rest was not reviewed.")
        return Section(fi, tuple(hunks), text, self.count(text), truncated)

    def truncated(self, fi: int, h: int) -> Section:
        lo, hi = 0, len(self.files[fi].hunks[h].lines)
        while lo < hi:                  # the most lines that fit an empty part
            mid = (lo + hi + 1) // 2
            if self.section(fi, [h], mid).tokens <= self.cap:
                lo = mid
            else:
                hi = mid - 1
        return self.section(fi, [h], lo)

    def add_file(self, fi: int) -> None:
        fp = self.files[fi]
        whole = self.section(fi, range(len(fp.hunks)))
        if whole.tokens > self.room() and whole.tokens <= self.cap:
            self.new_part()
        if whole.tokens <= self.room():
            self.put(whole)
            return
        group: list[int] = []
        for h in range(len(fp.hunks)):
            if self.section(fi, [*group, h]).tokens <= self.room():
                group.append(h)
                continue
            if group:
                self.put(self.section(fi, group))
                group = []
            single = self.section(fi, [h])
            if single.tokens > self.room():
                self.new_part()
            if single.tokens <= self.room():
                group = [h]
                continue
            self.put(self.truncated(fi, h))
            self.new_part()
        if group:
            self.put(self.section(fi, group))


def plan(files: Sequence[FilePatch], left_out: Mapping[int, str], count: TokenCounter, cap: int,
         first_part_reserve: int = 0) -> Plan:
    """Pack the shown files into parts of at most `cap` tokens of diff sections each
    (`first_part_reserve` tokens of the first part are kept for the list of files not shown)."""
    packer = _Packer(files, count, cap, first_part_reserve)
    for fi in range(len(files)):
        if fi not in left_out:
            packer.add_file(fi)
    parts = tuple(tuple(p) for p in packer.parts if p)
    return Plan(tuple(files), dict(left_out), parts)
