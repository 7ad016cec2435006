"""`codevouch index build`: plan, then apply, for each requested branch of a repository.

This module plans and chunks; the store applies (codevouch/store/writer.py: embedding cache ->
pending ids -> Chroma vectors -> one ledger transaction that makes the new state visible ->
removal of obsolete vectors).
"""
from __future__ import annotations

import hashlib
import json
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypedDict

from codevouch import environment
from codevouch.embedding import CHUNK_TOKEN_BUDGET, Embedder, build_encoder, token_counter
from codevouch.errors import DiskFull, InputError, disk_full, is_disk_full
from codevouch.indexer import Progress, embedtext
from codevouch.indexer.branches import BranchFilter, branch_filter, select_branches
from codevouch.indexer.chunker import Chunk, chunk_text
from codevouch.indexer.filetext import decode, skip_reason
from codevouch.indexer.plan import RefreshPlan, plan_refresh
from codevouch.printable import has_lone_surrogate
from codevouch.retriever.settings import DEFAULT, Settings
from codevouch.store import (
    BranchState,
    BuildChange,
    ChunkRecord,
    FileRow,
    Ledger,
    NewChunk,
    Outdated,
    chunk_id,
    collection_base,
    space_name,
)
from codevouch.store.settings import DEFAULT as STORE_DEFAULT
from codevouch.store.settings import StoreSettings
from codevouch.store.writer import PhaseHook, Writer, open_writer, utc_now
from codevouch.syntax import languages
from codevouch.vocabulary import Kind
from codevouch.worktree import gitio, gitreads
from codevouch.worktree.config import load_repo_config
from codevouch.worktree.identity import RepoIdentity, identify
from codevouch.worktree.rules import Rules, classify, load_rules_text

if TYPE_CHECKING:
    # For the type checker only (typing.Unpack is 3.11+): no runtime dependency on typing_extensions.
    from typing_extensions import Unpack

EMBED_BATCH = 64
# Texts per embedding call, and per progress report: a 64-text batch took 25 s at 2.6 chunks/s.
# 16 cost about 7% of the throughput of 64 (paired rounds at load ~2: 0.89-1.14x); 32 about none.
PROGRESS_BATCH = 32


@dataclass(frozen=True)
class BranchSummary:
    repo: str
    branch: str
    commit: str
    commit_date: str
    files: int              # files in the branch's tree
    chunks: int             # live chunks after the build
    embedded: int           # chunk texts embedded by this build
    reused: int             # chunks whose vector came from the cache
    deleted: int            # files that left the branch in this build (kept as history)
    indexed_files: int      # files read and chunked by this build
    skipped: dict[str, int] = field(default_factory=dict)       # reason -> files
    excluded: dict[str, int] = field(default_factory=dict)      # kind (rule) -> files
    skipped_files: list[dict[str, str]] = field(default_factory=list)
    noop: bool = False
    seconds: float = 0.0
    # Branches --all-branches found but did not take (over CODEVOUCH_MAX_BRANCHES): the build's,
    # the same on each of its branches.
    branches_left_out: int = 0
    # Languages whose grammar failed to load (a wheel missing or broken) -> why: their files were
    # cut into text windows with no symbols, and the build went on.
    text_only: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class _Chunked:
    """A new chunk: its record, its text, and the text the model embeds for it, made once here so
    that the record's text_hash is the hash of exactly what is embedded. Neither text is stored."""
    record: ChunkRecord
    text: str
    embedded: str
    defines: tuple[str, ...] = ()   # Chunk.defines: for its lexical document


@dataclass(frozen=True)
class _Work:
    """What one build of a branch did, for its summary (BranchSummary's counts): chunk texts
    embedded, chunks whose vector was reused, files that left the branch, files read and
    chunked, whether it was a no-op, and how long it took. One record, so that the no-op and a
    real build hand the summary the same fields."""
    embedded: int = 0
    reused: int = 0
    deleted: int = 0
    indexed: int = 0
    noop: bool = False
    seconds: float = 0.0


@dataclass(frozen=True)
class _FileResult:
    row: FileRow
    chunks: list[_Chunked]   # new chunks
    shared: int = 0          # chunks another branch already indexed (reused as is)


def text_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def resolve_branches(repo: Path, branches: Sequence[str], all_branches: bool,
                     patterns: BranchFilter | None = None,
                     most: int = environment.MAX_BRANCHES.default) -> tuple[list[str], int]:
    """The branches to build, and how many --all-branches found but left out: named ones as
    given; with all_branches every local branch that the include/exclude patterns keep, at most
    `most` of them (CODEVOUCH_MAX_BRANCHES: a 500,000-entry packed-refs made a build of all of
    them hang), the most recently committed, in name order."""
    if all_branches:
        names = gitio.local_branches(repo, newest_first=True)
        if not names:
            raise gitio.NoCommits(f"{repo} has no branches with commits; commit something first.")
        kept = select_branches(names, patterns or BranchFilter())
        if not kept:
            shown = sorted(names[:10])
            raise InputError(f"no branch of {repo} matches the include/exclude patterns "
                             f"({', '.join(shown)}{' ...' if len(names) > 10 else ''}); loosen them.")
        return sorted(kept[:most]), max(0, len(kept) - most)
    if branches:
        return list(dict.fromkeys(branches)), 0
    return [gitio.current_branch(repo)], 0


def rules_at(reader: gitio.BlobReader, tree: dict[str, gitio.TreeEntry]) -> Rules:
    """The exclusion rules as committed on the branch being indexed."""
    def text(path: str) -> str | None:
        entry = tree.get(path)
        data = reader.read(entry.blob_sha) if entry else None
        return None if data is None else decode(data)
    return load_rules_text(text(".codevouch.toml"), text("pyproject.toml"))


class BranchChoice(TypedDict, total=False):
    """Which branches a build indexes, as build_index's keywords (the form Index.build, the
    nightly and the git hooks call it with): `branches` by name (default: the current one), or
    with `all_branches` every local branch that the `include_branches`/`exclude_branches` globs
    keep (when not given, the repository's `[branches]` do). The globs only choose among all
    branches, so the four travel, and are checked, together (_chosen_branches)."""
    branches: Sequence[str]
    all_branches: bool
    include_branches: Sequence[str] | None
    exclude_branches: Sequence[str] | None


class BuildKnobs(TypedDict, total=False):
    """How a build runs, as build_index's and build_repos' keywords (each one's default in
    `_How`): `wait` seconds for another build's writer lock, `progress` (files done, files in
    all, a path), `on_phase` (called at each commit phase: the crash tests' hook), `settings`
    (its build knobs, merge_target and embed_context, say how files are chunked and what is
    embedded: codevouch/retriever/settings.py), `store` (the caller's server, busy timeout and
    lease: codevouch/store/settings.py), `max_branches` (the most branches `all_branches` takes:
    the caller's CODEVOUCH_MAX_BRANCHES), `clock` (the UTC time, as the ledger writes it, that
    stamps a branch when its build becomes readable: a test hands in its own), `numpy_texts`
    (the most new texts a branch's build embeds without torch: the caller's
    CODEVOUCH_BUILD_NUMPY_TEXTS; embedding.build_encoder)."""
    wait: float
    progress: Progress | None
    on_phase: PhaseHook | None
    settings: Settings
    store: StoreSettings
    max_branches: int
    clock: Callable[[], str]
    numpy_texts: int


class BuildOptions(BranchChoice, BuildKnobs, total=False):
    """build_index's keywords: which branches (BranchChoice) and how (BuildKnobs)."""


@dataclass(frozen=True)
class _How:
    """BuildKnobs with their defaults, as the build passes them down."""
    wait: float = 0
    progress: Progress | None = None
    on_phase: PhaseHook | None = None
    settings: Settings = DEFAULT
    store: StoreSettings = STORE_DEFAULT
    max_branches: int = environment.MAX_BRANCHES.default
    clock: Callable[[], str] = utc_now
    numpy_texts: int = environment.BUILD_NUMPY_TEXTS.default


def build_index(repo_path: Path | str, index_dir: Path, embedder: Embedder,
                **options: Unpack[BuildOptions]) -> list[BranchSummary]:
    """Build the branches `options` names (BranchChoice; default: the current one), as its
    BuildKnobs say. A misspelt keyword is a TypeError, never ignored."""
    gitreads.guard(repo_path)      # before git (the nightly's --repos comes here, not through Index)
    given: dict[str, Any] = dict(options)
    choice = {key: given.pop(key) for key in BranchChoice.__optional_keys__ if key in given}
    how = _How(**given)
    ident = identify(repo_path)
    names, left_out = _chosen_branches(ident.root, how.max_branches, **choice)
    for name in names:      # an unknown branch fails here, before the writer lock is waited for
        gitio.check_branch_name(ident.root, name)
        gitio.branch_commit(ident.root, name)
    try:
        built = _build_locked(ident, names, index_dir, embedder, how)
        return [replace(s, branches_left_out=left_out) for s in built] if left_out else built
    except DiskFull:
        raise
    except Exception as exc:
        # SQLite's `database or disk is full` (or the failed rollback after it), Chroma's copy of it,
        # ENOSPC: every write is a transaction, so nothing changed; say that, not a crash (exit 70).
        if is_disk_full(exc):
            raise disk_full(index_dir, exc) from exc
        raise


def _chosen_branches(root: Path, most: int, branches: Sequence[str] = (), all_branches: bool = False,
                     include_branches: Sequence[str] | None = None,
                     exclude_branches: Sequence[str] | None = None) -> tuple[list[str], int]:
    """The branch names a BranchChoice asks for in the repository at `root` (at most `most` of
    all branches), and how many all_branches left out; InputError for globs given without
    all_branches."""
    if (include_branches or exclude_branches) and not all_branches:
        raise InputError("--include-branch and --exclude-branch choose among --all-branches; add "
                         "--all-branches, or name the branches with --branch.")
    patterns = branch_filter(load_repo_config(root), include_branches, exclude_branches)
    return resolve_branches(root, branches, all_branches, patterns, most)


def _build_locked(ident: RepoIdentity, names: Sequence[str], index_dir: Path, embedder: Embedder,
                  how: _How) -> list[BranchSummary]:
    """build_index's work under the writer lock."""
    from codevouch.store.storecheck import check_store, vector_spaces

    settings = how.settings
    with open_writer(index_dir, how.wait, how.store) as writer:
        # A damaged, emptied or missing vector store is named (with --repair), never "up to date".
        check_store(index_dir, vector_spaces(writer.ledger), writer.vectors.settings.chroma_url)
        # Read the heads again once the lock is held: a build that queued behind another (a git
        # hook's, say) builds the branches as they are now, so two queued builds can never
        # land in the wrong order and leave the older commit indexed.
        commits = {name: gitio.branch_commit(ident.root, name) for name in names}
        claim = writer.claim(ident.id, space_name(ident.id, embedder.name, settings.embed_context))
        writer.collect_garbage(keep_for_reuse=True)
        summaries = []
        for name in names:
            claim()  # renewed before each branch: a long build keeps its lease
            summaries.append(_build_branch(ident, name, commits[name], writer, embedder, how))
        if writer.vectors.settings.chroma_url:
            claim()
            writer.publish(ident.id)
            claim()
        writer.finish()
        return summaries


def branch_key(ledger: Ledger, ident: RepoIdentity, branch: str) -> str:
    """The entry this clone's build of `branch` writes. The shared one (repository id + branch)
    unless another clone of the repository on this machine holds it: then this clone's own, so
    that two clones' builds never overwrite each other's entry (the last one won, and the first
    clone's search named a commit it did not have). A clone takes the shared entry over when the
    clone that held it is gone from its path, and only when it holds the commit that entry was built
    at or one of its sampled ancestors (as a search asks, Ledger.find_branch): a fork that shares
    only the root commit builds its own entry, never on top of another project's (whose files would
    stay in it as history). Searches find their clone's entry first (Ledger.find_branch)."""
    own = collection_base(ident.id, branch, str(ident.root))
    if ledger.branch(own) is not None:
        return own
    shared = collection_base(ident.id, branch)
    holder = ledger.branch(shared)
    if holder is None or holder.repo == str(ident.root):
        return shared
    if not Path(holder.repo).is_dir() and gitio.has_any_commit(ident.root, (holder.commit, *holder.ancestors)):
        return shared
    return own


@dataclass(frozen=True)
class _Target:
    """The branch commit a build indexes, and the tags every record of it carries."""
    ident: RepoIdentity
    branch: str
    commit: str
    commit_date: str
    embedder: str
    settings: Settings
    base: str           # the branch's entry (branch_key)

    @property
    def repo(self) -> str:
        return str(self.ident.root)

    @property
    def space(self) -> str:
        return space_name(self.ident.id, self.embedder, self.settings.embed_context)

    def chunked(self, path: str, blob_sha: str, ordinal: int, chunk: Chunk, kind: str,
                language: str) -> _Chunked:
        embedded = embedtext.embedded_text(path, chunk.symbol, chunk.text, self.settings.embed_context)
        record = ChunkRecord(
            id=chunk_id(path, blob_sha, ordinal), repo=self.repo, path=path, branch=self.branch,
            commit=self.commit, commit_date=self.commit_date, symbol=chunk.symbol,
            start_line=chunk.start_line, end_line=chunk.end_line, indexed_at="",   # stamped at the commit
            blob_sha=blob_sha, text_hash=text_hash(embedded), kind=kind, language=language, status="live",
            declaration=chunk.declaration)
        return _Chunked(record, chunk.text, embedded, chunk.defines)


def _build_branch(ident: RepoIdentity, branch: str, commit: str, writer: Writer,
                  embedder: Embedder, how: _How) -> BranchSummary:
    started = time.monotonic()
    ledger = writer.ledger
    repo = ident.root
    progress, settings = how.progress, how.settings
    on_phase: PhaseHook = how.on_phase or (lambda _phase: None)
    target = _Target(ident, branch, commit, gitio.commit_dates(repo, [commit])[commit], embedder.name,
                     settings, branch_key(ledger, ident, branch))
    state = ledger.branch(target.base)
    outdated = _own_outdated(ledger, ledger.outdated(ident.id, target.repo, branch), target)
    tree, others = gitio.tree_entries(repo, commit)
    tree, unnamed = _utf8_named(tree)
    ancestors = gitio.first_parent_samples(repo, commit)   # what lets a clone behind the build be answered

    with gitio.blob_reader(repo) as reader:
        rules = rules_at(reader, tree)
        attr_files = _attribute_files(tree)
        rules_json = _rules_json(rules, attr_files)
        full = _reads_all(state, rules_json, embedder.name, target.space)
        old_files = ledger.files(target.base)
        if _up_to_date(state, full, commit, ancestors, outdated) and state is not None and state.repo == target.repo:
            # (An entry taken over from a clone gone from its path is written again, with this path.)
            writer.sync_lexical(target.base)
            return _summary(target, tree, [*others, *unnamed], old_files,
                            _Work(noop=True, seconds=time.monotonic() - started))
        plan = plan_refresh(old_files, tree, full)
        # Files another branch already indexed at the same blob are not chunked again.
        shared = ledger.blob_chunks(target.space, [(p, tree[p].blob_sha) for p in plan.index])
        marks = gitio.linguist_marks(repo, plan.index, commit) if attr_files else {}
        results = _read_and_chunk(reader, plan, tree, rules, target, shared, progress, marks)
    on_phase("planned")

    new_chunks = [NewChunk(ordinal, c.record) for res in results for ordinal, c in enumerate(res.chunks)]
    embedded = _embed_new(ledger, embedder, results, progress, how.numpy_texts)

    writer.commit_build(BuildChange(
        state=BranchState(target.base, target.repo, branch, commit, target.commit_date, "",   # stamped at the commit
                          embedder.name, rules_json, ident.id, ident.remote, target.space, ancestors),
        chunks=new_chunks,
        files=[res.row for res in results],
        deleted_paths=plan.to_history,
        # History records name the last commit at which the file still existed.
        gone_at=(state.commit, state.commit_date) if state else None,
        dropped_paths=plan.drop,
        outdated=outdated), embedder.name, {c.record.id: c.text for res in results for c in res.chunks}, on_phase,
        {c.record.id: c.defines for res in results for c in res.chunks if c.defines}, how.clock)
    return _summary(target, tree, [*others, *unnamed], ledger.files(target.base), _Work(
        embedded=embedded, reused=len(new_chunks) - embedded + sum(res.shared for res in results),
        deleted=len(plan.to_history) + len(plan.drop), indexed=len(results), noop=False,
        seconds=time.monotonic() - started))


# Git allows any bytes but NUL and "/" in a name; the ledger stores names as UTF-8 text, and a
# name that is not UTF-8 arrives from git with its bytes as lone surrogates (surrogateescape).
NOT_UTF8 = "file name is not UTF-8 (not indexed; shown with \\x escapes)"


def _utf8_named(tree: dict[str, gitio.TreeEntry]) -> tuple[dict[str, gitio.TreeEntry], list[gitio.TreeEntry]]:
    """The tree's files whose names are UTF-8, and the others: these are skipped with a reason,
    never indexed under a name no file has, and never a crash of the build."""
    bad = [e for p, e in tree.items() if has_lone_surrogate(p)]
    if not bad:
        return tree, []
    return {p: e for p, e in tree.items() if not has_lone_surrogate(p)}, bad


def shown_name(path: str) -> str:
    """A name as text that says exactly which bytes it has: its non-UTF-8 bytes as \\xNN."""
    return path.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def _own_outdated(ledger: Ledger, outdated: Outdated | None, target: _Target) -> Outdated | None:
    """The branch as an older release laid it out, when it is this entry's to move (not the
    entry of another clone of the repository, which that clone's build moves)."""
    if outdated is None or outdated.coll == target.base:
        return outdated
    holder = ledger.branch(outdated.coll)
    return outdated if holder is None or holder.repo == target.repo or not Path(holder.repo).is_dir() else None


def _attribute_files(tree: dict[str, gitio.TreeEntry]) -> list[tuple[str, str]]:
    """(path, blob id) of every .gitattributes in the tree, in path order."""
    return sorted((p, e.blob_sha) for p, e in tree.items() if p.rsplit("/", 1)[-1] == ".gitattributes")


def _rules_json(rules: Rules, attr_files: list[tuple[str, str]]) -> str:
    """The branch's rules as its state records them. .gitattributes are rules too: when they
    change, every file is classified again."""
    return json.dumps({**rules.to_json(), **({"gitattributes": attr_files} if attr_files else {})}, sort_keys=True)


def _reads_all(state: BranchState | None, rules_json: str, embedder: str, space: str) -> bool:
    """Whether every file of the branch is read again (no I/O). A branch in another space
    (another model, another embedded text, or an older release's keying) is: its chunks come
    from the new space or are made anew, their vectors from the cache when it holds their
    embedded text. So is one whose rules changed."""
    return state is None or state.rules_json != rules_json or state.embedder != embedder or state.space != space


def _up_to_date(state: BranchState | None, full: bool, commit: str, ancestors: tuple[str, ...],
                outdated: Outdated | None) -> bool:
    """Whether the branch's index is already what a build would make (no I/O): its commit, in
    its space, under its rules, laid out by this release, with its sampled ancestors (an entry an
    older release built has none: its next build writes them, reading no file again)."""
    return (state is not None and not full and state.commit == commit and state.ancestors == ancestors
            and outdated is None)


def _embed_new(ledger: Ledger, embedder: Embedder, results: list[_FileResult], progress: Progress | None,
               numpy_texts: int = environment.BUILD_NUMPY_TEXTS.default) -> int:
    """Embed the chunk texts no cache holds (the ledger's, then the overlay's); how many were.
    At most `numpy_texts` of them: without torch (embedding.build_encoder)."""
    texts = {c.record.text_hash: c.embedded for res in results for c in res.chunks}
    known = ledger.cached_hashes(embedder.name, texts)
    known |= _from_overlay_cache(ledger, embedder.name, [h for h in texts if h not in known])
    items = [(h, t) for h, t in texts.items() if h not in known]
    return _embed(build_encoder(embedder, len(items), numpy_texts), embedder.name, ledger, items, progress)


def _read_and_chunk(reader: gitio.BlobReader, plan: RefreshPlan, tree: dict[str, gitio.TreeEntry],
                    rules: Rules, target: _Target, shared: dict[tuple[str, str], tuple[int, str]],
                    progress: Progress | None, marks: dict[str, str] | None = None) -> list[_FileResult]:
    marks = marks or {}
    count_tokens = token_counter()
    results: list[_FileResult] = []
    for n, path in enumerate(plan.index, 1):
        if progress:
            progress(n, len(plan.index), "chunking")
        entry = tree[path]
        results.append(_read_file(reader, entry, rules, target, count_tokens,
                                  shared.get((path, entry.blob_sha)), marks.get(path)))
    return results


def _read_file(reader: gitio.BlobReader, entry: gitio.TreeEntry, rules: Rules, target: _Target,
               count_tokens: Callable[[str], int], shared: tuple[int, str] | None = None,
               mark: str | None = None) -> _FileResult:
    """One file's row and chunks; a file that yields no chunks says why (never dropped silently)."""
    def without_chunks(kind: str, rule: str | None, status: str, reason: str) -> _FileResult:
        return _FileResult(FileRow(entry.path, entry.blob_sha, kind, rule, "", status, reason, 0), [])

    data = reader.read(entry.blob_sha)
    if data is None:
        return without_chunks(Kind.SOURCE, None, "skipped", "unreadable blob")
    reason = skip_reason(data, rules)
    # A skipped file's head is enough to classify it (generated markers sit at the top).
    text = decode(data) if reason is None else decode(data[:2048])
    found = classify(entry.path, text, rules, mark)
    if found.excluded:
        return without_chunks(found.kind, found.rule, "excluded", found.rule or found.kind)
    if reason is not None:
        return without_chunks(found.kind, found.rule, "skipped", reason)
    if shared is not None:
        # Classified by this branch's rules (its kind is this branch's), chunked by another.
        count, lang = shared
        return _FileResult(FileRow(entry.path, entry.blob_sha, found.kind, found.rule, lang, "live", None,
                                   count), [], shared=count)
    chunks, language = chunk_text(text, entry.path, count_tokens, CHUNK_TOKEN_BUDGET,
                                  merge_target=target.settings.merge_target)
    if not chunks:
        return without_chunks(found.kind, found.rule, "skipped", "no content to index")
    language = language or "text"
    made = [target.chunked(entry.path, entry.blob_sha, ordinal, ch, found.kind, language)
            for ordinal, ch in enumerate(chunks)]
    return _FileResult(FileRow(entry.path, entry.blob_sha, found.kind, found.rule, language, "live", None,
                               len(made)), made)


def _from_overlay_cache(ledger: Ledger, model: str, hashes: Sequence[str]) -> set[str]:
    """Texts a search's working-tree overlay already embedded (store/overlaycache.py): their
    vectors move into the ledger's cache, so the build does not embed them again."""
    from codevouch.store import overlaycache

    found: dict[str, Sequence[float]] = dict(overlaycache.get(ledger.path.parent, model, hashes)) if hashes else {}
    if found:
        ledger.put_vectors(model, found)
    return set(found)


def _embed(encode: Callable[[Sequence[str]], list[list[float]]], model: str, ledger: Ledger,
           items: list[tuple[str, str]], progress: Progress | None) -> int:
    """Embed what the cache lacks with `encode` (`model`'s), saving each batch so a killed build
    keeps its work, and saying how far it got every PROGRESS_BATCH texts."""
    # Similar lengths in a batch means little padding: the model's cost follows the longest text.
    items = sorted(items, key=lambda item: len(item[1]))
    done = 0
    for part in interleaved([items[i:i + EMBED_BATCH] for i in range(0, len(items), EMBED_BATCH)]):
        vecs: list[Sequence[float]] = []
        for at in range(0, len(part), PROGRESS_BATCH):
            piece = part[at:at + PROGRESS_BATCH]
            vecs += encode([text for _, text in piece])
            done += len(piece)
            if progress:
                progress(done, len(items), "embedding")
        ledger.put_vectors(model, {h: v for (h, _), v in zip(part, vecs)})
    return len(items)


def interleaved(batches: Sequence[list[tuple[str, str]]]) -> list[list[tuple[str, str]]]:
    """Batches sorted by their texts' length, taken shortest, longest, second shortest, ...: each
    batch keeps texts of like length (little padding), and the run's rate stays level, so the
    estimate of the time left holds from its first line (short texts first made it fall, then
    rise: 45, 25, then 32 minutes)."""
    out, low, high = [], 0, len(batches) - 1
    while low <= high:
        out.append(batches[low])
        if high != low:
            out.append(batches[high])
        low, high = low + 1, high - 1
    return out


def _summary(target: _Target, tree: dict[str, gitio.TreeEntry], others: Sequence[gitio.TreeEntry],
             files: dict[str, FileRow], work: _Work) -> BranchSummary:
    current = [f for f in files.values() if f.status != "deleted"]
    # Symlinks and submodules are never read (a link may point outside the repository), but
    # they are listed: a tree of 24 entries must not silently report 19 files.
    skipped_list = [(f.path, f.reason or "unknown") for f in current if f.status == "skipped"]
    skipped_list += [(shown_name(e.path), _not_a_file(e)) for e in others]
    excluded = Counter(f"{f.kind} ({f.rule})" for f in current if f.status == "excluded")
    return BranchSummary(
        repo=target.repo, branch=target.branch, commit=target.commit, commit_date=target.commit_date,
        files=len(tree) + len(others),
        chunks=sum(f.chunks for f in current if f.status == "live"), embedded=work.embedded, reused=work.reused,
        deleted=work.deleted, indexed_files=work.indexed, skipped=dict(Counter(r for _, r in skipped_list)),
        excluded=dict(excluded), skipped_files=[{"path": p, "reason": r} for p, r in skipped_list],
        noop=work.noop, seconds=round(work.seconds, 3), text_only=languages.unavailable())


def _not_a_file(entry: gitio.TreeEntry) -> str:
    if has_lone_surrogate(entry.path):
        return NOT_UTF8
    if entry.mode == "120000":
        return "symlink (links are not followed)"
    if entry.mode == "160000":
        return "submodule (index it as a repository of its own)"
    return f"not a regular file (git mode {entry.mode})"
