"""The CLI's exit codes, in one table (the README's "Exit codes" lists them; tests/commands/test_exits.py
holds the two to the same values). Only `codevouch/__main__.py` spells one out: 130, for a
Ctrl-C that comes while the CLI is still importing."""
EXIT_OK = 0
EXIT_ERROR = 1              # git failed, bad config, anything else the message explains
EXIT_USAGE = 2              # bad arguments or malformed input
EXIT_HISTORICAL = 3         # validate: at least one snippet is historical-only
EXIT_MISSING = 3            # check-refs: at least one reference is missing; show: the definition is gone or not found
EXIT_LOCKED = 4             # another build holds the index
EXIT_NOT_INDEXED = 5        # search on a branch that was never indexed
EXIT_STORE = 6              # the vector store (a Chroma server) cannot be reached
EXIT_EMPTY_SCOPE = 20       # review: the scope holds no changes
EXIT_UNKNOWN_REVISION = 21  # review: a revision in the range or --base does not exist
EXIT_REVIEW_FAILED = 22     # review --exec: at least one part's reviewer failed or timed out
EXIT_REPOS_FAILED = 23      # index build, search or context of several repositories: at least one failed
EXIT_CRASH = 70             # a bug: the traceback went to the crash log (sysexits' EX_SOFTWARE)
EXIT_INTERRUPTED = 130      # Ctrl-C (128 + SIGINT, as shells report it)
