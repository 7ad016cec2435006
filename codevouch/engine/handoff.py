"""Which builds the CLI hands to a running engine, and what the caller does first.

`index build` of one repository and the git hooks' build (`hooks run`) go to the engine of their
index directory when one already runs there (`client.forward`): it has the stack imported, the
store's client open and the encoder loaded, so a one-file commit's build skips `import chromadb`
and its client's start. The engine runs the build on a thread of its own (engine/building.py),
through the same command, writer lock and summary as in-process, while it goes on answering
reads. A build never starts an engine: with none running it runs in-process, as it always did.

Not handed off: `index build --repos FILE`, several `--repo` or `--shard` (a night's batch, one
process's work: its paths and model are read from the process, api.build_repos), `--repair` (it
moves the store aside: the engine's readers hold it open), `--help`; and any build when
CODEVOUCH_SERVER_BUILDS is off (the command layer's setting: `wanted`).

Standard library only, as the client.
"""
from __future__ import annotations

import os
import signal

INDEX_BUILD = "index build"
HOOK_BUILD = "hooks run"
BUILDS = frozenset({INDEX_BUILD, HOOK_BUILD})


def _words(argv: list[str]) -> list[str]:
    return argv[:argv.index("--")] if "--" in argv else argv


def build_of(argv: list[str]) -> str | None:
    """"index build" or "hooks run" when `argv` is a build the engine may run; None otherwise."""
    words = _words(argv)
    if len(words) < 2 or "--help" in words:
        return None
    if words[:2] == ["hooks", "run"]:
        return HOOK_BUILD
    if words[:2] != ["index", "build"]:
        return None
    options = [w.split("=", 1)[0] for w in words[2:] if w.startswith("--")]
    if {"--repos", "--repair", "--shard"} & set(options) or options.count("--repo") > 1:
        return None
    return INDEX_BUILD


def detach(argv: list[str]) -> None:
    """A hook's build leaves the terminal's session first, wherever it then runs (here or in the
    engine, whose answer it waits for): closing the terminal ends neither. What `hooks run` did
    itself when it always ran in-process; the engine, a session of its own, never does it."""
    if _words(argv)[:2] != ["hooks", "run"]:
        return
    try:
        os.setsid()
    except OSError:    # already a group leader (a shell with job control started it)
        signal.signal(signal.SIGHUP, signal.SIG_IGN)
