"""`codevouch drift`: files and definitions changed between the index and the working tree."""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from codevouch.commands.common import BranchOpt, IndexOpt, JsonOpt, RepoOpt, fail, open_index, print_json
from codevouch.commands.invocation import echo
from codevouch.errors import CodevouchError
from codevouch.printable import one_line, visible

if TYPE_CHECKING:
    from codevouch.drift import DefinitionDrift, Drift, FileDrift


def drift_cmd(repo: RepoOpt = Path("."), branch: BranchOpt = None, index: IndexOpt = None,
              as_json: JsonOpt = False) -> None:
    """Files and definitions that changed since the branch's indexed commit, and where the
    working tree first diverges from it."""
    try:
        report = open_index(repo, index).drift(branch)
    except CodevouchError as exc:
        raise fail(exc) from exc
    if as_json:
        print_json(report.to_json())
    else:
        echo(render(report), nl=False)


def render(report: Drift) -> str:
    short = (report.commit or "?")[:7]
    lines = [f"{report.branch}@{short} (indexed) -> working tree: {report.summary()}"]
    if report.instead_of is not None:
        lines.append(f"{one_line(report.instead_of)} is not indexed: compared with the index of "
                     f"{one_line(report.branch or '?')}, its base (build it with `codevouch index build`)")
    first = report.first_divergence()
    if first is not None:
        what = first.name if first.name else "outside any definition"
        lines.append(f"first divergence: {one_line(first.path)}:{first.line} {one_line(what)} ({first.state})")
    lines.append("files: " + ", ".join(f"{n} {s}" for s, n in report.file_counts().items()))
    lines.append("definitions: " + ", ".join(f"{n} {s}" for s, n in report.definition_counts().items()))
    for f in report.files:
        lines.extend(_file_lines(f))
    return visible("\n".join(lines) + "\n")


def _file_lines(f: FileDrift) -> list[str]:
    if f.status == "removed" and f.definitions is not None:
        return [_deleted_line(f)]
    # Paths and names on one line each: a file named "x\ncheck: usable.py" forges no line.
    path = one_line(f.path)
    head = f"{f.status} {one_line(f.old_path or '')} -> {path}" if f.status == "renamed" else f"{f.status} {path}"
    if f.note:
        head += f" ({f.note})"
    elif f.status == "renamed" and f.first_changed_line is None:
        head += " (content identical: the same code at a new path)"   # as validate and check-refs say
    elif f.module_changed:
        head += " (module-level code changed)"
    return [head] + [_def_line(f.path, d) for d in f.changed()]


def _deleted_line(f: FileDrift) -> str:
    """A deleted file is one line: every definition in it went with it (--json lists them).
    Those that reappear in another file are counted here and listed under that file."""
    defs = f.definitions or ()
    n = len(defs)
    moved = sorted({d.new.path for d in defs if d.state == "moved" and d.new is not None and d.new.path != f.path})
    away = sum(1 for d in defs if d.state == "moved" and d.new is not None and d.new.path != f.path)
    text = f"removed {one_line(f.path)} (file deleted: {n} definition{'s' * (n != 1)}"
    if away:
        text += f", {away} of them moved to {', '.join(one_line(m) for m in moved)}"
    return text + ")"


def _def_line(path: str, d: DefinitionDrift) -> str:
    where = d.new if d.new is not None and (d.new.path == path or d.old is None) else d.old
    text = f"  {d.state:<18} {one_line(d.name)}  L{where.start}-{where.end}"  # type: ignore[union-attr]  # old or new is set
    if d.state == "moved" and d.old and d.new and d.old.path != d.new.path:
        text += f" (from {one_line(d.old.path)}:{d.old.start})" if d.new.path == path else \
            f" (to {one_line(d.new.path)}:{d.new.start})"
    elif d.state == "moved" and d.old:
        text += f" (was L{d.old.start}{', content changed' if d.content_changed else ''})"
    if d.state == "removed":
        text += " (indexed lines)"
    if d.old_signature is not None:
        text += f"\n      was: {one_line(d.old_signature)}\n      now: {one_line(d.signature or '')}"
    return text
