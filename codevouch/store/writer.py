"""The one writer of an index directory: the storage protocol of a build, applied in its order.

A build plans and chunks (codevouch/indexer/build.py); what it made reaches the disk only here:

  1. the embedding cache (the build's own `ledger.put_vectors`, content-addressed: safe any time);
  2. the ids of the vectors about to be written, as `pending`;
  3. the vectors, in Chroma, under text hashes the ledger does not know yet (readers ignore them);
  4. one ledger transaction that makes the new state visible at once, with the lexical copy
     (tantivy, store/lexindex.py) staged inside it, before its COMMIT;
  5. what that made obsolete: older collections, lexical generations, unreferenced vectors.

A build killed anywhere leaves the previous state readable; what it left behind is in `pending`,
and the next writer's `collect_garbage` removes it (see the package docstring).

`index forget` (store/forget.py) writes through here too: one ledger transaction (`forget`), then
what it made garbage (`after_forget`), which the next writer removes if it was killed between.
"""
from __future__ import annotations

import functools
import shutil
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import replace
from datetime import datetime, timezone
from pathlib import Path

from codevouch.store import lease, lexical, lexindex, team
from codevouch.store.forget import DROP_ALL, Forgotten, forget_entries
from codevouch.store.ledger import Ledger
from codevouch.store.locks import writer_lock
from codevouch.store.naming import lex_key
from codevouch.store.records import BranchState, BuildChange, ChunkRecord, Committed
from codevouch.store.settings import DEFAULT, StoreSettings
from codevouch.store.vectors import VectorStore

# Called between the phases of a build ("planned" by the build; "vectors-written",
# "lexical-staged", "committed" here); tests raise from it to simulate a kill.
PhaseHook = Callable[[str], None]
VECTOR_BATCH = 2000


def utc_now() -> str:
    """The UTC time to the second, as the ledger stores `built_at` and `indexed_at`."""
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def stamped(change: BuildChange, at: str) -> BuildChange:
    """`change` with its branch state and its new chunks stamped as readable from `at`."""
    return replace(change, state=replace(change.state, built_at=at),
                   chunks=[replace(c, record=replace(c.record, indexed_at=at)) for c in change.chunks])


def _no_phase(_phase: str) -> None:
    return None


class Writer:
    """The ledger and the vector store of one index directory, held under its write.lock."""

    def __init__(self, index_dir: Path, ledger: Ledger, vectors: VectorStore) -> None:
        self.index_dir = index_dir
        self.ledger = ledger
        self.vectors = vectors
        # Vectors of earlier builds the ledger does not know (a killed build's uploads, a previous
        # build's garbage), left in place until this build has used what it can: they are keyed by
        # text hash, so each is valid whatever the ledger says, and a build that is killed again
        # and again still makes progress (it uploaded each time what the last one had already).
        self._leftover: dict[str, set[str]] = {}

    def collect_garbage(self, keep_for_reuse: bool = False) -> None:
        """Remove vectors the ledger does not know: leftovers of a killed or superseded build.
        `keep_for_reuse` (a build's start): only note them; commit_build takes from them the texts
        it needs instead of uploading those again, and finish() removes the rest."""
        ledger, vectors = self.ledger, self.vectors
        pending = self._drop_marked(ledger.pending())
        by_collection: dict[str, list[str]] = {}
        for name, cid in pending:
            by_collection.setdefault(name, []).append(cid)
        for name, ids in by_collection.items():
            known = ledger.space_texts(name, ids)
            orphans = [cid for cid in ids if cid not in known]
            if keep_for_reuse:
                self._leftover.setdefault(name, set()).update(orphans)
            elif orphans:
                vectors.delete(name, orphans)
        if not keep_for_reuse:
            ledger.clear_pending(pending)
            self._leftover.clear()

    def _drop_marked(self, pending: list[tuple[str, str]]) -> list[tuple[str, str]]:
        """Drop the collections a forget or a build marked DROP_ALL (no entry uses their space),
        with their tantivy copies; the other pending ids. A marked space that holds vectors again
        keeps its collection (a writer runs this first, so that does not happen)."""
        marks = [(name, cid) for name, cid in pending if cid == DROP_ALL]
        used = {b.space for b in self.ledger.branches()} if marks else set()
        for name, _ in marks:
            if self.ledger.space_size(name) == 0 and name not in used:
                self.vectors.drop(name)
                shutil.rmtree(lexindex.space_dir(self.index_dir, name), ignore_errors=True)
        if marks:
            self.ledger.clear_pending(marks)
        return [item for item in pending if item[1] != DROP_ALL]

    def forget(self, entries: Sequence[BranchState], on_phase: PhaseHook = _no_phase) -> Forgotten:
        """Remove branch entries in one ledger transaction (store/forget.py); `on_phase("staged")`
        runs inside it, before COMMIT. Then call `after_forget` (a server's snapshot first)."""
        with self.ledger.transaction() as db:
            done = forget_entries(db, entries)
            on_phase("staged")
        on_phase("committed")
        return done

    def after_forget(self, done: Forgotten) -> None:
        """What a forget made garbage: tantivy copies no entry names, the marked collections, and
        (without a server: readers of its last snapshot may need them until the next build) the
        vectors no remaining chunk uses."""
        for space in done.kept_spaces:
            self._prune_lexical(space)
        if self.vectors.settings.chroma_url:
            self._drop_marked(self.ledger.pending())
        else:
            self.collect_garbage()

    def finish(self) -> None:
        """The end of a build: leftovers it did not reuse are garbage now."""
        if self._leftover:
            self.collect_garbage()

    def claim(self, repo_id: str, space: str) -> Callable[[], None]:
        """In server mode, take the repository's builder lease (store/lease.py) before any
        write; returns what renews it (a no-op without a server). Taking over a lapsed lease of
        another builder removes that builder's vectors from the space: this ledger does not know them."""
        if not self.vectors.settings.chroma_url:
            return lambda: None
        ledger, vectors = self.ledger, self.vectors
        owner = ledger.builder_id()
        if lease.claim(vectors, repo_id, owner, self.index_dir).took_over:
            ids = vectors.document_ids(space)
            known = ledger.space_texts(space, ids)
            vectors.delete(space, [i for i in ids if i not in known])

        def renew() -> None:
            lease.claim(vectors, repo_id, owner, self.index_dir)
        return renew

    def publish(self, repo_id: str) -> None:
        """Server mode: readers on other machines see the new state from here on (store/team.py)."""
        team.publish(self.ledger, self.vectors, repo_id)

    def sync_lexical(self, coll: str) -> None:
        """Give the branch's committed state a tantivy copy when it lacks one (an index made by an
        older codevouch, a deleted copy); builds that change the state write theirs before the commit."""
        state = self.ledger.branch(coll)
        copy = self.ledger.copy_of(state) if state is not None else None
        if copy is None:
            return
        lexindex.stage(self.index_dir, copy, None, (), (), functools.partial(self.ledger.lexical_docs, copy.space, coll))
        self._prune_lexical(copy.space)

    def commit_build(self, change: BuildChange, model: str, chunk_texts: Mapping[str, str],
                     on_phase: PhaseHook = _no_phase, defines: Mapping[str, Sequence[str]] | None = None,
                     clock: Callable[[], str] = utc_now) -> Committed:
        """Steps 2-5 of the protocol for one branch. `change.chunks` are the chunks new to the
        space (their vectors in the embedding cache of `model`), `chunk_texts` each one's text by
        chunk id (for its lexical row; never stored), `defines` the names the chunker's parse says
        it defines, by chunk id (lexical.document). `change.lexical` is filled in here, with the
        rows the space lacks. The branch's `built_at` and the new chunks' `indexed_at` are `clock()`
        just before the ledger's commit: when the build became readable, not when it began (a long
        build would say it was built minutes before anyone could read it)."""
        ledger, space = self.ledger, change.state.space
        assert space is not None, "a build commits into a space"
        records = [c.record for c in change.chunks]
        self._write_new_vectors(model, space, records)
        on_phase("vectors-written")

        lexical_docs = self._lexical_docs(space, records, chunk_texts, defines)
        previous = ledger.branch(change.state.coll)
        stage_lexical, previous_copy = self._lexical_stage(change, previous, records, on_phase)
        done = ledger.commit(replace(stamped(change, clock()), lexical=lexical_docs), before_commit=stage_lexical)
        on_phase("committed")
        self._clean_after_commit(space, done, previous, previous_copy)
        return done

    def _write_new_vectors(self, model: str, space: str, records: Sequence[ChunkRecord]) -> None:
        """Steps 2-3: note as `pending` the texts of `records` the space lacks, then write their
        vectors, taking from this writer's leftovers the ones an earlier build already uploaded."""
        ledger = self.ledger
        # One vector per distinct text in the space: only texts it lacks are written.
        texts = list(dict.fromkeys(r.text_hash for r in records))
        held = ledger.space_texts(space, texts)
        new_texts = [h for h in texts if h not in held]
        ledger.add_pending([(space, h) for h in new_texts])
        leftover = self._leftover.get(space)
        reused = self.vectors.existing(space, [h for h in new_texts if h in leftover]) if leftover else set()
        if reused:
            assert leftover is not None
            leftover.difference_update(reused)     # the ledger will know them: not garbage
        self._write_vectors(model, space, [h for h in new_texts if h not in reused])

    def _lexical_docs(self, space: str, records: Sequence[ChunkRecord], chunk_texts: Mapping[str, str],
                      defines: Mapping[str, Sequence[str]] | None) -> list[tuple[str, str]]:
        """The lexical rows (key, document) of `records` the space lacks (commit_build's `change.lexical`)."""
        docs = {lex_key(r.path, r.symbol, r.text_hash): r for r in records}
        have = self.ledger.space_lex_keys(space, docs)
        named = defines or {}
        return [(key, lexical.document(chunk_texts[r.id], r.path, r.symbol, named.get(r.id, ())))
                for key, r in docs.items() if key not in have]

    def _clean_after_commit(self, space: str, done: Committed, previous: BranchState | None,
                            previous_copy: lexindex.Copy | None) -> None:
        """Step 5: remove what the commit made obsolete (older collections and their tantivy
        copies, lexical copies no branch uses, and, without a server, unreferenced vectors)."""
        for name in done.old_collections:
            self.vectors.drop(name)
            # The tantivy copies of a space (or older collection) no branch uses any more.
            shutil.rmtree(lexindex.space_dir(self.index_dir, name), ignore_errors=True)
        self._prune_lexical(space, previous_copy)
        if previous is not None and previous.space not in (None, space) and previous.space not in done.old_collections:
            self._prune_lexical(previous.space)    # the branch left that space: its copy there goes
        if not self.vectors.settings.chroma_url:
            # On a server, readers of the last published snapshot may still need these vectors:
            # the next build's start collects them.
            self.collect_garbage()

    def _lexical_stage(self, change: BuildChange, previous: BranchState | None, records: Sequence[ChunkRecord],
                       on_phase: PhaseHook) -> tuple[Callable[[list[str], str], None], lexindex.Copy | None]:
        """What writes the branch's new tantivy copy inside the commit (Ledger.commit's
        `before_commit`), and the copy it starts from (None: written whole).

        The copy holds the branch's live documents only (lexindex.py): what left the live set and
        what joined it, whether new to the space or not (a file another branch has, one brought
        back from history). A lexical key is of one path, so the files the build touches are the
        whole difference."""
        ledger, space, coll = self.ledger, change.state.space, change.state.coll
        assert space is not None
        stamp = ledger.branch_stamp(previous) if previous is not None and previous.space == space else None
        touched = sorted({*(r.path for r in change.files), *change.deleted_paths, *change.dropped_paths,
                          *(r.path for r in records)})
        before = ledger.live_lex_keys(space, coll, touched) if stamp is not None else set()

        def stage_lexical(_removed: list[str], new_stamp: str) -> None:
            after = ledger.live_lex_keys(space, coll, touched) if stamp is not None else set()
            lexindex.stage(self.index_dir, lexindex.Copy(space, coll, new_stamp), stamp, before - after,
                           sorted(after - before), functools.partial(ledger.lexical_docs, space, coll))
            on_phase("lexical-staged")
        return stage_lexical, lexindex.Copy(space, coll, stamp) if stamp is not None else None

    def _write_vectors(self, model: str, name: str, hashes: Sequence[str]) -> None:
        """Upsert the texts' cached vectors under their hashes, a batch at a time, so memory stays
        bounded (a vector as Python floats costs ~12 KB; 100k of them at once would cost over a GB)."""
        for start in range(0, len(hashes), VECTOR_BATCH):
            part = hashes[start:start + VECTOR_BATCH]
            vecs = self.ledger.cached_vectors(model, part)
            self.vectors.upsert(name, part, [vecs[h] for h in part])

    def _prune_lexical(self, space: str, previous: lexindex.Copy | None = None) -> None:
        """Keep each branch's current copy in the space, and `previous` (see lexindex.prune)."""
        keep = [copy for state in self.ledger.branches() if state.space == space
                and (copy := self.ledger.copy_of(state)) is not None]
        lexindex.prune(self.index_dir, space, [*keep, *([previous] if previous is not None else [])])


@contextmanager
def open_writer(index_dir: Path, wait: float, settings: StoreSettings = DEFAULT) -> Iterator[Writer]:
    """The index's one writer: waits up to `wait` seconds for write.lock (IndexLocked after).
    `settings`: the caller's (store/settings.py): its vectors, its lease."""
    with writer_lock(index_dir, wait):
        ledger = Ledger(index_dir)
        try:
            with VectorStore(index_dir, settings=settings) as vectors:
                yield Writer(index_dir, ledger, vectors)
        finally:
            ledger.close()
