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
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from codevouch import searchpool
from codevouch.api import Index, index_dir_of
from codevouch.call import Call, carried, in_call
from codevouch.errors import CodevouchError, InputError, NotIndexed
from codevouch.foundhits import BY_RANK, BY_SIMILARITY, Found, FoundHits, Repository, Skipped
from codevouch.remotes import REMOTES
from codevouch.request import ContextRequest, SearchRequest, request_from
from codevouch.results import Hit, Hits
from codevouch.vocabulary import Verdict

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from codevouch.embedding import Embedder
    from codevouch.navigate.outline import Outline
    from codevouch.navigate.references import References
    from codevouch.navigate.show import Shown
    from codevouch.request import ContextOptions, SearchOptions
    from codevouch.results import ContextPack
    from codevouch.retriever.bound import Bound, Bounds, Snapshot
    from codevouch.retriever.queryencoder import QueryVectors
    from codevouch.retriever.settings import Settings

# The most repositories one query may touch: each is one search of its own (its git facts, its
# overlay, its validation), so a query over more is refused with what to do, never run slowly.
MAX_REPOS = 100

# The most repositories searched at once (searchpool.py: the process's threads): a search mostly
# waits on git processes and SQLite, which let go of the GIL, so a few threads overlap those waits;
# more would only queue for the cores.
WORKERS = searchpool.WORKERS

# Past this many repositories, a search bounds each before searching it (Indexes._fused): fewer are
# all searched at once, on the WORKERS threads, in the time bounding them would take first.
BOUND_FROM = WORKERS

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


# How many of a repository's next hits its place in the fusion is judged by: its own order may put
# a hit the lexical evidence found (a weak similarity) just above one the model finds closest, and
# judged by its next hit alone the repository loses both places to another's middling neighbour.
# Two: measure_across's tuning queries (click) 0.665 to 0.693 MRR@10; more gave no more there.
LOOKAHEAD = 2


def _hit_key(hit: Hit) -> tuple[bool, bool, float]:
    """What the fusion compares of a hit where one model embedded every repository: facts that mean
    the same in every repository. A name the query spells and the model's own threshold come first,
    then the cosine similarity (retriever/bound.Bound.key: at most this for any hit of a branch)."""
    return (hit.name_match, hit.good_match is True, hit.similarity if hit.similarity is not None else 0.0)


def _head_key(hits: Sequence[Hit], at: int, comparable: bool) -> tuple[Any, ...]:
    """A repository's claim to the next place, its hits from `at` on left: the best `_hit_key` of
    its next LOOKAHEAD hits (so never above its best hit's); where the repositories' similarities
    are not comparable, its next hit's name match, then its rank in its repository."""
    if comparable:
        return max(_hit_key(h) for h in hits[at:at + LOOKAHEAD])
    return (hits[at].name_match, -at)


def fuse(answers: Sequence[Sequence[Hit]], k: int, comparable: bool = True) -> list[tuple[int, Hit]]:
    """The k best of several repositories' rankings as one: (which answer, hit), best first (pure).

    Each repository's own order is kept (its kind weights, its lexical and name evidence, its
    collapsing), and the next place goes to the repository whose next hits are best by `_head_key`:
    never by `score`, its lists fused within one repository (its first hit scores about 1.0 however
    poorly it matches, so a small repository with nothing relevant would flood the top). With one
    answer, that answer's own order. Ties go to the answer listed first."""
    return [(i, hit) for i, hit, _ in _fused_keys(answers, k, comparable)]


def _fused_keys(answers: Sequence[Sequence[Hit]], k: int, comparable: bool) -> list[tuple[int, Hit, tuple[Any, ...]]]:
    """`fuse`, each pick with the key that won it its place (what `_wanted` compares bounds with)."""
    at = [0] * len(answers)
    out: list[tuple[int, Hit, tuple[Any, ...]]] = []
    while len(out) < k:
        best: tuple[tuple[Any, ...], int] | None = None
        for i, hits in enumerate(answers):
            if at[i] < len(hits):
                key = _head_key(hits, at[i], comparable)
                if best is None or key > best[0]:
                    best = (key, i)
        if best is None:
            break
        key, i = best
        out.append((i, answers[i][at[i]], key))
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
        from codevouch.foundhits import pack_across

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
        they may have changed since; within one search, a guard that passed under the call's look
        at the work tree is not read again: gitreads.guard)."""
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
        return Repository(root, REMOTES.label(root))

    def _fused(self, request: SearchRequest, hide_excluded: bool = False) -> FoundHits:
        """The repositories searched (in parallel, unchecked), the answers fused, and only the hits
        that make the fused top k checked, each in its own working tree (`_checked_top`). Past
        BOUND_FROM repositories, each is first bounded (retriever/bound.py) and searched only when
        its bound could reach the fused top k: best bound first, until every key that won a place in
        the fusion is above each bound left, the same answer as searching every one."""
        from codevouch.retriever.queryencoder import QueryVectors  # heavy: the store
        from codevouch.worktree import gitio

        queries = QueryVectors()   # the query embedded once per model, for every repository
        # One look at each work tree and git directory for the call: its bound, its search, its
        # guard and its checks took the same look two to four times (worktree/git/unchanged.py).
        with self._lock, gitio.one_look():
            bounds = self._bounds(request, queries) if len(self.repos) > BOUND_FROM else {}
            got, fused, comparable = self._rounds(request, queries, bounds, hide_excluded)
            answers = [a for p in self.repos if isinstance(a := got.get(p), _Answer)]
            if request.validate:
                for a in answers:
                    a.record(request)
        each = [(a.repository, a.answer()) if isinstance(a := got.get(p), _Answer) else
                (Repository(bounds[p][1], REMOTES.label(bounds[p][1])), Hits([])) for p in self.repos
                if p in bounds or isinstance(got.get(p), _Answer)]
        skipped = [s for p in self.repos if isinstance(s := got.get(p), Skipped)]
        return FoundHits([Found(answers[i].repository, hit) for i, hit in fused], skipped,
                         BY_SIMILARITY if comparable else BY_RANK, each)

    def _rounds(self, request: SearchRequest, queries: QueryVectors, bounds: dict[Path, tuple[tuple[Any, ...], Path]],
                hide_excluded: bool) -> tuple[dict[Path, _Answer | Skipped], list[tuple[int, Hit]], bool]:
        """Each repository's answer (those the bounds left out: none), the fused top k checked (by
        the answers' position in the repositories' order), and whether similarities fused them: the
        unbounded repositories and the k best bounded first, then each whose bound the fused top k
        does not beat (`_wanted`), until none is left. Fewer first lowers the floor: the fusion then
        picks deeper into each answer (at 100 repositories, 3 first searched 11-70, k first 10-11)."""
        got: dict[Path, _Answer | Skipped] = {}
        todo = [p for p in self.repos if p not in bounds] + \
            sorted(bounds, key=lambda p: bounds[p][0], reverse=True)[:request.k]
        fused: list[tuple[int, Hit]] = []
        comparable = True
        while todo:
            got.update(zip(todo, searchpool.in_parallel([carried(lambda p=p: self._searched(p, request, queries))
                                               for p in todo])))
            answers = [a for p in self.repos if isinstance(a := got.get(p), _Answer)]
            models = {a.model for a in answers if a.hits}
            comparable = request.mode != "lexical" and len(models) <= 1 and None not in models
            if not (todo := _wanted(bounds, got, [a.left_hits() for a in answers], request.k, comparable)):
                fused = _checked_top(answers, request, comparable, hide_excluded)
                todo = _wanted(bounds, got, [a.left_hits() for a in answers], request.k, comparable)  # hidden hits lower it
        return got, fused, comparable

    def _bounds(self, request: SearchRequest, queries: QueryVectors) -> dict[Path, tuple[tuple[Any, ...], Path]]:
        """Each repository's bound (its key's best, as across._hit_key compares hits) and top,
        where one model embedded all those bounded; the others (no bound: search them to know)
        left out. On this thread, one ledger for all (retriever/bound.Bounds): a second thread, with
        a ledger of its own, made 100 bounds slower (most of a bound is Python)."""
        if request.mode == "lexical" or len(request.query.split()) <= 1:
            return {}      # no similarity, or a bare name (every repository may define it): search each
        found = self._bounded(self.repos, request, queries)
        if len({b.model for b, _ in found.values()}) > 1:
            return {}
        return {p: (b.key(threshold), b.root) for p, (b, threshold) in found.items()}

    def _bounded(self, repos: Sequence[Path], request: SearchRequest,
                 queries: QueryVectors) -> dict[Path, tuple[Bound, float | None]]:
        """The bound and good-match threshold of each of `repos` that has one, on this thread."""
        from codevouch import callreads
        from codevouch.retriever.bound import Bounds, Snapshot
        from codevouch.retriever.search import vector_reader

        found: dict[Path, tuple[Bound, float | None]] = {}
        bounds: Bounds | None = None
        team: list[tuple[Path, Index, Snapshot]] = []
        guarded: list[tuple[Path, Index]] = []
        for path in repos:
            if not self.call.path(path).exists():
                continue                # indexed elsewhere: searched by its recorded index
            try:
                guarded.append((path, self._index(path)))     # guarded before any git process of its own
            except CodevouchError:
                continue                # its search says what is wrong
            if len(guarded) == 1:
                _embed_ahead(guarded[0][1], request.query, queries)
        started = 0     # how many of `guarded` had their git status started ahead (Bounds.start)
        try:
            for n, (path, idx) in enumerate(guarded):
                try:
                    if bounds is None:
                        caller = callreads.search_caller(self.call, idx.overlay_limit, queries)
                        bounds = Bounds(self.index_dir, request, idx.settings, caller, vector_reader, idx._embedder)
                    # The next repositories' git status runs while this one is bounded (where no
                    # look stands for it: a work tree over 1,000 entries), not one after another.
                    for _, ahead in guarded[started:n + WORKERS]:
                        bounds.start(ahead.repo)
                    started = n + WORKERS
                    got = bounds.of(idx.repo)
                    if isinstance(got, Snapshot):
                        team.append((path, idx, got))
                    elif got is not None:
                        found[path] = (got, idx._match_threshold(got.model, got.root))
                except CodevouchError:
                    continue            # its search says what is wrong
            if bounds is not None and team:
                found.update(self._by_snapshots(bounds, team))
        finally:
            if bounds is not None:
                bounds.close()
        return found

    @staticmethod
    def _by_snapshots(bounds: Bounds, team: list[tuple[Path, Index, Snapshot]]) -> dict[Path, tuple[Bound, float | None]]:
        """The team-snapshot bounds of `team`, in parallel (each waits on the server twice)."""
        def one(idx: Index, asked: Snapshot) -> tuple[Bound, float | None] | None:
            try:
                got = bounds.by_snapshot(asked)
            except CodevouchError:
                return None             # its search says what is wrong
            return None if got is None else (got, idx._match_threshold(got.model, got.root))
        answers = searchpool.in_parallel([carried(lambda idx=idx, asked=asked: one(idx, asked)) for _, idx, asked in team])
        return {path: got for (path, _, _), got in zip(team, answers) if got is not None}

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


class _Answer:
    """One repository's search: its Hits in its own order, a checked copy of each that was checked
    (by position), and the Index that checks the rest (None: nothing left to check)."""

    def __init__(self, repository: Repository, hits: Hits, model: str | None, idx: Index | None) -> None:
        self.repository, self.hits, self.model, self.idx = repository, hits, model, idx
        self.checked: dict[int, Hit] = {}
        self.dropped: set[int] = set()     # excluded hits, when the search hides them

    def left_hits(self) -> list[Hit]:
        return [h for _, h in self.left()]

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
        searchpool.in_parallel([carried(lambda i=i, ns=ns: answers[i].check(ns)) for i, ns in todo.items()])
        if hide_excluded:
            for i in todo:
                answers[i].dropped.update(n for n, h in answers[i].checked.items() if h.verdict == Verdict.EXCLUDED)


def _wanted(bounds: dict[Path, tuple[tuple[Any, ...], Path]], searched: dict[Path, Any],
            answers: Sequence[Sequence[Hit]], k: int, comparable: bool) -> list[Path]:
    """The bounded repositories not searched yet whose hits could change the fused top k of the
    searched `answers` (pure): those whose bound is not below every key that won a place (a
    repository whose every key stays below each winning one never wins a place: a bound is at least
    each of its hits' `_hit_key`, so at least each of its `_head_key`s); all of them while fewer
    than k hits were found, or the fusion is by rank."""
    left = [p for p in bounds if p not in searched]
    picked = _fused_keys(answers, k, comparable)
    if not comparable or len(picked) < k:
        return left
    floor = min(key for _, _, key in picked)
    return [p for p in left if not bounds[p][0] < floor]


def _embed_ahead(idx: Index, query: str, queries: QueryVectors) -> None:
    """The query's vector started on the pool by the model `idx` is configured with, while this
    thread looks at the other repositories (NumPy's products release the GIL: ~14 ms of a warm
    search across 100 repositories ran before any bound could start). The first bound takes it
    when its branch was built with that model (QueryVectors keys vectors by the model's name);
    when not, it embeds with its own, and this one goes unused. The model as the bounds hold it
    (QueryVectors.held): the caller's own, or the configured one when some branch was built with it."""
    try:
        model = queries.held(idx._embedder if idx._embedder is not None else idx.model_name(), idx.index_dir)
    except CodevouchError:
        return                              # the searches say what is wrong
    if model is not None:
        queries.vector(model, query, lambda: searchpool.start(carried(lambda: model.embed_query(query))))


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
        return [Path(repo) for repo in ledger.repositories()]
    finally:
        ledger.close()


__all__ = ["BY_RANK", "BY_SIMILARITY", "MAX_REPOS", "Found", "FoundHits", "Indexes", "Navigated", "Repository", "Skipped",
           "fuse", "indexed_repositories"]
