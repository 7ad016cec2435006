"""Everything the validator needs to know about the repository, gathered once per call.

Each kind of fact costs one git process for all snippets together: HEAD and the snippets'
commits, with their dates, come from one `cat-file --batch`, the status from one `git status`
(without the untracked walk: `ls-files --others` runs only when a file is lost), blob ids from
one `ls-tree` per much-referenced commit or one `cat-file --batch-check`, blob ids of changed
working-tree files from one `hash-object --stdin-paths`, old blob texts from one
`cat-file --batch`; rename detection costs one `diff` per distinct commit, and only for
snippets whose file is gone. The slow ones run in the background (gitio.Pending) while the
files are located, read and searched. What is gathered is a Facts (facts.py, with the
answers worked out from it); decisions are made afterwards, without I/O, in decide.py;
`find_elsewhere` adds one `git grep` when symbols left their file.
"""
from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from codevouch.syntax.lines import decode
from codevouch.validator import symbols
from codevouch.validator.facts import Facts, WorkFile, fast_path, identical_blob, same_oid
from codevouch.validator.model import Snippet
from codevouch.validator.text import find_lines_verbatim
from codevouch.worktree import gitio
from codevouch.worktree.files import TooLarge, huge_worktree_files, load_worktree_rules, over_cap, read_text
from codevouch.worktree.paths import Located, Locator, locate
from codevouch.worktree.rules import Rules

# Untracked files hashed to find a file that was moved without `git mv` (exact content only).
MAX_UNTRACKED_HASHED = 5000
# Files read per definition line when looking for code moved to another file: a line found in
# more files than this is too common to say where the code went.
MAX_MOVE_CANDIDATES = 20


@dataclass(frozen=True)
class Known:
    """What the caller learned from git in this call already, so the validator does not ask
    again: a search has the work tree's top and HEAD (one rev-parse) and, with the working-tree
    overlay, the status. `status` may list untracked files (they are left out here, as the
    validator's own status leaves them out); None: the validator runs its own."""
    root: Path                              # the top of the work tree, as repo_root gives it
    head: str | None                        # HEAD's commit; None without commits
    status: gitio.WorktreeStatus | None = None
    # Blob ids of working-tree files the caller hashed in this call (the overlay hashes the
    # files that differ from the index): repo-relative path -> id, not hashed again.
    hashes: Mapping[str, str] = field(default_factory=dict)
    # The working tree's exclusion rules as the call loads them (its CallSettings.rules, once
    # per call); by default read here.
    rules_of: Callable[[Path], Rules] = load_worktree_rules


@dataclass(frozen=True)
class Started:
    """The first git processes of a call, started before the snippets are even checked."""
    status: gitio.Later | None
    root: gitio.PendingRoot | None
    known: Known | None = None


def start(repo: Path | str, known: Known | None = None) -> Started:
    """Start the work tree's status and its root. Started before the root is known: porcelain
    status paths are relative to the root whatever the directory. What `known` holds is not asked."""
    if known is None:
        return Started(gitio.start_worktree_status(Path(repo), untracked=False), gitio.PendingRoot(repo))
    status = None if known.status is not None else \
        gitio.start_worktree_status(known.root, untracked=False, toplevel=True)
    return Started(status, None, known)


def gather(repo: Path | str, snippets: Sequence[Snippet], strict: bool = False,
           started: Started | None = None) -> Facts:
    """Everything decide() needs for these snippets, in a handful of git processes.

    The slow git processes (`status`, `ls-tree`) are started first and collected last: they
    run on another core while this process locates and reads the files. `started`: from
    start(repo), when the caller began before it had the snippets.
    """
    started = started or start(repo)
    status = started.status
    known = started.known
    # Commit names need no root either.
    reading = _start_commits(repo, snippets, known)
    root = _root(repo, started)
    locator = Locator(root)
    located = {s.path: locator.locate(s.path) for s in snippets}
    # Which files git ignores, asked before any is read: an ignored file (.env, keys, local
    # settings) is never read, hashed or shown (decide: excluded, `ignored`).
    asking = gitio.PendingIgnored(root, _untracked_maybe(root, known, _readable(located.values())))
    commits = reading.result()
    ignored = _ignored(located, asking.result())
    inside = _inside(snippets, located, ignored)
    trees = _start_blob_lookups(root, commits, located, inside, keep=known.head if known else None)
    rules = (known.rules_of if known else load_worktree_rules)(root)
    texts, too_large = _read_files(root, located, rules.max_file_bytes, ignored)
    # Where each snippet's text is in its file: needed for nearly every verdict, and done
    # while git works: while it still lists the status (a clean tree), else while it hashes
    # the changed files and reads their old versions (started as soon as the status is in).
    wanted = [(s.text, real) for s in inside if s.text and (real := located[s.path].real) in texts]
    hits = {} if status is None or status.done() else \
        {key: find_lines_verbatim(key[0], texts[key[1]]) for key in wanted}
    if status is not None:
        worktree = gitio.parse_status(status.result())
    else:
        assert known is not None and known.status is not None
        worktree = gitio.WorktreeStatus(known.status.changed, frozenset())
    facts = _objects(root, commits, trees, located, inside, worktree, texts, rules)
    if too_large or ignored:
        facts = replace(facts, too_large=too_large, ignored=ignored)
    facts.caches.hits.update(hits)
    facts = _trace_renames(facts, inside, locator)
    hashing = _start_hashing(facts, inside, locator, strict, known.hashes if known else {})
    for text, real in wanted:
        facts.hits(text, real)
    facts, early = _finish_hashing(facts, hashing)
    return _read_old_blobs(facts, inside, strict, early)


def _start_commits(repo: Path | str, snippets: Sequence[Snippet], known: Known | None) -> gitio.PendingCommits:
    """HEAD and the snippets' commits, with their dates, being read (HEAD not asked when `known`
    has it)."""
    return gitio.PendingCommits(known.root if known else Path(repo), ["HEAD", *(s.commit for s in snippets if s.commit)],
                                known={"HEAD": known.head} if known and known.head else None)


def _root(repo: Path | str, started: Started) -> Path:
    """The top of the work tree: as the caller knows it, else as started, else asked now."""
    known = started.known
    return known.root if known else started.root.result() if started.root else gitio.repo_root(repo)


def _readable(located: Iterable[Located]) -> list[str]:
    """The repo-relative paths that reading these snippets' files would open: each existing
    file's path as given and where its symlinks lead (either may be what git ignores)."""
    return sorted({p for loc in located if loc.inside and loc.exists for p in (loc.rel, loc.real) if p})


def _untracked_maybe(root: Path, known: Known | None, paths: list[str]) -> list[str]:
    """`paths` but those provably tracked (never ignored: git's rule), which need no asking: in
    HEAD's tree as this process keeps it (a search's later calls) and unchanged by the caller's
    status (a file removed from the index is changed there). No I/O."""
    tree = gitio.kept_tree(root, known.head) if known and known.head and known.status is not None else None
    if tree is None or known is None or known.status is None:
        return paths
    changed = known.status.changed
    return [p for p in paths if p not in tree or p in changed]


def _ignored(located: Mapping[str, Located], answer: gitio.Ignored) -> dict[str, str]:
    """given path -> why git ignores it (the rule, or why git could not tell), for the snippets'
    files that are ignored under their own name or where their symlinks lead."""
    found = {}
    for given, loc in located.items():
        if loc.inside and loc.exists:
            why = answer.why(loc.rel or "") or answer.why(loc.real or "")
            if why is not None:
                found[given] = why
    return found


def _inside(snippets: Sequence[Snippet], located: Mapping[str, Located], ignored: Mapping[str, str]) -> list[Snippet]:
    """The snippets whose files may be read: inside the repository, and not ignored by git."""
    return [s for s in snippets if located[s.path].inside and s.path not in ignored]


# Commits referenced by at least this many snippets get their whole tree listed (one `ls-tree`,
# ~20 ms for 3,000 files) instead of one `<commit>:<path>` lookup each (~0.1-0.4 ms apiece).
TREE_LISTING_FROM = 50


@dataclass(frozen=True)
class _Lookups:
    """Blob ids being looked up: whole trees of much-referenced commits, and single paths."""
    trees: Mapping[str, tuple[frozenset[str], gitio.Pending]]   # commit -> (paths wanted, ls-tree)
    single: Sequence[str]                                          # "<commit>:<path>"
    kept: Mapping[str, tuple[frozenset[str], Mapping[str, str]]] = field(default_factory=dict)  # listed before
    keep: str | None = None            # the commit whose listing is kept for the next calls


def _start_blob_lookups(root: Path, commits: Mapping[str, tuple[str, str, str | None]],
                        located: Mapping[str, Located], inside: Sequence[Snippet],
                        keep: str | None = None) -> _Lookups:
    """keep: a commit (HEAD, for a search) whose whole tree is listed once and kept by gitio for
    the process, so the next calls look its paths up in memory (gitio.kept_tree)."""
    by_commit: dict[str, set[str]] = {}
    for s in inside:
        found = commits.get(s.commit) if s.commit else None
        rel = located[s.path].rel
        if found and found[1] == "commit" and rel:
            by_commit.setdefault(found[0], set()).add(rel)
    kept = {commit: (frozenset(rels), tree) for commit, rels in by_commit.items()
            if (tree := gitio.kept_tree(root, commit)) is not None}
    # A path with a newline cannot be asked as a `<commit>:<path>` line of `cat-file --batch-check`
    # (lines end its input): its commit's tree is listed instead (`ls-tree -z` names any path).
    trees = {commit: (frozenset(rels), gitio.start_tree_blobs(root, commit))
             for commit, rels in by_commit.items()
             if commit not in kept and (len(rels) >= TREE_LISTING_FROM or commit == keep
                                        or any("\n" in rel for rel in rels))}
    single = [f"{commit}:{rel}" for commit, rels in by_commit.items() if commit not in trees and commit not in kept
              for rel in sorted(rels)]
    return _Lookups(trees, single, kept, keep)


def _objects(root: Path, commits: Mapping[str, tuple[str, str, str | None]], lookups: _Lookups,
             located: Mapping[str, Located], inside: Sequence[Snippet], status: gitio.WorktreeStatus,
             texts: Mapping[str, str], rules: Rules) -> Facts:
    """The facts so far: HEAD, the working tree's status and files, the rules, and the
    snippets' commits and blob ids."""
    objects: dict[str, tuple[str, str]] = {name: (oid, kind) for name, (oid, kind, _) in commits.items()}
    dates = {oid: date for oid, kind, date in commits.values() if date}
    objects.update(_looked_up(root, lookups))
    objects.update(gitio.batch_check(root, _doubtful_blobs(objects, located, inside)))
    head_obj = objects.get("HEAD")
    head = head_obj[0] if head_obj and head_obj[1] == "commit" else None
    inside_rels = [loc.rel for loc in located.values() if loc.inside and loc.rel]
    attributes = gitio.path_attributes(root, inside_rels, (*gitio.LINGUIST_ATTRIBUTES, "filter")) \
        if _has_gitattributes(root, inside_rels) else {}
    return Facts(root, head, status, rules, located,
                 {real: WorkFile(text) for real, text in texts.items()}, objects, commit_dates=dates,
                 marks=gitio.marks_of(attributes), unrun_filters=gitio.unrun_filters(root, attributes))


def _looked_up(root: Path, lookups: _Lookups) -> dict[str, tuple[str, str]]:
    """"<commit>:<path>" -> (blob id, "blob") for the lookups: the single ones asked now (one
    `cat-file --batch-check`), the listed trees collected (the kept commit's kept for the next
    calls), the trees listed before looked up in memory."""
    objects = gitio.batch_check(root, lookups.single)
    for commit, (rels, pending) in lookups.trees.items():
        blobs = gitio.parse_tree_blobs(pending.result(), None if commit == lookups.keep else rels)
        if commit == lookups.keep:
            gitio.keep_tree(root, commit, blobs)
        objects.update({f"{commit}:{rel}": (blobs[rel], "blob") for rel in rels if rel in blobs})
    for commit, (rels, tree) in lookups.kept.items():
        objects.update({f"{commit}:{rel}": (tree[rel], "blob") for rel in rels if rel in tree})
    return objects


def _doubtful_blobs(objects: Mapping[str, tuple[str, str]], located: Mapping[str, Located],
                    inside: Sequence[Snippet]) -> list[str]:
    """The snippets' blob ids to ask the repository about (no I/O). Does it have a snippet's blob
    at all? Asked only where the answer matters: when the blob is not its file's at its commit
    (decide: unknown-blob)."""
    doubtful = []
    for s in inside:
        found = objects.get(s.commit) if s.commit and s.blob_sha else None
        if found and found[1] == "commit":
            at = objects.get(f"{found[0]}:{located[s.path].rel}")
            if at is not None and s.blob_sha and at[0] != s.blob_sha:
                doubtful.append(s.blob_sha)
    return doubtful


def _has_gitattributes(root: Path, rels: Sequence[str]) -> bool:
    """Whether a .gitattributes file sits in the root or a directory of these paths (one
    stat each), so repositories without any cost no git process."""
    dirs = {""} | {rel.rsplit("/", 1)[0] for rel in rels if "/" in rel}
    parents = {"/".join(d.split("/")[:n]) for d in dirs for n in range(d.count("/") + 2)}
    return any(os.path.isfile(os.path.join(root, d, ".gitattributes")) for d in parents)


def _read_files(root: Path, located: Mapping[str, Located], limit: int,
                ignored: Mapping[str, str]) -> tuple[dict[str, str], dict[str, TooLarge]]:
    """Every referenced file that lies inside the repository and git does not ignore, read once;
    and those over the size cap, not read."""
    wanted = sorted({loc.real for given, loc in located.items()
                     if loc.inside and loc.exists and loc.real and given not in ignored})
    texts: dict[str, str] = {}
    too_large: dict[str, TooLarge] = {}
    for real in wanted:
        text = read_text(root, real, limit)
        if isinstance(text, str):
            texts[real] = text
        elif text is not None:
            too_large[real] = text
    return texts, too_large


def _trace_renames(facts: Facts, inside: Sequence[Snippet], locator: Locator) -> Facts:
    """Rule 3: where did missing files go? One diff per distinct commit, commit vs working tree
    (so renames that are staged but not committed count too)."""
    wanted: dict[str, set[str]] = {}
    for s in inside:
        loc = facts.located[s.path]
        commit = facts.commit_of(s)
        if not loc.exists and commit and loc.rel:
            wanted.setdefault(commit, set()).add(loc.rel)
    # Without a commit, was the path ever this repository's? (check-refs asks git the same way.)
    unversioned = sorted({rel for s in inside if not s.commit and not (loc := facts.located[s.path]).exists
                          and (rel := loc.rel) and not rel.startswith("\n")})   # (the log's records begin so)
    in_history = dict.fromkeys(unversioned, False)
    if unversioned and facts.head:
        in_history.update(dict.fromkeys(gitio.paths_in_history(facts.root, unversioned), True))
    renames: dict[tuple[str, str], str] = {}
    for commit, rels in wanted.items():
        for old, new in gitio.renames_between(facts.root, commit, None).items():
            if old in rels:
                renames[(commit, old)] = new
    targets = {new: locator.locate(new) for new in renames.values()}
    return replace(facts, renames={k: targets[v].real or v for k, v in renames.items()
                                   if targets[v].inside and targets[v].exists}, in_history=in_history)


@dataclass(frozen=True)
class _Hashing:
    """Working-tree files being hashed and old blobs being read (see _start_hashing)."""
    hashing: gitio.PendingHashes
    early: gitio.PendingBlobs
    texts: Mapping[str, str]             # files read beyond facts.files (rename targets)
    untracked: Mapping[str, Located]     # candidates for files moved without git
    lost_blobs: frozenset[str]
    reused: Mapping[str, str] = field(default_factory=dict)    # blob ids the caller had (Known.hashes)


def _start_hashing(facts: Facts, inside: Sequence[Snippet], locator: Locator, strict: bool,
                   known: Mapping[str, str]) -> _Hashing:
    """Blob ids computed (one `hash-object`) for the files the HEAD-and-clean fast path cannot
    vouch for, renamed files read, and untracked files hashed to find files moved without git.

    While git hashes, the old versions of the files it says changed are already being read
    (their snippets will need them: see _read_old_blobs)."""
    root = facts.root
    lost_blobs = _lost_blobs(facts, inside)
    # Listed only when a file is lost: most calls lose none, and listing costs a walk of the tree.
    untracked = _untracked_candidates(root, locator, facts.rules.max_file_bytes) if lost_blobs else {}
    texts = _read_rename_targets(facts)
    to_hash = _to_hash(facts, inside, texts, strict)
    reused = {p: known[p] for p in to_hash if p is not None and p in known}
    hashing = gitio.start_hash_worktree_files(root, sorted(p for p in to_hash if p and p not in reused)
                                              + sorted(p for p in untracked if p not in reused),
                                              facts.rules.max_file_bytes)
    reused.update((p, known[p]) for p in untracked if p in known)
    early = gitio.start_read_blobs(root, _early_old_blobs(facts, inside, to_hash, reused))
    return _Hashing(hashing, early, texts, untracked, frozenset(lost_blobs), reused)


def _lost_blobs(facts: Facts, inside: Sequence[Snippet]) -> set[str]:
    """The old blobs of the snippets whose file is gone and not renamed by git (no I/O): a file
    moved without git (plain `mv`) is an untracked file with the old blob's exact content."""
    located = facts.located
    lost = (facts.old_blob(s, located[s.path].rel) for s in inside
            if not located[s.path].exists and (facts.commit_of(s), located[s.path].rel) not in facts.renames)
    return {b for b in lost if b}


def _untracked_candidates(root: Path, locator: Locator, cap: int) -> dict[str, Located]:
    """The untracked files (at most MAX_UNTRACKED_HASHED) that may be a lost file moved without
    git, by real path; those over the size cap are left out: never hashed (git would read all of
    them)."""
    untracked: dict[str, Located] = {}
    listed = sorted(gitio.untracked_files(root))[:MAX_UNTRACKED_HASHED]
    huge = over_cap(root, listed, cap)
    for path in listed:
        if path in huge:
            continue
        loc = locator.locate(path)
        if loc.inside and loc.exists and loc.real:
            untracked[loc.real] = loc
    return untracked


def _read_rename_targets(facts: Facts) -> dict[str, str]:
    """The files git says the snippets' files were renamed to, read (those not read already)."""
    texts: dict[str, str] = {}
    for real in sorted(set(facts.renames.values()) - set(facts.files)):
        if isinstance(text := read_text(facts.root, real, facts.rules.max_file_bytes), str):
            texts[real] = text
    return texts


def _to_hash(facts: Facts, inside: Sequence[Snippet], texts: Mapping[str, str], strict: bool) -> set[str | None]:
    """The read files whose blob id a decision needs (no I/O): a versioned snippet's file the fast
    path cannot vouch for, every rename target (the same blob id there is the same code: decide,
    file-renamed), and with `strict` every file."""
    located = facts.located
    to_hash = {target for s in inside
               if s.has_version and (loc := located[s.path]).exists
               and ((target := loc.real) in facts.files or target in texts) and not fast_path(s, facts, strict)}
    to_hash |= set(facts.renames.values()) & (set(facts.files) | set(texts))
    if strict:
        to_hash |= set(facts.files) | set(texts)
    return to_hash


def _early_old_blobs(facts: Facts, inside: Sequence[Snippet], to_hash: set[str | None],
                     reused: Mapping[str, str]) -> list[str]:
    """The old blobs to read while git hashes (no I/O): those of snippets whose file is to be
    hashed and git says changed, where a decision will compare with the old text (no text of its
    own, or a symbol to look for). A file the caller already hashed to the snippet's own blob is
    that blob (an overlay hit, cut from the working tree): its old version is not needed."""
    located = facts.located
    return sorted({
        old for s in inside if (target := located[s.path].real) is not None and target in to_hash
        and not facts.status.is_clean(target)
        and (s.text is None or symbols.symbol_names(s.symbol)) and (old := facts.old_blob(s, located[s.path].rel))
        and not (target in reused and same_oid(reused[target], old))})


def _finish_hashing(facts: Facts, started: _Hashing) -> tuple[Facts, gitio.PendingBlobs]:
    """The files with their blob ids, and the files moved without git found by content; the
    paths are classified while git still hashes."""
    root, texts = facts.root, dict(started.texts)
    for loc in facts.located.values():     # the rules' verdict on each path
        if loc.inside:
            facts.classification(loc)
    hashed = {**started.reused, **started.hashing.result()}
    moved: dict[str, str] = {}
    for path in sorted(started.untracked):
        blob = hashed.get(path)
        lost = next((b for b in started.lost_blobs if same_oid(b, blob)), None)
        if lost is not None and lost not in moved:
            moved[lost] = path
            if path not in facts.files and path not in texts \
                    and isinstance(text := read_text(root, path, facts.rules.max_file_bytes), str):
                texts[path] = text
    files = dict(facts.files)
    files.update((real, WorkFile(text, hashed.get(real))) for real, text in texts.items())
    for real, blob in hashed.items():
        if real in facts.files:
            files[real] = WorkFile(facts.files[real].text, blob)
    return replace(facts, files=files, moved=moved, caches=facts.caches.after_hashing()), started.early


def _read_old_blobs(facts: Facts, inside: Sequence[Snippet], strict: bool, early: gitio.PendingBlobs) -> Facts:
    """Old texts, read from git (`cat-file --batch`) only where a decision needs them: those
    read early, and the rest in one more process if any is missing."""
    want = {blob for s in inside if (blob := _wanted_blob(s, facts, strict)) is not None}
    blobs = early.result()
    blobs.update(gitio.read_blobs(facts.root, sorted(want - set(early.names))))
    # Exactly the wanted ones: an old text where none was wanted would change what decide does.
    texts = {sha: decode(blobs[sha]) for sha in want if sha in blobs}
    return replace(facts, blob_texts=texts)


def _wanted_blob(s: Snippet, facts: Facts, strict: bool) -> str | None:
    """The blob whose text a decision about `s` compares with, or None (no I/O)."""
    loc = facts.located[s.path]
    same = identical_blob(s, facts, strict)
    old = facts.old_blob(s, loc.rel)
    work = facts.files.get(loc.real or "")
    if s.text is None:
        return old if old and same is None else None     # its lines, to look for in the changed file
    hits = facts.hits(s.text, loc.real or "") if work else []
    found = bool(hits)
    if same:
        return None if found or not work else same        # a clean filter may explain the difference
    if old and loc.exists and symbols.symbol_names(s.symbol):
        return old      # is the symbol gone, or spelled by another tool? (decide._symbol_gone)
    if old and s.text.strip() and not found:
        # A window not found as whole lines in its file (changed, or renamed away): a splitter's
        # window cut mid-line. Its own version shows where it was cut, which is what must
        # surround it now (verbatim.locate); without it only line edges count.
        return old
    if old and hits and all(start != s.start_line for start, _ in hits):
        # Found, but not at its own lines: its own version says what must surround it (a bare
        # `"""` that was indented is not the one at a line's start) and, among several places,
        # which one is its own (verbatim._carried).
        return old
    return None


def find_elsewhere(facts: Facts, needles: Sequence[str]) -> Facts:
    """Facts plus the working-tree files that hold each needle (a definition line), read for
    the decisions: one `git grep` for every snippet whose symbol left its file."""
    # Files over the size cap are left out: git grep holds all of a file in memory.
    found = gitio.grep_lines(facts.root, needles, leave_out=huge_worktree_files(facts.root, facts.rules.max_file_bytes))
    files = dict(facts.files)
    elsewhere: dict[str, tuple[str, ...]] = {}
    for line, paths in found.items():
        kept = []
        for path in paths[:MAX_MOVE_CANDIDATES]:
            loc = locate(facts.root, path)
            real = loc.real
            if not (loc.inside and loc.exists and real):
                continue
            if real not in files and isinstance(text := read_text(facts.root, real, facts.rules.max_file_bytes), str):
                files[real] = WorkFile(text)
            if real in files:
                kept.append(real)
        elsewhere[line] = tuple(kept)
    return replace(facts, files=files, elsewhere=elsewhere)
