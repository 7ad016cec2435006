"""All git I/O of codevouch: small typed functions over plumbing commands.

Bulk work goes through one process per call (`ls-tree -r -z`, `diff --raw -z`,
`cat-file --batch`, `hash-object --stdin-paths`), never one process per file: a git
process costs ~4 ms here, so per-file calls dominate anything else we do.
Arguments are passed as lists (never through a shell) and paths that come from users
or snippets are fed on stdin or after `--`, so they cannot be read as options.

Layered, each module importing only those above it in this list:
_lifetime (the watchdog that kills git children when codevouch dies), _process (one hardened
git process, started by `_spawn`), filters (the configured filter drivers, turned off),
confine (a work tree the configuration moved, refused), runner (run, Pending: what the rest
calls), unchanged (whether a work tree is as it was when git last answered: stat data), then
refs, objects, diffs, status, hashing, history, grep, attributes. Callers
outside use the facade, codevouch.worktree.gitio.
"""
