"""Check an answer's code references against the working tree (the truth, uncommitted edits included).

    report = check_refs(repo, text)
    for r in report.results: print(r.status, r.reason, r.detail, r.suggestion)

Every path goes through the validator's path check first (`validator.paths.locate`): a path
that leaves the repository (`..`, absolute elsewhere, a symlink out, `.git/`) is refused and
nothing is read. Symbols are found with one `git grep` for all names (which files mention
them), then tree-sitter definitions of those files only; history (HEAD, then git's pickaxe
for at most MAX_HISTORY names) says whether a missing name was this repository's code.
"""
from __future__ import annotations

import difflib
import os
import posixpath
import re
import unicodedata
from collections.abc import Callable, Iterable
from dataclasses import replace
from functools import cached_property
from pathlib import Path

from codevouch import environment
from codevouch.errors import InputError
from codevouch.printable import plural
from codevouch.refs.extract import JS_EXTENSIONS, Extracted, Reference, extract
from codevouch.refs.imports import check_file_import
from codevouch.refs.model import RefReport, RefResult
from codevouch.refs.namespaces import Namespaces, check_namespace_import, family_of
from codevouch.refs.worktree import Definitions, WorkTree, module_of
from codevouch.syntax import registry
from codevouch.syntax.lines import split_lines
from codevouch.syntax.packages import has_package_clause, qualifies
from codevouch.validator import symbols
from codevouch.validator.text import line_count
from codevouch.worktree import gitio
from codevouch.worktree.changes import untracked_copies
from codevouch.worktree.paths import locate

MAX_HISTORY = 10        # names looked up in history (one pickaxe + one grep each, ~10-50 ms)
MAX_HOME_FILES = 200    # files parsed to say where a member is really defined (~450 files/s)


# References checked per call (60,000 in a 2 MB answer took 76 s): CODEVOUCH_MAX_REFERENCES.
MAX_REFERENCES: int = environment.MAX_REFERENCES.default


def check_refs(repo: Path | str, text: str, cap: Callable[[], int] = lambda: MAX_REFERENCES,
               cwd: Path | None = None) -> RefReport:
    """Extract the references of an answer (markdown or a patch) and check each one. `cap()`: the
    most references checked (the caller's CODEVOUCH_MAX_REFERENCES), asked once they are counted.
    `cwd`: the caller's working directory, which a relative path in the answer may be written
    from (`../routing.py` from a subdirectory: _from_cwd); None reads every path from the root."""
    tree = WorkTree(gitio.repo_root(repo))
    # NFC, so a path spelled with combining marks (NFD) is read whole; _path finds the file
    # under whichever form git stores.
    extracted = extract(unicodedata.normalize("NFC", text))
    if cwd is not None:
        extracted = replace(extracted, refs=tuple(_from_cwd(tree.root, cwd, ref) for ref in extracted.refs))
    most = cap()
    if len(extracted.refs) > most:
        raise InputError(f"the text cites {len(extracted.refs)} references, over the cap of {most} "
                         "(CODEVOUCH_MAX_REFERENCES); check it in parts, or raise the cap.")
    tree.ignored = _ignored(tree.root, extracted.refs)
    checker = _Checker(tree, extracted)
    results = tuple(checker.check(ref) for ref in extracted.refs)
    return RefReport(results, checker.skipped())


# How a patch names its files: from the repository's root, wherever the command runs.
_ROOTED_SOURCES = frozenset({"patch-header", "hunk"})


def _from_cwd(root: Path, cwd: Path, ref: Reference) -> Reference:
    """`ref` with its path read from `cwd` as a shell would, where that is what the answer meant:
    a path with '..' (`../routing.py` from `app/`) always, when it stays inside the repository;
    a plain one (`routing.py`, `./routing.py`) only when the root has no such file and `cwd` has.
    The path becomes the repository-relative one it names; the reference's text stays as written.
    A path that leaves the repository, an absolute one and a patch's are left as they are."""
    given = ref.path
    if ref.kind != "path" or given is None or given.startswith("/") or ref.source in _ROOTED_SOURCES or "\0" in given:
        return ref
    named = os.path.normpath(os.path.join(os.path.realpath(cwd), given))
    root_real = os.path.realpath(root)
    if not named.startswith(root_real.rstrip("/") + "/"):
        return ref
    rel = named[len(root_real.rstrip("/")) + 1:].replace(os.sep, "/")
    if rel == given:
        return ref
    if ".." in given.split("/"):
        return replace(ref, path=rel)
    at_root, from_cwd = locate(root, given), locate(root, rel)
    if at_root.exists or at_root.what is not None or not (from_cwd.inside and from_cwd.exists):
        return ref
    return replace(ref, path=rel)


def _ignored(root: Path, refs: Iterable[Reference]) -> dict[str, str]:
    """Repo-relative path -> the git ignore rule that matches it, for every file the references
    name (under its own path or where its symlinks lead): one `git check-ignore` for all, asked
    before any file is read. Such a file is never read (path-ignored)."""
    located = [locate(root, path) for ref in refs for path in (ref.path, ref.wide) if path is not None]
    asked = {loc.rel: loc for loc in located if loc.inside and loc.exists and loc.rel}
    answer = gitio.ignored(root, sorted({p for loc in asked.values() for p in (loc.rel, loc.real) if p}))
    return {rel: why for rel, loc in asked.items()
            if (why := answer.why(rel) or answer.why(loc.real or "")) is not None}


def _cite(path: str, span: tuple[int, int] | None = None) -> str:
    return f"{path}#L{span[0]}-L{span[1]}" if span else path


class _Checker:
    def __init__(self, tree: WorkTree, extracted: Extracted) -> None:
        self.tree = tree
        self.added = extracted.added_paths
        names = {_last(r.symbol) for r in extracted.refs if r.kind == "symbol" and r.symbol}
        names |= {p for r in extracted.refs if r.kind == "symbol" and r.symbol for p in r.symbol.split(".")}
        self._names = sorted(n for n in names if n)
        self._history_budget = MAX_HISTORY
        self._spaces: dict[str, Namespaces] = {}     # a family's namespaces, read once

    @cached_property
    def mentions(self) -> dict[str, set[str]]:
        """name -> working-tree files that contain it as a word (one git grep for all names)."""
        # Files over the size cap are left out: git grep holds all of a file in memory.
        return gitio.grep_words(self.tree.root, self._names, leave_out=self.tree.huge) if self._names else {}

    @cached_property
    def head_mentions(self) -> dict[str, set[str]]:
        head = self.tree.head
        return gitio.grep_words(self.tree.root, self._names, head) if self._names and head else {}

    def skipped(self) -> tuple[tuple[str, str], ...]:
        """(path, why) for each working-tree file the name search left out, when it ran."""
        if "mentions" not in self.__dict__:      # cached_property: set once the grep ran
            return ()
        cap = self.tree.max_file_bytes
        return tuple((p, f"too large: over the {cap}-byte cap (max_file_bytes), not searched")
                     for p in sorted(self.tree.huge_text))

    def check(self, ref: Reference) -> RefResult:
        if ref.kind == "path":
            return self._path(self._widened(ref))
        lang = registry.by_name().get(ref.language or "")
        # A namespace's parts are names, never a path: PHP's `require_once __DIR__ . '/x.php'` is a file.
        if ref.kind == "import" and lang is not None and lang.imports is not None and lang.imports.declares \
                and "/" not in (ref.module or ""):
            family = family_of(lang)
            spaces = self._spaces.setdefault(lang.imports.family or lang.name,
                                             Namespaces(family, self.tree.files, self.tree.text, self.tree.defs))
            return check_namespace_import(ref, spaces)
        if ref.kind == "import" and ref.language is not None:
            return check_file_import(ref, self.tree.file_set, self.added, self._similar_path)
        if ref.kind == "import":
            return self._import(ref)
        return self._symbol(ref)

    # -- paths --------------------------------------------------------------------------
    def _widened(self, ref: Reference) -> Reference:
        """The reference read with its wider name (`space file.py` for `file.py`) when a file
        by that name is there, in the working tree or added by the patch."""
        if ref.wide is None:
            return ref
        loc = locate(self.tree.root, ref.wide)
        there = loc.inside and loc.rel is not None and (loc.exists or loc.what is not None or loc.rel in self.added)
        return replace(ref, path=ref.wide, wide=None) if there else replace(ref, wide=None)

    def _path(self, ref: Reference) -> RefResult:
        assert ref.path is not None
        loc = locate(self.tree.root, ref.path)
        if not loc.inside or loc.rel is None:
            return RefResult(ref, "outside-repo", f"{ref.path}: {loc.problem}; not checked.")
        rel = loc.rel
        if rel in self.added:
            return RefResult(ref, "added-by-patch", f"{rel} is added by the patch itself.")
        ignored = self.tree.ignored.get(rel)
        if ignored is not None:
            return RefResult(ref, "path-ignored", f"{rel} is ignored by git ({ignored}); an ignored file is "
                                                  "never read, so it was not checked.")
        if loc.exists:
            return self._lines(ref, rel, "path-exists")
        stored = self.tree.stored_form(rel)
        if stored is not None:
            return self._lines(ref, stored, "path-exists")
        # Answers often drop a leading directory (`service.py`, `orders/service.py`).
        ending = [f for f in self.tree.files if f.endswith("/" + rel)]
        if len(ending) == 1:
            return self._lines(ref, ending[0], "path-resolved")
        if ending:
            return RefResult(ref, "path-ambiguous", f"no file {rel}, but {len(ending)} files end with it: "
                             + ", ".join(ending[:5]) + ("" if len(ending) <= 5 else ", ..."), found=ending[0])
        return self._gone(ref, rel)

    def _lines(self, ref: Reference, rel: str, reason: str) -> RefResult:
        if ref.start is None:
            return RefResult(ref, reason, f"{rel} exists.", found=rel)
        text = self.tree.text(rel)
        big = self.tree.too_large(rel) if text is None else None
        if big is not None:
            return RefResult(ref, "path-too-large", f"{rel} is {big.words()}: not read; its lines "
                             f"L{ref.start}-L{ref.end or ref.start} were not checked.", found=rel)
        if text is None:
            return RefResult(ref, "path-unreadable", f"{rel} exists but could not be read; its lines "
                             f"L{ref.start}-L{ref.end or ref.start} were not checked.", found=rel)
        count = line_count(text)
        end = ref.end or ref.start
        if ref.start > count or end > count or ref.start < 1 or end < ref.start:
            return RefResult(ref, "lines-past-end",
                             f"{rel} has {count} lines; L{ref.start}-L{end} is not inside it.",
                             found=rel, suggestion=f"the file ends at line {count}")
        return RefResult(ref, "lines-in-file" if reason == "path-exists" else reason,
                         f"{rel} has lines {ref.start}-{end}.", found=_cite(rel, (ref.start, end)))

    def _gone(self, ref: Reference, rel: str) -> RefResult:
        history = self._file_history(rel)
        if history is not None:
            when, new, old = history
            how = ""
            if new is None and old is not None:
                # Moved without git (a plain `mv`): an untracked file with its exact content is
                # the same file, as the validator and drift say (file-renamed, renamed).
                new = self._untracked_copy(old, rel)
                how = f"; {new} is untracked, with the file's exact content" if new else ""
            if new is not None:
                return RefResult(ref, "path-renamed", f"{rel} was renamed to {new} {when}{how}.",
                                 found=new, suggestion=self._now_at(ref, old, rel, new))
            return RefResult(ref, "path-deleted", f"{rel} was deleted {when}.",
                             suggestion=self._similar_path(rel))
        return RefResult(ref, "path-missing", f"no file {rel} in the working tree or its history.",
                         suggestion=self._similar_path(rel))

    def _file_history(self, rel: str) -> tuple[str, str | None, str | None] | None:
        """For a path that is gone: (when it went, its new path if git sees a rename, the last
        commit that has it); None when HEAD's history never had it."""
        root = self.tree.root
        last = gitio.last_commit_touching(root, rel) if self.tree.head else None
        if last is None:
            return None
        # `last` deleted or renamed it, or (when it still has the file) the change is uncommitted.
        old = last if self.tree.exists_at(last, rel) else gitio.parent_commit(root, last)
        new = gitio.renames_between(root, old, None).get(rel) if old else None
        return ("in the working tree (uncommitted)" if old == last else f"in commit {last[:7]}"), new, old

    def _now_at(self, ref: Reference, old: str | None, rel: str, new: str) -> str:
        """"renamed to NEW", with the cited lines' place in the new file when they survived."""
        if ref.start is None or old is None:
            return f"renamed to {new}"
        from codevouch.validator.text import find_lines, nearest

        old_text = self.tree.blob_texts(old, [rel]).get(rel)
        new_text = self.tree.text(new)
        if old_text and new_text:
            lines = split_lines(old_text)[ref.start - 1:(ref.end or ref.start)]
            hits = find_lines("\n".join(lines), new_text) if any(s.strip() for s in lines) else []
            if hits:
                return f"renamed to {new}; now at {_cite(new, nearest(hits, ref.start))}"
        return f"renamed to {new}"

    def _untracked_copy(self, commit: str, rel: str) -> str | None:
        """The untracked working-tree file whose blob id is `rel`'s at `commit`, if any."""
        found = gitio.batch_check(self.tree.root, [f"{commit}:{rel}"]).get(f"{commit}:{rel}")
        if found is None or found[1] != "blob":
            return None
        return untracked_copies(self.tree.root, {rel: found[0]}).get(rel)

    def _similar_path(self, rel: str) -> str | None:
        """Files in the working tree with the same name, else close names: never `rel` itself,
        nor a file the index still lists but the working tree has lost."""
        name = rel.rsplit("/", 1)[-1]
        present = [f for f in self.tree.files if f != rel]
        same_name = [f for f in present if f.rsplit("/", 1)[-1] == name]
        close = same_name or difflib.get_close_matches(rel, present, n=6, cutoff=0.75)
        close = [f for f in close if os.path.lexists(self.tree.root / f)][:3]
        return "did you mean " + " or ".join(close) + "?" if close else None

    # -- symbols ------------------------------------------------------------------------
    def _symbol(self, ref: Reference) -> RefResult:
        name = ref.symbol or ""
        parts = name.split(".")
        if len(parts) > 1:
            via_module = self._in_module(ref, parts)
            if via_module is not None:
                return via_module
        where = self._defined(name)
        if ref.path is not None:
            claimed = self._claimed(ref, name, where)
            if claimed is not None:
                return claimed
        if where is not None:
            return RefResult(ref, "symbol-defined", f"{name} is defined at {where}.", found=where)
        packaged = self._in_package(ref, parts) if len(parts) > 1 else None
        if packaged is not None:
            return packaged
        gone = self._in_history(name)
        if gone is not None:
            detail, suggestion = gone
            return RefResult(ref, "symbol-missing", detail, suggestion=suggestion)
        if len(parts) > 1:
            owner = ".".join(parts[:-1])
            owner_at = self._defined(owner)
            if owner_at is not None:
                return RefResult(ref, "member-missing", f"{owner} ({owner_at}) has no member {parts[-1]}.",
                                 found=owner_at, suggestion=self._close_member(owner, parts[-1], owner_at)
                                 or self._defined_as(parts[-1]))
            return self._unresolved_qualifier(ref, name, owner, parts[-1])
        mentioned = sorted(self.mentions.get(_last(name), ()))
        if mentioned:
            return RefResult(ref, "symbol-mentioned",
                             f"{name} is not defined in this repository; {_last(name)} occurs in "
                             f"{plural(len(mentioned), 'file')}, e.g. {mentioned[0]}.", found=mentioned[0])
        return RefResult(ref, "symbol-unknown",
                         f"{name} is not defined or mentioned anywhere in this repository, nor in its "
                         "history searched: a library's name, or invented." + self.tree.too_large_note())

    def _in_package(self, ref: Reference, parts: list[str]) -> RefResult | None:
        """`chi.URLParam`, `middleware.Recoverer`, `crate::routing::Router`: the rest defined in a
        file whose package or module the qualifier names (a Go package clause, a module path;
        syntax/packages.py), the longest rest first. The rest is the file's own qualified name
        (`client.handle_request` is no method `HTTPTransport.handle_request` of client/transport.py)."""
        for i in range(1, len(parts)):
            qualifier, rest = ".".join(parts[:i]), ".".join(parts[i:])
            for rel in sorted(self.mentions.get(_last(rest), ())):
                spans = self.tree.defs(rel).get(rest)
                if spans and qualifies(qualifier, rel, self.tree.text(rel) if has_package_clause(rel) else None):
                    where = _cite(rel, spans[0])
                    return RefResult(ref, "symbol-defined", f"{ref.symbol} is defined at {where} (in {qualifier}).",
                                     found=where)
        return None

    def _unresolved_qualifier(self, ref: Reference, name: str, owner: str, member: str) -> RefResult:
        """`Owner.member` where Owner is neither this repository's definition nor its module: the
        qualifier must resolve too, or the reference names code that is not there. A library's
        class or a variable (`session.send`) is named beside the member in some file; an invented
        one is not, and when the member is this repository's, the suggestion says where it is."""
        word = _last(owner)
        beside = sorted(self.mentions.get(member, set()) & self.mentions.get(word, set()))
        if beside:
            return RefResult(ref, "symbol-mentioned",
                             f"{name} is not defined in this repository; {word} and {member} occur together "
                             f"in {plural(len(beside), 'file')}, e.g. {beside[0]} (a library's name, or a variable).",
                             found=beside[0])
        named = self.mentions.get(word, set())
        nowhere = (f"{owner} is not defined in this repository (it occurs in {plural(len(named), 'file')}, never "
                   f"beside {member})" if named else f"{owner} is defined and mentioned nowhere in this repository")
        homes = self._homes(member)
        if homes:
            shown = ", ".join(f"{q} ({at})" for q, at in homes[:3]) + (", ..." if len(homes) > 3 else "")
            return RefResult(ref, "qualifier-missing", f"{nowhere}; {member} is defined only as {shown}.",
                             suggestion=self._defined_as(member, homes))
        mentioned = sorted(self.mentions.get(member, ()))
        if named and mentioned:     # both a library's names, most likely (`requests.get`)
            return RefResult(ref, "symbol-mentioned",
                             f"{name} is not defined in this repository; {word} occurs in {plural(len(named), 'file')}, "
                             f"{member} in {len(mentioned)}, e.g. {mentioned[0]}.", found=mentioned[0])
        return RefResult(ref, "symbol-unknown", f"{name} is not defined in this repository or in its history "
                         f"searched, and {member if named else owner} occurs nowhere in it: a library's name, "
                         "or invented." + self.tree.too_large_note())

    def _homes(self, member: str) -> list[tuple[str, str]]:
        """Every working-tree definition whose own name is `member`: (qualified name, path#Lx-Ly)."""
        found: list[tuple[str, str]] = []
        for rel in sorted(self.mentions.get(member, ()))[:MAX_HOME_FILES]:
            found += [(q, _cite(rel, spans[0])) for q, spans in self.tree.defs(rel).items() if _last(q) == member]
        return found

    def _defined_as(self, member: str, homes: list[tuple[str, str]] | None = None) -> str | None:
        """"did you mean A.member (path#L..) or B.member (...)?", from where `member` is defined."""
        homes = self._homes(member) if homes is None else homes
        if not homes:
            return None
        return "did you mean " + " or ".join(f"{q} ({at})" for q, at in homes[:3]) + "?"

    def _claimed(self, ref: Reference, name: str, where: str | None) -> RefResult | None:
        """The answer says where the symbol is (`name` in path#L..): check that claim too. None
        when the claimed file is not there (its own path reference reports that)."""
        assert ref.path is not None
        loc = locate(self.tree.root, ref.path)
        if not loc.inside or not loc.exists or loc.rel is None or loc.rel in self.tree.ignored:
            return None
        spans = [span for q, found in self.tree.defs(loc.rel).items()
                 if _is(q, name) for span in found]
        if not spans:
            if where is None:
                return None     # defined nowhere: history and the rest decide
            return RefResult(ref, "symbol-moved", f"{name} is not in {loc.rel}; it is defined at {where}.",
                             found=where, suggestion=f"now at {where}")
        if ref.start is not None:
            end = ref.end or ref.start
            if not any(s <= end and ref.start <= e for s, e in spans):
                now = _cite(loc.rel, spans[0])
                return RefResult(ref, "symbol-moved", f"{name} is at {now}, not at lines {ref.start}-{end}.",
                                 found=now, suggestion=f"now at {now}")
        here = _cite(loc.rel, spans[0])
        return RefResult(ref, "symbol-defined", f"{name} is defined at {here}.", found=here)

    def _defined(self, name: str, commit: str | None = None, files: Iterable[str] | None = None) -> str | None:
        """Where `name` (qualified, or a suffix of a qualified name) is defined: `path#Lx-Ly`."""
        last = _last(name)
        if files is None:
            known = last in self._names and (commit is None or commit == self.tree.head)
            pool = (self.mentions if commit is None else self.head_mentions) if known \
                else gitio.grep_words(self.tree.root, [last], commit)
            files = pool.get(last, ())
        candidates = sorted(files)
        if commit is not None:
            self.tree.prefetch(commit, candidates)
        for rel in candidates:
            found = _lookup(self.tree.defs(rel, commit), name, rel)
            if found is not None:
                return _cite(rel, found)
        return None

    def _close_member(self, owner: str | None, member: str, owner_at: str) -> str | None:
        """Near names among the owner's members (owner=None: a module's top-level names)."""
        rel = owner_at.split("#", 1)[0]
        members = [q.rsplit(".", 1)[-1] for q in self.tree.defs(rel)
                   if (owner is None and "." not in q)
                   or (owner is not None and "." in q and (q.rsplit(".", 1)[0] == owner
                                                           or q.rsplit(".", 1)[0].endswith("." + owner)))]
        close = difflib.get_close_matches(member, members, n=3, cutoff=0.6)
        named = [f"{owner}.{m}" if owner else m for m in close]
        return "did you mean " + " or ".join(named) + "?" if close else None

    def _in_history(self, name: str) -> tuple[str, str | None] | None:
        """(detail, suggestion) when `name` was this repository's definition and is gone now."""
        head = self.tree.head
        if head is None:
            return None
        at_head = self._defined(name, head)
        if at_head is not None:
            return (f"{name} is defined at HEAD ({at_head}) but not in the working tree: removed or "
                    "renamed by uncommitted edits.", self._renamed_symbol(name, at_head, head, None))
        if self._history_budget <= 0:
            return None
        self._history_budget -= 1
        changed = gitio.last_commit_mentioning(self.tree.root, _last(name))
        parent = gitio.parent_commit(self.tree.root, changed) if changed else None
        if parent is None or changed is None:
            return None
        before = self._defined(name, parent)
        if before is None:
            return None
        return (f"{name} was defined in {before.split('#')[0]} until commit {changed[:7]} removed it.",
                self._renamed_symbol(name, before, parent, changed))

    def _renamed_symbol(self, name: str, old_at: str, before: str, after: str | None) -> str | None:
        """A definition that appeared in the same file when `name` went (between commits `before`
        and `after`; after=None: the working tree) with a near name: a likely rename."""
        rel = old_at.split("#", 1)[0]
        old = self.tree.defs(rel, before)
        new = self.tree.defs(rel, after) if after else self.tree.defs(rel)
        gone = next((q for q in old if _is(q, name)), name)
        close = difflib.get_close_matches(gone, [q for q in new if q not in old], n=1, cutoff=0.6)
        where = self._defined(close[0]) if close else None
        return f"renamed to {close[0]}? now at {where}" if close and where else None

    def _in_module(self, ref: Reference, parts: list[str]) -> RefResult | None:
        """`pkg.mod.func`: the longest prefix that is this repository's module, then the rest in it."""
        modules = self.tree.modules
        for i in range(len(parts), 0, -1):
            module = ".".join(parts[:i])
            if module not in modules:
                continue
            rel, rest = modules[module], ".".join(parts[i:])
            if not rest:
                return RefResult(ref, "module-found", f"{module} is {rel}.", found=rel)
            if rel.endswith("/"):
                return None
            where = self._defined(rest, files=[rel])
            if where is not None:
                return RefResult(ref, "symbol-defined", f"{ref.symbol} is defined at {where}.", found=where)
            text = self.tree.text(rel) or ""
            if _has_word(text, parts[i]):
                return RefResult(ref, "symbol-mentioned", f"{module} mentions {parts[i]} but does not define "
                                 "it (an import or assignment).", found=rel)
            gone = self._gone_submodule(ref, module, rel, parts[i])
            if gone is not None:
                return gone
            return RefResult(ref, "member-missing", f"module {module} ({rel}) has no {rest}.", found=rel,
                             suggestion=self._close_member(None, rest, rel) if "." not in rest else None)
        return None

    def _gone_submodule(self, ref: Reference, package: str, rel: str, name: str) -> RefResult | None:
        """`pkg.old_module.x` where pkg/old_module.py was deleted or renamed: say so."""
        if not rel.endswith("/__init__.py"):
            return None
        base = rel[:-len("__init__.py")] + name
        for candidate in (base + ".py", base + "/__init__.py"):
            history = self._file_history(candidate)
            if history is not None:
                when, new, _ = history
                moved = f"renamed to {module_of(new)} ({new})" if new else None
                return RefResult(ref, "module-missing", f"module {package}.{name} ({candidate}) was "
                                 f"{'renamed' if new else 'deleted'} {when}.", suggestion=moved)
        return None

    # -- imports ------------------------------------------------------------------------
    def _import(self, ref: Reference) -> RefResult:
        if ref.base is not None and ref.base.rsplit(".", 1)[-1].lower() in JS_EXTENSIONS:
            return self._js_import(ref, ref.base, ref.module or "")
        module = _absolute_module(ref.module or "", ref.base)
        modules = self.tree.modules
        if module is None:
            return RefResult(ref, "module-missing", f"{ref.module} climbs above the package of {ref.base}.")
        top = module.split(".")[0]
        if module not in modules and not any(m == top or m.startswith(top + ".") for m in modules):
            return RefResult(ref, "module-external", f"{top} is not a package of this repository.")
        if module not in modules:
            want = module.replace(".", "/") + ".py"
            return RefResult(ref, "module-missing", f"no module {module} in this repository.",
                             suggestion=self._similar_module(module, want))
        rel = modules[module]
        if not ref.symbol:
            return RefResult(ref, "module-found", f"{module} is {rel}.", found=rel)
        if f"{module}.{ref.symbol}" in modules:
            sub = modules[f"{module}.{ref.symbol}"]
            return RefResult(ref, "module-found", f"{module}.{ref.symbol} is {sub}.", found=sub)
        init = rel + "__init__.py" if rel.endswith("/") else rel
        where = self._defined(ref.symbol, files=[init]) if init in self.tree.file_set else None
        if where is not None:
            return RefResult(ref, "symbol-defined", f"{ref.symbol} is defined at {where}.", found=where)
        if _has_word(self.tree.text(init) or "", ref.symbol):
            return RefResult(ref, "symbol-mentioned", f"{init} binds {ref.symbol} (an import or assignment).",
                             found=init)
        elsewhere = self._defined(ref.symbol)
        return RefResult(ref, "name-missing", f"{module} ({rel}) does not define or import {ref.symbol}.",
                         found=rel, suggestion=f"now at {elsewhere}" if elsewhere else None)

    def _js_import(self, ref: Reference, base: str, spec: str) -> RefResult:
        """`./a`, `../b/c.js` from `base`: a file with a JS/TS extension, or a directory index."""
        target = posixpath.normpath(posixpath.join(posixpath.dirname(base), spec))
        loc = locate(self.tree.root, target)
        if not loc.inside or loc.rel is None:
            return RefResult(ref, "outside-repo", f"{spec} from {base} leaves the repository; not checked.")
        stem = loc.rel[:-len(posixpath.splitext(loc.rel)[1])] if loc.rel.endswith((".js", ".jsx", ".mjs", ".cjs")) else None
        suffixes = ("", ".ts", ".tsx", ".js", ".jsx", ".mjs", ".cjs", ".mts", ".cts", ".d.ts", ".json",
                    "/index.ts", "/index.tsx", "/index.js", "/index.jsx")
        # TypeScript's ESM style imports `./a.js` for the source file `a.ts`.
        candidates = [loc.rel + s for s in suffixes] + ([stem + s for s in (".ts", ".tsx", ".mts", ".cts")] if stem else [])
        known = self.tree.file_set | self.added
        found = next((c for c in candidates if c in known), None)
        if found is not None:
            return RefResult(ref, "added-by-patch" if found in self.added else "module-found",
                             f"{spec} from {base} is {found}.", found=found)
        history = next((h for c in candidates[1:5] if (h := self._file_history(c)) is not None), None)
        detail = f"{spec} from {base}: no file {loc.rel}(.ts|.js|/index...) in the working tree."
        if history is not None and history[1] is not None:
            return RefResult(ref, "module-missing", detail, suggestion=f"renamed to {history[1]}")
        return RefResult(ref, "module-missing", detail, suggestion=self._similar_path(loc.rel + ".ts"))

    def _similar_module(self, module: str, want: str) -> str | None:
        history = self._file_history(want)
        if history is not None and history[1] is not None:
            return f"renamed to {module_of(history[1])} ({history[1]})"
        close = difflib.get_close_matches(module, list(self.tree.modules), n=3, cutoff=0.75)
        return "did you mean " + " or ".join(close) + "?" if close else None


def _lookup(defs: Definitions, name: str, rel: str) -> tuple[int, int] | None:
    """The first span of `name` in a file's definitions: by its qualified name or a dotted
    suffix of it, or exactly under one of the other spellings the validator accepts for that
    file (`srv.NewServer` in srv/server.go, `pkg.mod.func`)."""
    first, *others = symbols.spellings(name, rel) or [name]
    for qualified, spans in defs.items():
        if _is(qualified, name) or _is(qualified, first):
            return spans[0]
    return next((defs[other][0] for other in others if defs.get(other)), None)


def _is(qualified: str, name: str) -> bool:
    """A reference names a definition by its qualified name or a dotted suffix of it
    (`cancel` and `OrderService.cancel` both name `OrderService.cancel`)."""
    return qualified == name or qualified.endswith("." + name)


def _last(name: str | None) -> str:
    return (name or "").rsplit(".", 1)[-1]


def _has_word(text: str, word: str) -> bool:
    return re.search(rf"(?<![\w$]){re.escape(word)}(?![\w$])", text) is not None


def _absolute_module(module: str, base: str | None) -> str | None:
    """`..util` imported from `shop/api/views.py` -> `shop.util`; absolute names unchanged."""
    if not module.startswith("."):
        return module
    dots = len(module) - len(module.lstrip("."))
    package = (base or "").split("/")[:-1]
    if dots - 1 > len(package):
        return None
    parent = package[:len(package) - (dots - 1)]
    rest = module[dots:]
    return ".".join([*parent, *([rest] if rest else [])]) or None
