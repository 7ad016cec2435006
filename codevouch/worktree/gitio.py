"""All git I/O of codevouch, under the names its callers use: a facade over codevouch.worktree.git.

The functions live in the package's modules, one concept each (see its docstring). Patch
behaviour where it lives (e.g. `git.hashing.RACY_NS`): a name rebound here reaches no caller
inside the package. It re-exports only what callers outside the package use: a git command
line is never assembled outside it (`runner.git_command`, `_process`).
"""
from __future__ import annotations

from codevouch.errors import (
    DetachedHead,
    GitError,
    NoCommits,
    NotARepository,
    UnknownRevision,
)
from codevouch.kept import Kept, Seen
from codevouch.worktree.git._lifetime import name_owner as name_watchdog_owner
from codevouch.worktree.git._process import (
    PROCESSES,
    REPO_LOCATING_VARS,
    RUN_FILTERS_VAR,
    caller_env,
    no_git_env,
)
from codevouch.worktree.git.attributes import (
    LINGUIST_ATTRIBUTES,
    linguist_marks,
    marks_of,
    path_attributes,
    unrun_filters,
)
from codevouch.worktree.git.diffs import Change, PendingDiff, diff_patch, diff_trees, renames_between
from codevouch.worktree.git.grep import grep_lines, grep_word_lines, grep_words
from codevouch.worktree.git.hashing import (
    FOLDER,
    NESTED_REPOSITORY,
    SUBMODULE,
    PendingHashes,
    folder_attributes,
    hash_context,
    hash_worktree_files,
    settled,
    skip_reason,
    start_hash_worktree_files,
    stat_key,
    symlink_blob,
)
from codevouch.worktree.git.history import (
    last_commit_mentioning,
    last_commit_touching,
    parent_commit,
    paths_in_history,
)
from codevouch.worktree.git.ignores import Ignored, PendingIgnored, ignored
from codevouch.worktree.git.layout import config_values, git_dirs
from codevouch.worktree.git.objects import (
    BlobReader,
    PendingBlobs,
    PendingCommits,
    TreeEntry,
    batch_check,
    blob_reader,
    commit_dates,
    file_count,
    keep_tree,
    kept_tree,
    ls_tree,
    parse_tree_blobs,
    read_blobs,
    read_commits,
    start_read_blobs,
    start_tree_blobs,
    tree_blobs,
    tree_entries,
)
from codevouch.worktree.git.refs import (
    HeadState,
    PendingRoot,
    branch_commit,
    check_branch_name,
    current_branch,
    first_parent_samples,
    has_any_commit,
    has_commit,
    head_commit,
    head_state,
    is_root,
    local_branches,
    merge_base,
    remote_url,
    repo_root,
    resolve_commit,
    root_commit,
)
from codevouch.worktree.git.runner import Later, Pending, run
from codevouch.worktree.git.status import (
    WorktreeStatus,
    parse_status,
    start_worktree_status,
    untracked_files,
    worktree_files,
    worktree_status,
)
from codevouch.worktree.git.unchanged import in_look_scope, in_scope, one_look, tree_state, unlinked_state

__all__ = [
    # _lifetime: what the watchdog of git children is called in `ps`
    "name_watchdog_owner",
    # errors the git layer raises
    "DetachedHead", "GitError", "NoCommits", "NotARepository", "UnknownRevision",
    # _process, filters, runner: starting git
    "PROCESSES", "REPO_LOCATING_VARS", "RUN_FILTERS_VAR", "caller_env", "no_git_env",
    "Later", "Pending", "run",
    # refs
    "HeadState", "PendingRoot", "branch_commit", "check_branch_name", "current_branch", "first_parent_samples", "has_any_commit",
    "has_commit", "head_commit", "head_state", "is_root", "local_branches", "merge_base", "remote_url", "repo_root",
    "resolve_commit", "root_commit",
    # layout: git directories and where a config value came from
    "config_values", "git_dirs",
    # objects
    "BlobReader", "PendingBlobs", "PendingCommits", "TreeEntry", "batch_check", "blob_reader",
    "commit_dates", "file_count", "keep_tree", "kept_tree", "ls_tree", "parse_tree_blobs", "read_blobs", "read_commits",
    "start_read_blobs", "start_tree_blobs", "tree_blobs", "tree_entries",
    # diffs
    "Change", "PendingDiff", "diff_patch", "diff_trees", "renames_between",
    # status
    "WorktreeStatus", "parse_status", "start_worktree_status", "untracked_files", "worktree_files",
    "worktree_status",
    # unchanged: what a look at stat data tells (one look a call; answers kept under a look)
    "Kept", "Seen", "in_look_scope", "in_scope", "one_look", "tree_state", "unlinked_state",
    # hashing
    "PendingHashes", "folder_attributes", "hash_context", "hash_worktree_files", "settled",
    "start_hash_worktree_files", "stat_key", "FOLDER", "NESTED_REPOSITORY", "SUBMODULE", "skip_reason",
    "symlink_blob",
    # ignores
    "Ignored", "PendingIgnored", "ignored",
    # history, grep, attributes
    "last_commit_mentioning", "last_commit_touching", "parent_commit", "paths_in_history", "grep_lines", "grep_word_lines",
    "grep_words", "LINGUIST_ATTRIBUTES", "linguist_marks", "marks_of", "path_attributes", "unrun_filters",
]
