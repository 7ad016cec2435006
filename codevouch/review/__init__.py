"""`codevouch review`: a change cut into parts for an AI reviewer, with nothing unseen unreported.

    scope (scope.py) -> patches (patch.py) -> plan: left out, parts, coverage (plan.py)
      -> related code for changed definitions (drift + related.py) -> markdown parts + manifest
      -> optional reviewer runs, one per part (execute.py)

Every part's markdown (its diff sections, related code and, in part 1, the list of files not
shown) fits the part budget, counted with the budget's tokenizer. The manifest's coverage
lists every changed file and hunk exactly once: included, truncated or left out (with why).
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from codevouch.errors import EmptyScope, InputError
from codevouch.printable import plural, visible
from codevouch.review.execute import ExecResult
from codevouch.review.plan import MIN_PART_TOKENS, Plan, left_out_reason, plan
from codevouch.review.related import Finder, Related, Wanted
from codevouch.review.scope import INDEX, WORKTREE, Scope, read_patches, resolve_scope
from codevouch.validator.render import fence

if TYPE_CHECKING:
    # typing_extensions for the type checker only (typing.Unpack is 3.11+): no runtime dependency.
    from typing_extensions import Unpack

    from codevouch.api import Index
    from codevouch.context.windows import Budget
    from codevouch.review.patch import FilePatch
    from codevouch.review.scope import ScopeFlags

__all__ = ["Part", "Review", "build_review", "review", "run_reviewer"]

_DEFAULT_RELATED_SHARE = 0.25
_NOT_SHOWN_SHARE = 0.25        # of part 1, at most, for the list of files not shown
_MIN_RELATED_TOKENS = 60       # a part with less room left looks up no more related code
_RELATED_TITLE = "## Related code (from the index, checked against the working tree)"
_HEADER = ("# Code review: part {i} of {n}\n\nScope: {scope}\n"
           "This part: {files}, {hunks} of the diff{rest}.\n")


@dataclass(frozen=True)
class Part:
    index: int
    markdown: str
    tokens: int
    files: tuple[dict[str, Any], ...]     # path, hunks, truncated (lines kept / total)
    related: tuple[Related, ...]

    def to_json(self, with_markdown: bool = True) -> dict[str, Any]:
        out: dict[str, Any] = {"part": self.index, "tokens": self.tokens, "files": list(self.files),
                               "related": [r.to_json() for r in self.related]}
        if with_markdown:
            out["markdown"] = self.markdown
        return out


@dataclass(frozen=True)
class Review:
    scope: Scope
    budget: Budget
    plan: Plan
    parts: tuple[Part, ...]
    related: dict[str, Any]               # status, reason, definitions, omitted for budget
    results: tuple[ExecResult, ...] = ()
    command: tuple[str, ...] = ()

    def failed(self) -> list[int]:
        return [r.part for r in self.results if not r.ok]

    def manifest(self, with_markdown: bool = True, files: Sequence[str] = ()) -> dict[str, Any]:
        parts = []
        for k, p in enumerate(self.parts):
            entry = p.to_json(with_markdown)
            if files:
                entry["file"] = files[k]
            result = next((r for r in self.results if r.part == p.index), None)
            if result is not None:
                entry["exec"] = result.to_json()
            parts.append(entry)
        out: dict[str, Any] = {"scope": self.scope.to_json(), "budget": self.budget.to_json(),
                               "parts": parts, "coverage": self.plan.coverage(), "related": self.related}
        if self.command:
            out["exec"] = {"command": list(self.command), "parts_run": len(self.results),
                           "failed_parts": self.failed(), "ok": not self.failed()}
        return out


def review(index: Index, revision: str | None = None, *, budget: int | None = None, model: str | None = None,
           related: bool = True, command: str | None = None, timeout: float = 600,
           **scope: Unpack[ScopeFlags]) -> Review:
    """A change cut into parts for a reviewer (markdown per part, a manifest whose coverage
    lists every changed file and hunk once), with related code from `index` when the
    branch is indexed. Scope: `revision` "A..B" / "A...B", `base` (merge-base with the
    working tree), or local changes (staged/unstaged/untracked/all_local; default all of
    them): ScopeFlags.
    command: run it once per part with the part on stdin (no shell); see Review.results.
    Raises EmptyScope, UnknownRevision, InputError."""
    from codevouch.review.execute import split_command
    from codevouch.worktree import gitio

    if command is not None:
        split_command(command)   # a bad command fails before any work
    built = build_review(index, revision, budget=budget, model=model, related=related, **scope)
    if command is not None:
        built = run_reviewer(built, command, timeout, gitio.repo_root(index.repo), index.call.env.raw)
    return built


def build_review(index: Index, revision: str | None = None, *, budget: int | None = None, model: str | None = None,
                 related: bool = True, related_share: float = _DEFAULT_RELATED_SHARE,
                 **asked: Unpack[ScopeFlags]) -> Review:
    """review without running a reviewer: the scope (`revision`, ScopeFlags) cut into parts."""
    from codevouch.context.windows import budget_counter, resolve_budget
    from codevouch.worktree import gitio
    from codevouch.worktree.files import load_worktree_rules

    root = gitio.repo_root(index.repo)
    scope = resolve_scope(root, revision, **asked)
    resolved = resolve_budget(budget, model, root, env=index.call.env)
    if resolved.tokens < MIN_PART_TOKENS:
        raise InputError(f"a part budget of {resolved.tokens} tokens is too small for a review; "
                         f"give --budget {MIN_PART_TOKENS} or more.")
    if not 0 <= related_share < 1:
        raise InputError("the related-code share must be at least 0 and below 1.")
    count = budget_counter(resolved)
    rules = load_worktree_rules(root)
    patches, notes = read_patches(root, scope, rules.max_file_bytes)
    if not patches:
        raise EmptyScope(f"nothing to review: no changes in the scope ({scope.description}).")
    old_texts, new_texts = _texts(root, scope, patches, notes)
    left_out = {}
    for i, fp in enumerate(patches):
        head = new_texts.get(fp.path) or old_texts.get(fp.old_path or "") or ""
        reason = left_out_reason(fp, rules, head, notes.get(fp.path))
        if reason is not None:
            left_out[i] = reason
    not_shown = _not_shown(patches, left_out, count, int(resolved.tokens * _NOT_SHOWN_SHARE))
    header_reserve = count(_HEADER.format(i=999, n=999, scope=scope.description, files="999 files",
                                          hunks="9999 hunks", rest=", related code for 999 definitions")) + 8
    room = resolved.tokens - header_reserve
    share = related_share if related else 0.0
    cap = int(room * (1 - share))
    if cap < MIN_PART_TOKENS // 2:
        raise InputError(f"a part budget of {resolved.tokens} tokens leaves no room for the diff; "
                         "give a larger --budget.")
    the_plan = plan(patches, left_out, count, cap, count(not_shown) + 2 if not_shown else 0)
    wanted_by_part, definitions = _changed_definitions(the_plan, scope, old_texts, new_texts)
    finder = Finder(index, *_related_branch(index, root, asked.get("base"))) if related else None
    parts, stats = _render_parts(the_plan, scope, resolved.tokens, count, not_shown, wanted_by_part, finder)
    status: dict[str, Any] = {"status": "off", "reason": "--no-related"}
    if finder is not None:
        status = {"status": "partial" if finder.unavailable else "ok",
                  "reason": f"callers and callees left out: {finder.unavailable}" if finder.unavailable
                  else finder.instead_note(), "index_branch": finder.branch}
    status.update(definitions=definitions, **stats)
    return Review(scope, resolved, the_plan, tuple(parts), status)


def _related_branch(index: Index, root: Path, base: str | None) -> tuple[str | None, str | None]:
    """(the branch whose index related code comes from, the checked-out branch when that is
    another one): `Index.stand_in_branch`, the rule drift follows too. Its hits are validated
    against the working tree like any other, so what it lacks or has changed is re-read or
    left out, never shown as current."""
    current = _branch(root)
    if current is None:
        return None, None
    return index.stand_in_branch(current, base)


def _branch(root: Path) -> str | None:
    """The checked-out branch, whose index related code comes from (None: detached HEAD)."""
    from codevouch.errors import CodevouchError
    from codevouch.worktree import gitio

    try:
        return gitio.current_branch(root)
    except CodevouchError:
        return None


def run_reviewer(review: Review, command: str, timeout: float, cwd: Path,
                 environ: Mapping[str, str] | None = None) -> Review:
    """Run the reviewer once per part; the Review with each part's result. `environ`: the
    reviewer's environment, the caller's (None: this process's, as `Call.of_process()` reads it)."""
    from codevouch.call import Call
    from codevouch.review.execute import run_part, split_command

    argv = split_command(command)
    if timeout <= 0:
        raise InputError("--timeout must be a positive number of seconds.")
    env = environ if environ is not None else Call.of_process().env.raw
    results = tuple(run_part(argv, p.index, len(review.parts), p.markdown, timeout, cwd, env) for p in review.parts)
    return replace(review, results=results, command=tuple(argv))


# -- reading both sides ---------------------------------------------------------------------

def _texts(root: Path, scope: Scope, patches: Sequence[FilePatch], notes: dict[str, str]
           ) -> tuple[dict[str, str], dict[str, str]]:
    """Old-side text by old path and new-side text by new path, for files that have them."""
    from codevouch.worktree import gitio
    from codevouch.worktree.changes import read_worktree, text_of

    def side(rev: str, paths: list[str]) -> dict[str, str]:
        if rev == WORKTREE:
            out = {}
            for p in paths:
                text, note = read_worktree(root, p)
                if text is not None:
                    out[p] = text
                elif note:
                    notes.setdefault(p, note)
            return out
        prefix = ":" if rev == INDEX else f"{rev}:"
        blobs = gitio.read_blobs(root, [f"{prefix}{p}" for p in paths if "\n" not in p])
        texts = {p: text_of(blobs[f"{prefix}{p}"]) for p in paths if f"{prefix}{p}" in blobs}
        return {p: t for p, (t, _) in texts.items() if t is not None}

    old = [fp.old_path for fp in patches if fp.old_path and not fp.binary and fp.status != "deleted"
           and fp.path not in notes]
    tracked = [fp.new_path for fp in patches if fp.new_path and not fp.binary and not fp.untracked]
    # An untracked file with a note was not read (past UNTRACKED_LIMIT, huge, a symlink): not again.
    untracked = [fp.path for fp in patches if fp.untracked and not fp.binary and fp.path not in notes]
    tracked = [p for p in tracked if p not in notes]         # too large to diff: not read either
    new_texts = side(scope.new, tracked) if tracked else {}
    new_texts.update(side(WORKTREE, untracked))
    return side(scope.old, old), new_texts


# -- changed definitions --------------------------------------------------------------------

def _changed_definitions(the_plan: Plan, scope: Scope, old_texts: dict[str, str], new_texts: dict[str, str]
                         ) -> tuple[list[list[Wanted]], int]:
    """Per part, the changed definitions its hunks touch (from drift), and how many in all."""
    from codevouch.drift import drift
    from codevouch.worktree.changes import FileVersions

    shown = {fp.path: fp for i, fp in enumerate(the_plan.files) if i not in the_plan.left_out}
    versions = [FileVersions({"deleted": "removed", "copied": "added"}.get(fp.status, fp.status),
                             fp.old_path if fp.status not in ("added", "copied") else None, fp.new_path,
                             old_texts.get(fp.old_path or "") if fp.status not in ("added", "copied") else None,
                             new_texts.get(fp.new_path or ""))
                for fp in shown.values()]
    report = drift(versions, 0)
    per_part: list[list[Wanted]] = []
    old_commit = scope.old if scope.old not in (INDEX, WORKTREE) else None
    changed = {f.path: f.changed() for f in report.files}
    total = report.changed_definitions()
    for sections in the_plan.parts:
        wanted: dict[str, Wanted] = {}
        for s in sections:
            fp = the_plan.files[s.file]
            for d in changed.get(fp.path, []):
                if d.state == "moved" and not d.content_changed and (d.new is None or d.new.path == fp.path):
                    continue   # only reordered: nothing to look up
                if any(_touches(fp.hunks[h], d) for h in s.hunks):
                    wanted.setdefault(d.name, Wanted(d, _lines(new_texts, d.new), _lines(old_texts, d.old),
                                                     old_commit))
        per_part.append(list(wanted.values()))
    return per_part, total


def _touches(hunk: Any, d: Any) -> bool:
    if d.new is not None:
        return hunk.new_start <= d.new.end and d.new.start <= hunk.new_end
    return hunk.old_start <= d.old.end and d.old.start <= hunk.old_end


def _lines(texts: dict[str, str], place: Any) -> str | None:
    if place is None or place.path not in texts:
        return None
    return "\n".join(texts[place.path].split("\n")[place.start - 1:place.end])


# -- markdown ---------------------------------------------------------------------------------

def _not_shown(patches: Sequence[FilePatch], left_out: dict[int, str], count: Any, limit: int) -> str:
    if not left_out:
        return ""
    lines = ["## Not shown (changed, but not in any part)"]
    items = [f"- `{patches[i].path}`" + (f" (from `{patches[i].old_path}`)" if patches[i].status == "renamed" else "")
             + f": {reason}" for i, reason in sorted(left_out.items())]
    for k, item in enumerate(items):
        rest = len(items) - k
        candidate = "\n".join([*lines, item, f"- ... and {rest - 1} more (see the manifest)"])
        if count(candidate) > limit:
            lines.append(f"- ... and {rest} more (see the manifest)")
            break
        lines.append(item)
    return "\n".join(lines)


def _render_parts(the_plan: Plan, scope: Scope, budget: int, count: Any, not_shown: str,
                  wanted_by_part: list[list[Wanted]], finder: Finder | None
                  ) -> tuple[list[Part], dict[str, int]]:
    """Each part's markdown: its diff sections, then related code while the budget lasts
    (looked up lazily, so a part with no room left costs no searches)."""
    parts: list[Part] = []
    stats = {"snippets": 0, "omitted_for_budget": 0, "definitions_without_room": 0}
    n = len(the_plan.parts)
    for k, sections in enumerate(the_plan.parts):
        hunks = sum(len(s.hunks) for s in sections)
        files = len({s.file for s in sections})
        body = "\n\n".join(["## Changes", *(s.text for s in sections)])
        tail = f"\n\n{not_shown}" if k == 0 and not_shown else ""
        wanted = wanted_by_part[k] if finder is not None else []

        header = _Header(k + 1, n, scope, files, hunks, len(wanted))

        # render is called only within this iteration, so the loop's variables are the ones meant.
        def render(related: str) -> str:
            # The diff and the code come from the repository: control characters as escapes.
            return visible(_assemble(header, body, related, tail))  # noqa: B023

        # Sums of piece counts (plus a token per join) bound the whole from above in practice;
        # the exact count of the finished part is checked below, and trimmed if ever over.
        title = _related_title(finder)
        used = count(render(title)) + 2
        blocks: list[tuple[Related, str]] = []
        for w in wanted:
            if budget - used < _MIN_RELATED_TOKENS:
                stats["definitions_without_room"] += 1
                continue
            for r in finder.related(w):  # type: ignore[union-attr]  # wanted is empty without a finder
                block = f"#### {r.kind} of `{r.target}`\n{r.markdown(fence(r.code))}"
                cost = count(block) + 2
                if used + cost <= budget:
                    blocks.append((r, block))
                    used += cost
                else:
                    stats["omitted_for_budget"] += 1
        markdown = render(_related_md(title, blocks))
        while blocks and count(markdown) > budget:
            blocks.pop()
            stats["omitted_for_budget"] += 1
            markdown = render(_related_md(title, blocks))
        picked = [r for r, _ in blocks]
        stats["snippets"] += len(picked)
        part_files = [{"path": the_plan.files[s.file].path, "hunks": list(s.hunks),
                       "truncated": ({"lines_kept": s.truncated[0], "lines_total": s.truncated[1]}
                                     if s.truncated else None)} for s in sections]
        parts.append(Part(k + 1, markdown, count(markdown), tuple(part_files), tuple(picked)))
    return parts, stats


def _related_title(finder: Finder | None) -> str:
    if finder is not None and finder.instead_of is not None:
        return (f"## Related code (from the index of {finder.branch}: {finder.instead_of} is not indexed; "
                "checked against the working tree)")
    return _RELATED_TITLE


def _related_md(title: str, blocks: Sequence[tuple[Related, str]]) -> str:
    return "\n\n".join([title, *(b for _, b in blocks)]) if blocks else ""


@dataclass(frozen=True)
class _Header:
    """What a part's header says (_HEADER): which part of how many, the scope, and what the part
    holds. Fixed for the part while its related code is fitted, so made once per part."""
    part: int
    parts: int
    scope: Scope
    files: int
    hunks: int
    definitions: int       # changed definitions the part looks up related code for

    def text(self, with_related: bool) -> str:
        rest = f", related code for {plural(self.definitions, 'definition')}" if with_related else ""
        return _HEADER.format(i=self.part, n=self.parts, scope=self.scope.description, files=plural(self.files, "file"),
                              hunks=plural(self.hunks, "hunk"), rest=rest)


def _assemble(header: _Header, body: str, related: str, tail: str) -> str:
    return "\n".join([header.text(bool(related)), body, *([f"\n{related}"] if related else [])]) + tail + "\n"
