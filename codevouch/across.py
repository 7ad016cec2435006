"""One search over several repositories: `codevouch.Indexes`, each hit checked where it lives.

    from codevouch import Indexes
    many = Indexes(["~/src/shop", "~/src/billing"])       # or Indexes.all(): every repository indexed
    for found in many.search("where do we compute overdue fees", k=5):
        print(found.repository.path, found.hit.citation)

Each repository is searched by its own `Index` (its own overlay searched live, its own usage
record written), the repositories in parallel, then the answers are fused into one ranking (`fuse`,
below; docs/SEARCH.md, "Across repositories"), and each hit of the fused top k is checked against
its own repository's working tree (the others are not checked: no git work for hits never shown).
A repository that cannot be searched (not indexed, gone from this machine, its index unreadable) is
listed in the answer's `skipped` with the reason, and the others are searched still.

A client of the api, as the review and the MCP server are: below those, above `codevouch.api`.
"""
from __future__ import annotations

import os
import threading
from collections import Counter
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from codevouch import caches
from codevouch.api import Index, index_dir_of
from codevouch.call import Call, carried, in_call
from codevouch.errors import CodevouchError, InputError, NotIndexed
from codevouch.printable import one_line
from codevouch.request import ContextRequest, SearchRequest, request_from
from codevouch.results import Hit, Hits
from codevouch.vocabulary import Verdict

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from codevouch.context.enclosing import Enclosing
    from codevouch.embedding import Embedder
    from codevouch.navigate.outline import Outline
    from codevouch.navigate.references import References
    from codevouch.navigate.show import Shown
    from codevouch.request import ContextOptions, SearchOptions
    from codevouch.results import ContextPack
    from codevouch.retriever.queryencoder import QueryVectors
    from codevouch.retriever.settings import Settings
    from codevouch.validator.model import Validated

# The most repositories one query may touch: each is one search of its own (its git facts, its
# overlay, its validation), so a query over more is refused with what to do, never run slowly.
MAX_REPOS = 100

# The most repositories searched at once: a search mostly waits on git processes and SQLite, which
# let go of the GIL, so a few threads overlap those waits; more would only queue for the cores.
WORKERS = 8

# How the hits of several repositories were put in one ranking (docs/SEARCH.md).
BY_SIMILARITY = "similarity"     # the one model's cosine similarity: comparable across repositories
BY_RANK = "rank"                 # no common measure (lexical mode, or different models): by rank


@dataclass(frozen=True)
class Repository:
    """Where a hit lives: its repository's path on this machine and its remote (a label for people,
    credentials removed; None without one)."""
    path: Path
    remote: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"path": str(self.path), "remote": self.remote}


@dataclass(frozen=True)
class Found:
    """One hit of a search across repositories: the repository it lives in, and the hit as that
    repository's `Index.search` made and checked it (its working tree, its overlay)."""
    repository: Repository
    hit: Hit

    def to_json(self, fields: Sequence[str] | None = None, max_chars: int | None = None) -> dict[str, Any]:
        """The hit's one JSON form (`Hit.to_json`) and `repository`: {path, remote}."""
        out = self.hit.to_json(fields, max_chars)
        if not fields or "repository" in fields:
            out["repository"] = self.repository.to_json()
        return out


@dataclass(frozen=True)
class Skipped:
    """A repository the query could not search, and why (one line for people, and the error's kind)."""
    path: str
    reason: str
    error: str
    not_indexed: bool = False

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "reason": self.reason, "error": self.error}


A = TypeVar("A", "Shown", "References", "Outline")

# The lists of a navigation answer whose items each name their repository across repositories.
_ITEMS = ("hits", "gone", "references", "entries")


@dataclass(frozen=True)
class Navigated(Generic[A]):
    """`Indexes.show`, `.references` or `.outline`: each repository's own answer (read from its
    working tree now), in the order the repositories were named; `skipped`, the repositories that
    could not answer; `refused`, those that refused the question itself (a path not there, outside
    it, ignored by git), each with the reason."""
    answers: tuple[tuple[Repository, A], ...]
    skipped: tuple[Skipped, ...] = ()
    refused: tuple[tuple[Repository, str], ...] = ()

    def to_json(self, max_chars: int | None = None) -> dict[str, Any]:
        """One repository's answer's shape, its lists (hits, gone, references, entries) joined in
        repository order, each item with its `repository`; each repository's note in `notes`
        ({repository, note}), its overlay in `overlays`; and `repositories`, `skipped`, `refused`."""
        out: dict[str, Any] = {}
        notes: list[dict[str, Any]] = []
        overlays: list[dict[str, Any]] = []
        for repo, answer in self.answers:
            where = repo.to_json()
            one = answer.to_json(max_chars) if hasattr(answer, "searched") else answer.to_json()  # type: ignore[call-arg]
            for key, value in one.items():
                if key in _ITEMS and value is not None:
                    out[key] = (out.get(key) or []) + [{**item, "repository": where} for item in value]
                elif key in ("note", "notes"):
                    notes += [{"repository": where, "note": n} for n in ([value] if key == "note" else value) if n]
                elif key == "overlay":
                    overlays += [{"repository": where, "overlay": value}] if value is not None else []
                else:
                    out.setdefault(key, value)
        return {**out, "notes": notes, "overlays": overlays, "repositories": [r.to_json() for r, _ in self.answers],
                "skipped": [s.to_json() for s in self.skipped],
                "refused": [{"repository": r.to_json(), "reason": why} for r, why in self.refused]}


class FoundHits(list[Found]):
    """`Indexes.search`'s answer: the fused hits, best first; `skipped`, the repositories that gave
    none because they could not be searched; `fusion`, how the ranking was made (BY_SIMILARITY,
    BY_RANK); `answers`, each searched repository's own `Hits` (its overlay, its notes; of its hits,
    only those in the fused answer were checked)."""

    def __init__(self, hits: Sequence[Found], skipped: Sequence[Skipped] = (), fusion: str = BY_SIMILARITY,
                 answers: Sequence[tuple[Repository, Hits]] = ()) -> None:
        super().__init__(hits)
        self.skipped = tuple(skipped)
        self.fusion = fusion
        self.answers = tuple(answers)

    def overlays(self) -> list[dict[str, Any]]:
        """Each repository's overlay summary where its index is behind its working tree."""
        return [{"repository": r.to_json(), "overlay": h.overlay.summary()} for r, h in self.answers
                if h.overlay is not None and h.overlay.note()]

    def to_json(self, fields: Sequence[str] | None = None, max_chars: int | None = None) -> dict[str, Any]:
        return {"hits": [f.to_json(fields, max_chars) for f in self], "fusion": self.fusion,
                "repositories": [r.to_json() for r, _ in self.answers],
                "skipped": [s.to_json() for s in self.skipped], "overlays": self.overlays()}


def _head_key(hit: Hit, rank: int, comparable: bool) -> tuple[Any, ...]:
    """What the fusion compares of each repository's next hit: facts that mean the same in every
    repository. A name the query spells and the model's own threshold come first; then, where one
    model embedded every repository, the cosine similarity; else the hit's rank in its repository."""
    if comparable:
        return (hit.name_match, hit.good_match is True, hit.similarity if hit.similarity is not None else 0.0)
    return (hit.name_match, -rank)


def fuse(answers: Sequence[Sequence[Hit]], k: int, comparable: bool = True) -> list[tuple[int, Hit]]:
    """The k best of several repositories' rankings as one: (which answer, hit), best first (pure).

    Each repository's own order is kept (its kind weights, its lexical and name evidence, its
    collapsing), and the next place goes to the repository whose next hit is best by `_head_key`:
    never by `score`, its lists fused within one repository (its first hit scores about 1.0 however
    poorly it matches, so a small repository with nothing relevant would flood the top). With one
    answer, that answer's own order. Ties go to the answer listed first."""
    at = [0] * len(answers)
    out: list[tuple[int, Hit]] = []
    while len(out) < k:
        best: tuple[tuple[Any, ...], int] | None = None
        for i, hits in enumerate(answers):
            if at[i] < len(hits):
                key = _head_key(hits[at[i]], at[i], comparable)
                if best is None or key > best[0]:
                    best = (key, i)
        if best is None:
            break
        i = best[1]
        out.append((i, answers[i][at[i]]))
        at[i] += 1
    return out


class Indexes:
    """Several repositories of one index directory, searched as one (see the module's docstring).

    repos: paths on this machine (any path inside each work tree), at most MAX_REPOS; the other
    arguments as `Index`'s, for each repository's own Index."""

    def __init__(self, repos: Sequence[Path | str], index_dir: Path | str | None = None,
                 embedder: str | Embedder | None = None, record: bool | None = None, settings: Settings | None = None,
                 overlay_limit: int | None = None, call: Call | None = None, background: bool = True) -> None:
        self.call = call if call is not None else Call.of_process()
        if not repos:
            raise InputError("no repository to search: name one or more (--repo PATH, --repos FILE) or all of the "
                             "index's (--all-repos).")
        seen: dict[str, Path] = {}    # one search per repository however its path is spelled
        unique = [seen.setdefault(k, Path(r)) for r in repos if (k := os.path.realpath(self.call.path(r))) not in seen]
        if len(unique) > MAX_REPOS:
            raise InputError(f"{len(unique)} repositories named; one query searches at most {MAX_REPOS}: name fewer "
                             "(--repo, --repos FILE).")
        self.repos = unique
        self.index_dir = index_dir_of(index_dir, self.call)
        self._options: dict[str, Any] = {"embedder": embedder, "record": record, "settings": settings,
                                         "overlay_limit": overlay_limit, "background": background}
        self._indexes: dict[Path, Index] = {}   # each repository's, kept from one call to the next
        self._lock = threading.Lock()   # one call at a time (its repositories searched in parallel)

    @classmethod
    def all(cls, index_dir: Path | str | None = None, call: Call | None = None, **options: Any) -> Indexes:
        """Every repository the index directory holds a branch of (as `index status` lists them)."""
        call = call if call is not None else Call.of_process()
        where = index_dir_of(index_dir, call)
        repos = indexed_repositories(where)
        if not repos:
            raise NotIndexed(f"the index at {where} holds no repository; run `codevouch index build --repo PATH` "
                             "(or `--repos FILE`) first.")
        return cls(repos, where, call=call, **options)

    def __repr__(self) -> str:
        return f"Indexes({[str(r) for r in self.repos]!r}, index_dir={str(self.index_dir)!r})"

    @in_call
    def search(self, query: str | SearchRequest, *, hide_excluded: bool = False,
               **options: Unpack[SearchOptions]) -> FoundHits:
        """`Index.search` in every repository, fused into one ranking of the request's k hits."""
        request = request_from(SearchRequest, query, options)
        return self._fused(request, hide_excluded)

    @in_call
    def context(self, query: str | ContextRequest, **options: Unpack[ContextOptions]) -> ContextPack:
        """`Index.context` across the repositories: their hits fused (as `search`), then packed in one
        budget. Each piece names its repository (a `repository:` line above its citation, and its path
        led by the repository's name in the report and the code fences, so that two repositories'
        `src/util.py` are never taken for slices of one file). The budget: `budget`, else `model`'s,
        else the environment's or the default (no one repository's `[budget]` decides for all)."""
        request = request_from(ContextRequest, query, options)
        wanted = request.search()
        found = self._fused(wanted)
        return pack_across(found, request, self.call)

    @in_call
    def show(self, name: str, branch: str | None = None) -> Navigated[Shown]:
        """`Index.show` in every repository: the definitions `name` spells in each working tree now."""
        return self._each(lambda idx: idx.show(name, branch=branch))

    @in_call
    def references(self, name: str, limit: int = 200) -> Navigated[References]:
        """`Index.references` in every repository (at most `limit` uses in each)."""
        return self._each(lambda idx: idx.references(name, limit=limit))

    @in_call
    def outline(self, path: str) -> Navigated[Outline]:
        """`Index.outline` in every repository: `path` from each one's top (an absolute path, or
        one that exists from the caller's directory, is read only in the repository that holds it;
        the others list it in `refused`)."""
        return self._each(lambda idx: idx.outline(path))

    def _each(self, run: Callable[[Index], A]) -> Navigated[A]:
        """`run` on each repository's Index; InputError when every repository refused the question."""
        answers: list[tuple[Repository, A]] = []
        skipped: list[Skipped] = []
        refused: list[tuple[Repository, InputError]] = []
        for path in self.repos:
            if not self.call.path(path).exists():
                skipped.append(_absent(path))
                continue
            try:
                idx = self._index(path)
                repo = self._repository(idx, None)
            except CodevouchError as exc:
                skipped.append(_skipped(path, exc))
                continue
            try:
                answers.append((repo, run(idx)))
            except InputError as exc:      # the question, not the repository: a path that is not there
                refused.append((repo, exc))
            except CodevouchError as exc:
                skipped.append(_skipped(path, exc))
        if refused and not answers and not skipped:
            raise refused[0][1]
        return Navigated(tuple(answers), tuple(skipped), tuple((r, str(e)) for r, e in refused))

    def _index(self, path: Path) -> Index:
        """The repository's Index, made at its first call (a later call guards its git files again:
        they may have changed since)."""
        from codevouch.worktree import gitreads

        idx = self._indexes.get(path)
        if idx is None:
            idx = self._indexes[path] = Index(self.call.path(path), self.index_dir, call=self.call, **self._options)
        else:
            gitreads.guard(idx.repo)
        return idx

    def _repository(self, idx: Index, hits: Hits | None) -> Repository:
        """The repository an Index searched: its work tree's top and its remote's label."""
        from codevouch.worktree import gitio

        known = hits.known if hits is not None else None
        root = known.head.root if known is not None and known.head is not None else gitio.repo_root(idx.repo)
        return Repository(root, _REMOTES.label(root))

    def _fused(self, request: SearchRequest, hide_excluded: bool = False) -> FoundHits:
        """Every repository searched (in parallel, unchecked), the answers fused, and only the hits
        that make the fused top k checked, each in its own working tree (`_checked_top`)."""
        from codevouch.retriever.queryencoder import QueryVectors  # heavy: the store

        queries = QueryVectors()   # the query embedded once per model, for every repository
        with self._lock:
            got = _in_parallel([carried(lambda p=path: self._searched(p, request, queries)) for path in self.repos])
            answers = [a for a in got if not isinstance(a, Skipped)]
            models = {a.model for a in answers if a.hits}
            comparable = request.mode != "lexical" and len(models) <= 1 and None not in models
            fused = _checked_top(answers, request, comparable, hide_excluded)
            if request.validate:
                for a in answers:
                    a.record(request)
        return FoundHits([Found(answers[i].repository, hit) for i, hit in fused], [a for a in got if isinstance(a, Skipped)],
                         BY_SIMILARITY if comparable else BY_RANK, [(a.repository, a.answer()) for a in answers])

    def _searched(self, path: Path, request: SearchRequest, queries: QueryVectors) -> _Answer | Skipped:
        """One repository's answer, its hits not yet checked (a repository not on this machine: its
        hits checked against the indexed commit already); Skipped when it cannot be searched."""
        if not self.call.path(path).exists():
            got = self._recorded(path, request, queries)
            return got if isinstance(got, Skipped) else _Answer(got[0], got[1], got[2], None)
        try:
            idx = self._index(path)
            idx.queries = queries
            hits = idx.search(replace(request, validate=False))
            return _Answer(self._repository(idx, hits), hits, _model_of(hits), idx if request.validate else None)
        except CodevouchError as exc:
            return _skipped(path, exc)

    def _recorded(self, path: Path, request: SearchRequest,
                  queries: QueryVectors) -> tuple[Repository, Hits, str | None] | Skipped:
        """A repository indexed but not on this machine: its index searched alone (its most recently
        built branch, or the request's), each hit historical-only, checked against the indexed commit
        only (validator.not_on_this_machine): never given as current code. Skipped when the index
        holds no such branch of it either."""
        from codevouch import callreads, validator
        from codevouch.retriever import matching
        from codevouch.retriever.recorded import blobs_at, holding_clone, search_recorded
        from codevouch.retriever.settings import DEFAULT
        from codevouch.store import IndexDir, Ledger

        where = str(self.call.path(path))
        if not IndexDir(self.index_dir).has_ledger():
            return _absent(path)
        ledger = Ledger(self.index_dir, readonly=True)
        try:
            states = ledger.branches()
        finally:
            ledger.close()
        spelled = {where, os.path.normpath(where), os.path.realpath(where)}   # the ledger's: git's top, links resolved
        mine = [s for s in states if s.repo in spelled and request.branch in (None, s.branch)]
        if not mine:
            return _absent(path)
        state = max(mine, key=lambda s: s.built_at)
        clone = holding_clone(state, [Path(s.repo) for s in states if s.repo_id == state.repo_id] +
                              [self.call.path(p) for p in self.repos])
        settings = self._options["settings"] or DEFAULT
        try:
            caller = callreads.search_caller(self.call, callreads.overlay_limit(self._options["overlay_limit"], self.call),
                                             queries)
            with self.call.entered():
                found = search_recorded(state, request, self.index_dir, clone, self._options["embedder"] or state.embedder,
                                        settings, caller)
                read_here = blobs_at(clone, state.commit, [c.record for c in found]) if clone is not None else set()
        except CodevouchError as exc:
            return _skipped(path, exc)
        threshold = settings.match_threshold if settings.match_threshold is not None else settings.threshold_for(state.embedder)
        hits = []
        for c in found:
            assert found.query is not None
            named = matching.matches_by_name(found.query, c.record.symbol, c.matched)
            hit = Hit(c.record, c.score, c.text if c.record.path in read_here else "", matched=c.matched,
                      similarity=c.similarity, name_match=named,
                      good_match=matching.good_match(named, c.similarity, threshold, False))
            if request.validate:
                hit = replace(hit, check=validator.not_on_this_machine(hit._for_validator(), c.record.path in read_here,
                                                                       c.record.kind))
            hits.append(hit)
        return Repository(Path(where), state.remote), Hits(hits), state.embedder


def labelled(found: Sequence[Found], lead: bool = False) -> list[Validated]:
    """Each checked hit's validation, its citation opened by a `repository:` line; `lead`: its paths
    also led by the repository's name (`library/lib/fees.py`; a name two repositories share gets
    its position), as the pack's report and code fences show them."""
    names = _short_names([f.repository for f in found])
    out = []
    for f in found:
        v = f.hit.check
        if v is None:
            continue
        where = f.repository.path if f.repository.remote is None else f"{f.repository.path} ({f.repository.remote})"
        v = replace(v, citation=one_line(f"repository: {where}") + "\n" + v.citation)
        if lead:
            name = names[f.repository]
            v = replace(v, parsed=replace(v.parsed, path=f"{name}/{v.parsed.path}"),
                        current=replace(v.current, path=f"{name}/{v.current.path}") if v.current is not None else None)
        out.append(v)
    return out


def _short_names(repos: Sequence[Repository]) -> dict[Repository, str]:
    """Each repository's directory name, with its place among them where two share one."""
    unique = list(dict.fromkeys(repos))
    counts = Counter(r.path.name for r in unique)
    return {r: r.path.name if counts[r.path.name] == 1 else f"{r.path.name}~{n}" for n, r in enumerate(unique, 1)}


def pack_across(found: FoundHits, request: ContextRequest, call: Call) -> ContextPack:
    """The fused hits packed within one budget (see `Indexes.context`)."""
    from codevouch.context import enclosing  # heavy: tree-sitter
    from codevouch.context.pack import pack
    from codevouch.context.windows import budget_counter, resolve_budget
    from codevouch.results import ContextPack

    checked = [(f, f.hit.check) for f in found if f.hit.check is not None]
    # The definition each slice lies in, read in its own repository's working tree (1-based ranks).
    around: dict[int, Enclosing] = {}
    for repo in dict.fromkeys(f.repository for f, _ in checked if f.repository.path.exists()):
        ranks = [n for n, (f, _) in enumerate(checked, 1) if f.repository == repo]
        got = enclosing.enclosing(repo.path, [checked[n - 1][1] for n in ranks])
        around.update({ranks[r - 1]: e for r, e in got.items()})
    results = labelled([f for f, _ in checked], lead=True)
    chosen = resolve_budget(request.budget, request.model, None, reserve=request.reserve, env=call.env)
    live = "; ".join(f"{r.path.name}: {h.overlay.note()}" for r, h in found.answers
                     if h.overlay is not None and h.overlay.note())
    weak = Hits(f.hit for f in found)
    packed = pack(results, budget_counter(chosen), chosen.tokens, include_history=request.include_history,
                  enclosing=around, index=f"{len(found.answers)} repositories", budget_note=chosen.describe(),
                  live_note=live, match_note=weak.note() or "")
    return ContextPack(packed.markdown, tuple(results), packed, chosen, no_good_match=weak.no_good_match)


class _Remotes:
    """Each repository's remote label, kept for the process (every Indexes, each a call of the CLI,
    the engine or the MCP server) while its git config file is unchanged (the same size,
    modification time and inode: git writes a new config by renaming a new file over it), so a
    remote added or changed is seen at the next call; a work tree whose `.git` is a file (a linked
    work tree, a submodule) asks git each time."""

    def __init__(self) -> None:
        self._known: dict[Path, tuple[tuple[int, int, int], str | None]] = {}
        self._lock = threading.Lock()

    def label(self, root: Path) -> str | None:
        from codevouch.worktree import gitio

        try:
            st = (root / ".git" / "config").stat()
            key: tuple[int, int, int] | None = (st.st_mtime_ns, st.st_size, st.st_ino)
        except OSError:
            key = None
        with self._lock:
            held = self._known.get(root)
        if key is not None and held is not None and held[0] == key:
            return held[1]
        url = gitio.remote_url(root)
        if key is not None:
            with self._lock:
                self._known[root] = (key, url)
        return url

    def clear(self) -> None:
        with self._lock:
            self._known.clear()

    def __len__(self) -> int:
        return len(self._known)


_REMOTES = _Remotes()
caches.register("codevouch.across.remotes", _REMOTES.clear, _REMOTES.__len__)


class _Answer:
    """One repository's search: its Hits in its own order, a checked copy of each that was checked
    (by position), and the Index that checks the rest (None: nothing left to check)."""

    def __init__(self, repository: Repository, hits: Hits, model: str | None, idx: Index | None) -> None:
        self.repository, self.hits, self.model, self.idx = repository, hits, model, idx
        self.checked: dict[int, Hit] = {}
        self.dropped: set[int] = set()     # excluded hits, when the search hides them

    def left(self) -> list[tuple[int, Hit]]:
        """(position, hit) in order, the checked version where there is one, without dropped hits."""
        return [(n, self.checked.get(n, h)) for n, h in enumerate(self.hits) if n not in self.dropped]

    def done(self, n: int) -> bool:
        return self.idx is None or n in self.checked

    def check(self, positions: Sequence[int]) -> None:
        """Check these hits in the repository's own working tree (Index._checked, as its search does)."""
        assert self.idx is not None
        got = self.idx._checked([self.hits[n] for n in positions], self.hits.known)
        self.checked.update(zip(positions, got))

    def answer(self) -> Hits:
        """The repository's own Hits, with the checked hits in place of the unchecked."""
        h = self.hits
        return Hits([self.checked.get(n, hit) for n, hit in enumerate(h)], h.overlay, h.known, h.gone)

    def record(self, request: SearchRequest) -> None:
        """The repository's usage record of this search: the hits of it that were checked."""
        if self.idx is not None:
            checks = [self.checked[n].check for n in sorted(self.checked)]
            self.idx._record("search", request.branch, [c for c in checks if c is not None], self.hits.known,
                             self.hits.overlay)


def _checked_top(answers: Sequence[_Answer], request: SearchRequest, comparable: bool,
                 hide_excluded: bool) -> list[tuple[int, Hit]]:
    """The fused top k, every hit in it checked in its own working tree: fuse, check the chosen hits
    not checked yet (each repository's at once, the repositories in parallel), drop the excluded
    ones when they are hidden, and fuse again until the top k holds only checked hits. The same
    answer as checking every hit of every repository first, for a fraction of the git work."""
    while True:
        lists = [a.left() for a in answers]
        fused = fuse([[h for _, h in one] for one in lists], request.k, comparable)
        taken = [0] * len(answers)
        todo: dict[int, list[int]] = {}
        for i, _ in fused:
            n = lists[i][taken[i]][0]
            taken[i] += 1
            if request.validate and not answers[i].done(n):
                todo.setdefault(i, []).append(n)
        if not todo:
            return fused
        _in_parallel([carried(lambda i=i, ns=ns: answers[i].check(ns)) for i, ns in todo.items()])
        if hide_excluded:
            for i in todo:
                answers[i].dropped.update(n for n, h in answers[i].checked.items() if h.verdict == Verdict.EXCLUDED)


T = TypeVar("T")


def _in_parallel(tasks: Sequence[Callable[[], T]]) -> list[T]:
    """Each task's result, in order; run on up to WORKERS threads (one task: on this one)."""
    if len(tasks) <= 1:
        return [t() for t in tasks]
    with ThreadPoolExecutor(max_workers=min(WORKERS, len(tasks)), thread_name_prefix="codevouch-across") as pool:
        return list(pool.map(lambda t: t(), tasks))


def _model_of(hits: Hits) -> str | None:
    """The model the searched branch was built with (whose space the hits' similarities are in)."""
    known = hits.known
    return known.state.embedder if known is not None and known.state is not None else None


def _skipped(path: Path, exc: CodevouchError) -> Skipped:
    return Skipped(str(path), str(exc), type(exc).__name__, isinstance(exc, NotIndexed))


def _absent(path: Path) -> Skipped:
    """A repository with no working tree here (a teammate's, a clone since removed): a hit's text is
    read from git and checked against the working tree, so none of its hits can be given as code."""
    return Skipped(str(path), f"{path} is not on this machine: its hits can be neither read nor checked against a "
                   "working tree here, so none is given (clone it there, or search on a machine that has it).",
                   "NotOnThisMachine")


def indexed_repositories(index_dir: Path) -> list[Path]:
    """The repositories an index directory holds a branch of, by the path each was built from, in
    the ledger's order (each once)."""
    from codevouch.store import IndexDir, Ledger  # heavy: the store

    if not IndexDir(index_dir).has_ledger():
        return []
    ledger = Ledger(index_dir, readonly=True)
    try:
        return list(dict.fromkeys(Path(state.repo) for state in ledger.branches()))
    finally:
        ledger.close()


__all__ = ["BY_RANK", "BY_SIMILARITY", "MAX_REPOS", "Found", "FoundHits", "Indexes", "Navigated", "Repository", "Skipped",
           "fuse", "indexed_repositories", "labelled", "pack_across"]
