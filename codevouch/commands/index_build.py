"""`codevouch index build`: index the committed content of branches, of one repository or many."""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Optional

import typer

from codevouch import environment
from codevouch.commands.common import (
    IndexOpt,
    JsonOpt,
    crash_logged,
    exit_code,
    fail,
    message_line,
    open_index,
    print_json,
    progress,
    usage,
)
from codevouch.commands.exits import EXIT_CRASH, EXIT_OK, EXIT_REPOS_FAILED
from codevouch.commands.invocation import echo, invocation, stderr
from codevouch.commands.progress import ProgressLines
from codevouch.errors import CodevouchError
from codevouch.printable import plural

if TYPE_CHECKING:
    from codevouch.indexer.build import BranchSummary
    from codevouch.indexer.manyrepos import RepoOutcome, RepoSpec, Shard


def index_build(
    repo: Annotated[Optional[list[Path]], typer.Option(
        "--repo", metavar="PATH", help="Repository path (default: the current directory). Repeat it to build several "
        "repositories in one run: each gets the branch flags below.")] = None,
    repos: Annotated[Optional[Path], typer.Option(
        "--repos", metavar="FILE", help="A TOML file listing repositories, each with its own branches ([[repo]] tables "
        "with path, branches or all_branches, include_branches, exclude_branches; see docs/NIGHTLY.md).")] = None,
    branch: Annotated[Optional[list[str]], typer.Option(
        "--branch", "-b", metavar="BRANCH", help="Branch to index (repeatable; default: the current branch).")] = None,
    all_branches: Annotated[bool, typer.Option("--all-branches", help="Index every local branch.")] = False,
    include_branch: Annotated[Optional[list[str]], typer.Option(
        "--include-branch", metavar="GLOB", help="With --all-branches: only branches matching this glob (repeatable; "
        "replaces the config's [branches] include).")] = None,
    exclude_branch: Annotated[Optional[list[str]], typer.Option(
        "--exclude-branch", metavar="GLOB", help="With --all-branches: skip branches matching this glob (repeatable; "
        "replaces the config's [branches] exclude).")] = None,
    index: IndexOpt = None,
    wait: Annotated[float, typer.Option(
        "--wait", metavar="SECONDS", help="Seconds to wait for another build on the same index to finish (per repository).")] = 0,
    embedder: Annotated[Optional[str], typer.Option(
        "--embedder", metavar="NAME", hidden=True, help="Embedding model (tests use 'fake-bow-64'; default: "
                                        "$CODEVOUCH_EMBEDDING_MODEL, [embedding] model, else the packaged MiniLM).")] = None,
    as_json: JsonOpt = False,
    repair: Annotated[bool, typer.Option(
        "--repair", help="Rebuild a damaged vector store (chroma/) from the embedding cache, without "
        "embedding anything; the damaged one is moved aside. With a corrupt ledger (state.sqlite): move it "
        "aside, keep what it yields of the embedding cache, and build the repository again.")] = False,
    shard: Annotated[Optional[str], typer.Option(
        "--shard", metavar="NUMBER/COUNT", help="Build only this part of the repositories (1/3, 2/3, 3/3 on three "
        "machines build each repository once), chosen by a hash of each path as the list writes it; see "
        "docs/NIGHTLY.md.")] = None,
) -> None:
    """Index the committed content of one or more branches (incremental, safe to kill).

    With several --repo, or --repos FILE, each repository is built in turn; one that fails is
    reported and the others are still built; the exit code is 23 when any failed."""
    paths = repo or [Path(".")]
    part = _shard(shard, repair)     # before --repair: a refused --shard must move nothing aside
    if repair:
        renewed = _repair(index, wait, as_json)
        if renewed is not None:
            # The ledger was corrupt and is new: the repository is built again into it.
            _build_one(paths[0], branch, all_branches, include_branch, exclude_branch, index, wait, embedder, as_json,
                       extra={"repaired": renewed})
        return
    if repos is None and len(paths) == 1 and part is None:
        _build_one(paths[0], branch, all_branches, include_branch, exclude_branch, index, wait, embedder, as_json)
        return
    specs = _specs(repo, repos, branch, all_branches, include_branch, exclude_branch)
    _build_many(specs, index, wait, embedder, as_json, part)


def _shard(text: str | None, repair: bool) -> Shard | None:
    """The --shard part, or None; a usage error for a value that is not NUMBER/COUNT."""
    if text is None:
        return None
    from codevouch.indexer.manyrepos import Shard

    if repair:
        raise usage("--repair mends the whole index directory; run it without --shard.")
    try:
        return Shard.parse(text)
    except CodevouchError as exc:
        raise usage(str(exc)) from exc


def _repair(index: Path | None, wait: float, as_json: bool) -> dict[str, Any] | None:
    """Repair the index; when its ledger was corrupt and is renewed (a build must follow), what
    the repair did, for the build's --json document."""
    from codevouch.api import repair_vectors

    try:
        index_dir, done = repair_vectors(index, wait)
    except CodevouchError as exc:
        raise fail(exc) from None
    if done.ledger_aside is not None:
        if not as_json:
            echo(f"repaired {index_dir}: the corrupt ledger is at {message_line(done.ledger_aside)}; a new "
                       f"one holds {plural(done.salvaged, 'cached vector')} read back from it; building the repository again")
        return asdict(done)
    if as_json:
        print_json(asdict(done))
        return None
    echo(f"repaired {index_dir}: {plural(done.vectors, 'vector')} in {plural(done.spaces, 'space')} written from the "
               f"embedding cache, 0 embedded" + (f"; the damaged store is at {done.aside}" if done.aside else ""))
    if done.missing:
        echo(f"codevouch: {plural(done.missing, 'text')} had no cached vector: dense search will not find them "
                   "until their files change; move the index directory aside and build again to embed all.",
                   err=True)
    return None


def _build_one(repo: Path, branch: list[str] | None, all_branches: bool, include_branch: list[str] | None,
               exclude_branch: list[str] | None, index: Path | None, wait: float, embedder: str | None,
               as_json: bool, extra: dict[str, Any] | None = None) -> None:
    try:
        idx = open_index(repo, index, embedder)
        idx.embedder()  # an unknown model is a usage error before any work starts
        terminal = stderr().isatty()
        with progress(enabled=not as_json and terminal) as bar:
            # Not a terminal (cron, CI): a plain line now and then once the build runs long.
            summaries = idx.build(branches=branch or (), all_branches=all_branches, wait=wait,
                                  progress=bar if terminal else ProgressLines(),
                                  include_branches=include_branch, exclude_branches=exclude_branch)
    except CodevouchError as exc:
        raise fail(exc) from exc
    if as_json:
        print_json({"index": str(idx.index_dir), **(extra or {}), "branches": [asdict(s) for s in summaries]})
        return
    for s in summaries:
        _echo_summary(s)
    _echo_left_out(summaries)


def _specs(repo: list[Path] | None, repos: Path | None, branch: list[str] | None, all_branches: bool,
           include_branch: list[str] | None, exclude_branch: list[str] | None) -> list[RepoSpec]:
    from codevouch.api import load_repos
    from codevouch.indexer.manyrepos import RepoSpec

    if repos is not None:
        if repo:
            raise usage("--repos FILE lists the repositories; add them to the file instead of passing --repo.")
        if branch or all_branches or include_branch or exclude_branch:
            raise usage("--repos FILE names each repository's branches; put branches, all_branches, "
                        "include_branches or exclude_branches in its [[repo]] table instead of the flags.")
        try:
            return load_repos(repos)
        except CodevouchError as exc:
            raise fail(exc) from exc
    if (include_branch or exclude_branch) and not all_branches:
        raise usage("--include-branch and --exclude-branch choose among --all-branches; add --all-branches, "
                    "or name the branches with --branch.")
    return [RepoSpec(p, tuple(branch or ()), all_branches, tuple(include_branch or ()), tuple(exclude_branch or ()),
                     written=str(p)) for p in repo or [Path(".")]]


def _build_many(specs: list[RepoSpec], index: Path | None, wait: float, embedder: str | None, as_json: bool,
                shard: Shard | None = None) -> None:
    from codevouch.api import DEFAULT_EMBEDDER, build_repos, index_dir_of
    from codevouch.embedding import embedder_by_name
    from codevouch.worktree.config import RepoConfig, embedding_choice

    call = invocation().call
    index_dir = index_dir_of(index, call)
    try:
        # One model for every repository: the option's, else the environment's, else packaged.
        choice = embedding_choice(RepoConfig(), None, call.env)
        model = embedder_by_name(embedder or choice.model or DEFAULT_EMBEDDER, choice.device)
        model.dim  # noqa: B018  (an unknown model is a usage error before any work starts)
    except CodevouchError as exc:
        raise fail(exc) from exc
    codes: dict[int, int] = {}
    crashes: dict[int, str] = {}

    def report(outcome: RepoOutcome) -> None:
        codes[id(outcome)] = _outcome_code(outcome)
        if outcome.error is not None and codes[id(outcome)] == EXIT_CRASH:
            crashes[id(outcome)] = crash_logged(outcome.error)
        if not as_json:
            _echo_outcome(outcome, codes[id(outcome)])
        if outcome.error is not None:   # with --json too: the night's log must say what failed
            _echo_failure(outcome, codes[id(outcome)], crashes.get(id(outcome)))

    listed = len(specs)
    if shard is not None:
        specs = [s for s in specs if shard.holds(s)]
    terminal = stderr().isatty()
    with progress(enabled=not as_json and terminal) as bar:
        outcomes = build_repos(specs, index_dir, model, wait=wait, progress=bar if terminal else ProgressLines(),
                               on_repo=report)
    failed = [o for o in outcomes if not o.ok]
    if as_json:
        rows: list[dict[str, Any]] = []
        for o in outcomes:
            row = o.to_json()
            if "error" in row:
                row["error"]["exit_code"] = codes[id(o)]
                if id(o) in crashes:
                    row["error"]["crash_log"] = crashes[id(o)]
            rows.append(row)
        part = {"shard": str(shard), "listed": listed} if shard is not None else {}
        print_json({"index": str(index_dir), **part, "ok": len(outcomes) - len(failed), "failed": len(failed),
                    "repos": rows})
    else:
        part_of = f" (shard {shard} of {listed} listed)" if shard is not None else ""
        echo(f"{len(outcomes)} repositories{part_of}: {len(outcomes) - len(failed)} built, {len(failed)} failed")
    raise typer.Exit(EXIT_REPOS_FAILED if failed else EXIT_OK)


def _outcome_code(outcome: RepoOutcome) -> int:
    """The exit code a build of this repository alone would have ended with (70: a bug, logged)."""
    if outcome.error is None:
        return EXIT_OK
    if isinstance(outcome.error, CodevouchError):
        return exit_code(outcome.error)
    return EXIT_CRASH


def _echo_outcome(outcome: RepoOutcome, code: int) -> None:
    from codevouch.indexer.manyrepos import normalised

    name = message_line(normalised(outcome.spec.path))
    if outcome.error is None:
        echo(f"== {name}: {len(outcome.branches)} branch(es), {outcome.seconds:.1f}s")
        for s in outcome.branches:
            _echo_summary(s)
        _echo_left_out(outcome.branches)
        return
    echo(f"== {name}: failed (exit {code})" + (f", {len(outcome.branches)} branch(es) built" if outcome.branches else ""))
    for s in outcome.branches:      # the branches that exist, built beside a named one that does not
        _echo_summary(s)


def _echo_failure(outcome: RepoOutcome, code: int, crash_log: str | None) -> None:
    """One line on stderr for a repository that failed: its path, where it is listed, the
    error, and (in the error's message) what to do."""
    from codevouch.indexer.manyrepos import normalised

    err = outcome.error
    if crash_log is None:
        message = message_line(str(err))
    else:
        message = (f"unexpected error: {type(err).__name__}: {message_line(str(err))[:300]}; this is a bug. "
                   f"The traceback is in {crash_log}; please include it in a report.")
    listed = outcome.spec.listed_at
    where = f" (listed at {message_line(str(listed))})" if listed is not None and str(listed) not in str(err) else ""
    echo(f"codevouch: {message_line(normalised(outcome.spec.path))}{where}: failed (exit {code}): "
               f"{type(err).__name__}: {message}", err=True)


def _echo_summary(s: BranchSummary) -> None:
    state = "up to date" if s.noop else f"{s.indexed_files} files read"
    echo(f"{s.branch}@{s.commit[:7]} ({state}): {s.files} files, {s.chunks} chunks, "
               f"{s.embedded} embedded, {s.reused} reused, {s.deleted} deleted, {s.seconds:.1f}s")
    for reason, n in sorted(s.skipped.items()):
        echo(f"  skipped {n}: {reason}")
    for rule, n in sorted(s.excluded.items()):
        echo(f"  excluded {n}: {rule}")
    for language, why in sorted(s.text_only.items()):
        echo(f"  text windows for {language}: its grammar did not load ({message_line(why)})")


def _echo_left_out(summaries: Sequence[BranchSummary]) -> None:
    """The line that says how many branches --all-branches did not take, when it left some out."""
    left_out = max((s.branches_left_out for s in summaries), default=0)
    if left_out:
        cap = environment.MAX_BRANCHES.name
        echo(f"left out {plural(left_out, 'branch', 'branches')}: --all-branches takes at most "
             f"{invocation().call.env.max_branches} ({cap}), the most recently committed; raise {cap} to build "
             "more, or choose with --include-branch / --exclude-branch.")
