"""Every CODEVOUCH_* environment variable, declared once: its name, what it means, its default,
how its text is read and the error a bad value gets.

    from codevouch import environment
    environment.current().busy_timeout        # seconds; ConfigError naming the variable if bad

This is the only module of codevouch that reads a CODEVOUCH_* variable from `os.environ`
(tests/test_environment.py holds the others to that), and the table of variables in
docs/CONFIGURATION.md is `doc_table()` of the declarations below (the same test checks it).

Why `current()` is a view of os.environ and not a snapshot taken once: a process lives long (the
MCP server, an agent's `Index`, a test run) and the variables may change between its calls
(tests set them with monkeypatch; a host may too), and every read has always seen the value of
the moment. A snapshot of all the variables memoized on their raw values would cost 55 us per
`current()` (18 `os.environ.get`s, each unset one a KeyError raised and caught inside os), 20
times gitio's check of CODEVOUCH_RUN_GIT_FILTERS, which runs for every git process. So
`current()` is one Environment over os.environ itself: reading an attribute reads that one
variable now (one `get`, as before) and parses its text once per distinct text (`_parse`,
memoized, cleared by codevouch.clear_caches()). `of(mapping)` is the same over a mapping of
one's own (tests, or a caller that fixes the variables for a call).

Errors stay lazy, where they were before: a value is parsed when its attribute is read, so a
bad variable fails only the calls that use it (a bad CODEVOUCH_BUSY_TIMEOUT fails what waits on
the embedded store, nothing else), and fails again each time (a failed parse is not kept).

A leaf above `errors`: it imports nothing of codevouch but errors and caches.
"""
from __future__ import annotations

import math
import os
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from functools import lru_cache
from typing import Any, NamedTuple, overload

from codevouch.caches import clearable
from codevouch.errors import ConfigError, SettingError


def _unset(text: str) -> bool:
    return not text


# A NamedTuple, not a dataclass (as Environment below is a plain class): every `codevouch` call
# that goes to the engine imports this module, and `dataclasses` (with the `inspect` it imports)
# was ~7 ms of a ~75 ms warm call.
class Variable(NamedTuple):
    """One variable: `parse` turns its text (set and not empty) into the value, or raises the
    error that names it; unset (or empty) is `default`. `shown` is the default as the
    documentation says it, `doc` what the variable sets (one line of the table)."""
    name: str
    kind: str                                  # what the value is, for the table: seconds, count, path...
    default: Any
    shown: str
    doc: str
    parse: Callable[[str], Any] | None = None  # None: codevouch itself never reads it (see OTHERS)
    empty: Callable[[str], bool] = _unset      # when the text counts as unset
    range: str = "-"                           # the values it takes, for the table ("-": not a number)


def _blank(text: str) -> bool:
    return not text.strip()


# The readers: each keeps the exact reading (and message) of the code it replaced.

# Every number a variable sets has a range: past it, a value would overflow what it is handed to
# (CODEVOUCH_MAX_INPUT_BYTES=99999999999999999999999 ended in an OverflowError from os.read) or
# mean nothing (a timeout of 1e300 seconds). The ends are generous; over them is a SettingError
# (exit 2) that names the variable and its range.
MOST_BYTES = 1 << 30           # 1 GiB: a cap on bytes read whole into memory
MOST_COUNT = 100_000_000       # snippets, references, chunks, tokens
MOST_SECONDS = 7 * 86400.0     # a week: a wait or a timeout longer than that is a mistake
MOST_TTL = 10 * 365 * 86400.0  # ten years (or `inf`) for the team lease


def _digits(text: str) -> bool:
    # Bounded before int(): Python refuses to convert more than 4300 digits (a ValueError).
    return text.isascii() and text.isdigit() and len(text) <= 30


def count(name: str, text: str, default: int, unset_for: str, most: int = MOST_COUNT) -> int:
    """A whole number from 1 to `most` (surrounding blanks allowed); SettingError naming `name`
    otherwise."""
    text = text.strip()
    if not text:
        return default
    if not (_digits(text) and int(text) > 0):
        raise SettingError(f"{name}={text[:40]!r} is not a positive whole number; unset it for {unset_for}.")
    if int(text) > most:
        raise SettingError(f"{name}={text[:40]!r} is out of range: it takes a whole number from 1 to {most}; "
                           f"unset it for {unset_for}.")
    return int(text)


def seconds(name: str, text: str, default: float, unset_for: str, finite: bool = True,
            most: float = MOST_SECONDS) -> float:
    """A duration (seconds, from 0 to `most`; `finite=False` also takes inf); SettingError naming
    `name` otherwise."""
    if not text:
        return default
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not (value >= 0 and (math.isfinite(value) or not finite)):
        raise SettingError(f"{name}={text[:40]!r} is not a number of seconds (>= 0); unset it for {unset_for}.")
    # A number too big for a float is inf too: past the range, unless it is spelt `inf`.
    spelt_inf = text.strip().lower().lstrip("+") in ("inf", "infinity")
    if (math.isfinite(value) or not spelt_inf) and value > most:
        raise SettingError(f"{name}={text[:40]!r} is out of range: it takes {_seconds_range(finite, most)} "
                           f"seconds; unset it for {unset_for}.")
    return value


def _seconds_range(finite: bool, most: float) -> str:
    return f"0 to {most:.0f}" + ("" if finite else " (or inf)")


def seconds_from_env(name: str, default: float, unset_for: str, finite: bool = True) -> float:
    """`seconds` of environment variable `name` as it is set now (any name: tests use their own)."""
    return seconds(name, os.environ.get(name, ""), default, unset_for, finite)


def _seconds(name: str, default: float, shown: str, unset_for: str, doc: str, finite: bool = True,
             most: float = MOST_SECONDS) -> Variable:
    return Variable(name, "seconds", default, shown, doc,
                    lambda text: seconds(name, text, default, unset_for, finite, most),
                    range=_seconds_range(finite, most))


def _count(name: str, default: int, shown: str, unset_for: str, doc: str, most: int = MOST_COUNT) -> Variable:
    return Variable(name, "count", default, shown, doc, lambda text: count(name, text, default, unset_for, most),
                    empty=_blank, range=f"1 to {most}")


def _text(name: str, kind: str, shown: str, doc: str, strip: bool = False) -> Variable:
    """A text taken as it is (stripped when `strip`); unset or empty (blank when `strip`) is None."""
    if strip:
        return Variable(name, kind, None, shown, doc, str.strip, empty=_blank)
    return Variable(name, kind, None, shown, doc, str)


def _whole(text: str) -> int | None:
    """`text` as int() reads it (blanks, a sign, underscores), None when it is not one or is
    longer than any number in range (int() of over 4300 digits is a ValueError of its own)."""
    try:
        return int(text) if len(text.strip()) <= 40 else None
    except ValueError:
        return None


def _budget(text: str) -> int:
    return _whole_count(BUDGET.name, text, "tokens", least=1,
                        not_whole=f"{BUDGET.name}={text.strip()[:40]!r} is not a whole number of tokens.")


def _overlay_limit(text: str) -> int:
    return _whole_count(OVERLAY_LIMIT.name, text, "chunks", default=" (64)",
                        not_whole=f"{OVERLAY_LIMIT.name} must be a whole number of chunks (got {text.strip()[:40]!r}).")


def _whole_count(name: str, text: str, what: str, least: int = 0, not_whole: str | None = None,
                 default: str = "") -> int:
    """A whole number from `least` to MOST_COUNT (blanks allowed); SettingError naming `name`
    otherwise (`not_whole`: the message for a value that is no number, where one was promised)."""
    raw = text.strip()
    value = _whole(raw)
    if value is None:
        raise SettingError(not_whole or f"{name}={raw[:40]!r} is not a whole number of {what}; unset it for the default.")
    if not least <= value <= MOST_COUNT:
        raise SettingError(f"{name}={raw[:40]!r} is out of range: it takes a whole number of {what} from {least} to "
                           f"{MOST_COUNT}; unset it for the default{default}.")
    return value


MOST_MB = 1 << 20              # 1 TiB, in MiB: a memory bound over that is no bound


def _memory_mb(text: str) -> int:
    raw = text.strip()
    value = int(raw) if _digits(raw) else -1
    if not 0 <= value <= MOST_MB:
        raise SettingError(f"{GIT_MEMORY_MB.name}={raw[:40]!r} is out of range: it takes a whole number of MiB "
                           f"from 0 (no limit) to {MOST_MB}; unset it for the default (4096).")
    return value


def _reserve(text: str) -> str:
    """The reserve's text, checked (context/windows.py reads it, as it reads `[budget] reserve`)."""
    try:
        fraction = float(text)
    except ValueError:
        fraction = math.nan
    if not 0.0 <= fraction < 1.0:
        raise SettingError(f"{RESERVE.name}={text[:40]!r} is out of range: it takes a fraction of the window "
                           "from 0 to 0.99; unset it for the default (0.1).")
    return text


def similarity(named: str, value: Any, error: type[ConfigError] = ConfigError) -> float:
    """A match threshold: a cosine in [-1, 1] (a number or its text), else a ConfigError (`error`)
    naming where it was set (`named`): the variable's and `[embedding]`'s one rule."""
    try:
        number = float(value)
    except (TypeError, ValueError, OverflowError):     # OverflowError: an int too big for a float
        number = math.nan
    if not -1.0 <= number <= 1.0:
        raise error(f"{named} must be a similarity between -1 and 1 (a cosine).")
    return number


def _threshold(text: str) -> float:
    return similarity(MATCH_THRESHOLD.name, text.strip(), SettingError)


def _server(text: str) -> str:
    word = text.strip().lower()
    for value, words in (("off", ("off", "0", "false", "no")), ("on", ("on", "1", "true", "yes")), ("auto", ("auto",))):
        if word in words:
            return value
    raise ConfigError(f"{SERVER.name}={text[:40]!r} is not on, off or auto; unset it for auto (the engine, "
                      "except under CI=true).")


def _switch(name: str, text: str) -> str:
    word = text.strip().lower()
    if word in ("off", "0", "false", "no"):
        return "off"
    if word in ("on", "1", "true", "yes"):
        return "on"
    raise ConfigError(f"{name}={text[:40]!r} is not on or off; unset it for on.")


_TEAM = "([TEAM_INDEX.md](TEAM_INDEX.md))"
_ENGINE = "([ENGINE.md](ENGINE.md))"

INDEX = _text("CODEVOUCH_INDEX", "path", "`$XDG_DATA_HOME/codevouch`, `~/.local/share/codevouch`",
              "the index directory (`--index` wins)")
CHROMA_URL = _text("CODEVOUCH_CHROMA_URL", "url", "the embedded store",
                   f"vectors on a Chroma server (`http://HOST:PORT`) instead of the embedded store {_TEAM}")
CHROMA_TIMEOUT = _seconds("CODEVOUCH_CHROMA_TIMEOUT", 5.0, "5", "the default (5 s)",
                          f"seconds one call to the Chroma server may take before exit 6 (`0`: no limit) {_TEAM}")
LEASE_TTL = _seconds("CODEVOUCH_LEASE_TTL", 36 * 3600.0, "36 h", "36 h",
                     "seconds a team builder's lease outlives its last build (`inf`: never lapses)", finite=False,
                     most=MOST_TTL)
BUSY_TIMEOUT = _seconds("CODEVOUCH_BUSY_TIMEOUT", 20.0, "20", "20 s",
                        "seconds a reader waits for a build's write batch on the embedded store before `IndexBusy`")
BUDGET = Variable("CODEVOUCH_BUDGET", "tokens", None, "`[budget] tokens`, else 16000",
                  "the context budget in tokens ([BUDGETS.md](BUDGETS.md))", _budget, range=f"1 to {MOST_COUNT}")
MODEL = _text("CODEVOUCH_MODEL", "model", "`[budget] model`",
              "the model whose window sets the context budget ([BUDGETS.md](BUDGETS.md))")
# The reserve's text: context/windows.py reads it as it reads `[budget] reserve`.
RESERVE = Variable("CODEVOUCH_RESERVE", "fraction", None, "`[budget] reserve`, else 0.1",
                   "the fraction of the model's window kept free ([BUDGETS.md](BUDGETS.md))", _reserve,
                   range="0 to 0.99")
EMBEDDING_MODEL = _text("CODEVOUCH_EMBEDDING_MODEL", "model", "`[embedding] model`, else the packaged MiniLM",
                        "the embedding model: a model directory, relative to the current directory (below)", strip=True)
EMBEDDING_DEVICE = _text("CODEVOUCH_EMBEDDING_DEVICE", "device", "`[embedding] device`, else auto",
                         "where builds run the embedding model (below)", strip=True)
MATCH_THRESHOLD = Variable("CODEVOUCH_MATCH_THRESHOLD", "similarity", None,
                           "`[embedding] match_threshold`, else the model's measured one",
                           "the similarity from which a hit counts as a good match (below)", _threshold, empty=_blank,
                           range="-1 to 1")
NO_RECORD = Variable("CODEVOUCH_NO_RECORD", "flag", False, "unset",
                     "any value but `0`: write no usage records (below)", lambda text: text != "0")
PROGRESS_SECONDS = _seconds("CODEVOUCH_PROGRESS_SECONDS", 10.0, "10", "10 s",
                            "when stderr is not a terminal, seconds between `index build`'s progress lines (the "
                            "first comes after as long, so quick builds stay quiet; `0`: a line each 5%)")
MAX_INPUT_BYTES = _count("CODEVOUCH_MAX_INPUT_BYTES", 8 << 20, "8388608 (8 MiB)", f"the default cap ({8 << 20} bytes)",
                         "the most bytes `validate` and `check-refs` read from their FILE or stdin; at most one "
                         "byte more is read, and over it the command stops with exit 2 before any work",
                         most=MOST_BYTES)
MAX_SNIPPETS = _count("CODEVOUCH_MAX_SNIPPETS", 100_000, "100000", "the default cap (100000)",
                      "the most snippets one `validate` call takes (about 6 s; 1,000,000 took 63 s and 4.6 GB); "
                      "more is exit 2: validate in batches. The MCP tool takes 1000")
MAX_REFERENCES = _count("CODEVOUCH_MAX_REFERENCES", 5_000, "5000", "the default cap (5000)",
                        "the most references one `check-refs` call checks, CLI, MCP or library (60,000 took 76 s); "
                        "more is an input error (exit 2): check the text in parts")
OVERLAY_LIMIT = Variable("CODEVOUCH_OVERLAY_LIMIT", "count", 64, "64",
                         "the most new working-tree chunks one search embeds (`--overlay-limit` and "
                         "`Index(overlay_limit=N)` win); the rest are searched by words ([OVERLAY.md](OVERLAY.md))",
                         _overlay_limit, empty=_blank, range=f"0 to {MOST_COUNT}")
OVERLAY_SECONDS = _seconds("CODEVOUCH_OVERLAY_SECONDS", 0.5, "0.5", "the default (0.5 s)",
                           "seconds one search may spend embedding new working-tree chunks, new definitions first "
                           "(4-10 chunks a second on one core of the 2-core benchmark machine; `0`: none); the rest "
                           "rank with their indexed version's vector, else by words ([OVERLAY.md](OVERLAY.md))")
BUILD_NUMPY_TEXTS = Variable("CODEVOUCH_BUILD_NUMPY_TEXTS", "count", 64, "64",
                             "the most new chunk texts a build of a branch embeds with the packaged model's NumPy "
                             "encoder, which needs no torch (a one-file commit's build: under 2 s); a build with more "
                             "embeds them with torch, which is faster per text but seconds to import (`0`: always "
                             "torch) ([INDEXING.md](INDEXING.md#which-encoder-a-build-uses))",
                             lambda text: _whole_count("CODEVOUCH_BUILD_NUMPY_TEXTS", text, "chunk texts"), empty=_blank,
                             range=f"0 to {MOST_COUNT}")
RUN_GIT_FILTERS = Variable("CODEVOUCH_RUN_GIT_FILTERS", "flag", False, "off",
                           "`1` (or true, yes, on): run the `filter.<name>` drivers git's configuration names "
                           "(git-lfs, git-crypt) when hashing working-tree files; never settable from a repository "
                           "(SECURITY.md)",
                           lambda text: text.strip().lower() in ("1", "true", "yes", "on"))
ALLOW_OUTSIDE_GIT_DIR = Variable("CODEVOUCH_ALLOW_OUTSIDE_GIT_DIR", "flag", False, "off",
                                 "`1` (or true, yes, on): read a repository whose git directory or object store a "
                                 "`.git` file, `.git` link, `commondir` or `objects/info/alternates` puts in another "
                                 "directory (linked worktrees and submodules are recognised without it); never "
                                 "settable from a repository (SECURITY.md)",
                                 lambda text: text.strip().lower() in ("1", "true", "yes", "on"))
MAX_BRANCHES = _count("CODEVOUCH_MAX_BRANCHES", 1000, "1000", "the default cap (1000)",
                      "the most branches `index build --all-branches` takes: the most recently committed ones; "
                      "the build's output says how many were left out (a 500,000-entry packed-refs hung it)")
GIT_TIMEOUT = _seconds("CODEVOUCH_GIT_TIMEOUT", 600.0, "600 (10 min)", "the default (10 min)",
                       "seconds one git process may run (a long-lived one: per answer) before it is stopped "
                       "and the call fails naming the command (the slowest git call codevouch makes took 22 s "
                       "on git's own 200,000-commit history; `0`: no limit) (SECURITY.md)")
GIT_MEMORY_MB = Variable("CODEVOUCH_GIT_MEMORY_MB", "MiB", 4096, "4096 (4 GiB)",
                         "the most memory one git process may allocate (its data segment: pack files git "
                         "maps are not counted) before its allocations fail and the call fails naming the "
                         "command (git's own history needs under 200; `0`: no limit) (SECURITY.md)",
                         lambda text: _memory_mb(text), empty=_blank, range=f"0 to {MOST_MB}")
SERVER = Variable("CODEVOUCH_SERVER", "switch", "auto", "auto",
                  "`off` (or 0, false, no): every CLI call runs in-process; `on`: read commands go to the resident "
                  f"engine even when `CI=true`; `auto`: the engine, except under `CI=true` {_ENGINE}",
                  _server, empty=_blank)
SERVER_BUILDS = Variable("CODEVOUCH_SERVER_BUILDS", "switch", "on", "on",
                         "`off` (or 0, false, no): `index build` and the git hooks' builds run in-process even when "
                         "an engine runs; `on`: they go to the engine already running for the index, which builds "
                         f"beside its reads (a build never starts one) {_ENGINE}",
                         lambda text: _switch("CODEVOUCH_SERVER_BUILDS", text), empty=_blank)
SERVER_IDLE = _seconds("CODEVOUCH_SERVER_IDLE", 600.0, "600 (10 min)", "the default (10 min)",
                       f"seconds the resident engine waits for a call before it exits {_ENGINE}")
SERVER_TIMEOUT = _seconds("CODEVOUCH_SERVER_TIMEOUT", 120.0, "120", "the default (120 s)",
                          "seconds a CLI call waits for the engine: in its queue (past it the call runs in-process), "
                          "then for the answer once the call started (past it the engine is killed and the call "
                          f"runs in-process; `0`: no limit); a build handed to the engine has no limit once it started {_ENGINE}")

# What codevouch reads, in the order of the table.
VARIABLES: tuple[Variable, ...] = (
    INDEX, CHROMA_URL, CHROMA_TIMEOUT, LEASE_TTL, BUSY_TIMEOUT, BUDGET, MODEL, RESERVE, EMBEDDING_MODEL,
    EMBEDDING_DEVICE, MATCH_THRESHOLD, NO_RECORD, PROGRESS_SECONDS, MAX_INPUT_BYTES, MAX_SNIPPETS,
    MAX_REFERENCES, MAX_BRANCHES, OVERLAY_LIMIT, OVERLAY_SECONDS, BUILD_NUMPY_TEXTS, RUN_GIT_FILTERS, ALLOW_OUTSIDE_GIT_DIR,
    GIT_TIMEOUT, GIT_MEMORY_MB, SERVER, SERVER_BUILDS, SERVER_IDLE, SERVER_TIMEOUT,
)

# Named for the table only: codevouch sets these for a child, or its scripts read them.
PART = Variable("CODEVOUCH_PART", "count", None, "set by `review --exec`",
                "the part a `review --exec` reviewer is given ([REVIEW.md](REVIEW.md))")
PARTS = Variable("CODEVOUCH_PARTS", "count", None, "set by `review --exec`",
                 "how many parts the review has ([REVIEW.md](REVIEW.md))")
BENCH_GIT_MIRRORS = Variable("CODEVOUCH_BENCH_GIT_MIRRORS", "path", None, "unset",
                             "the benchmarks' bare clones ([BENCHMARKING.md](BENCHMARKING.md))")
BENCH_REUSE_STORES = Variable("CODEVOUCH_BENCH_REUSE_STORES", "flag", None, "unset",
                              "`1`: the benchmarks keep the last run's stores ([BENCHMARKING.md](BENCHMARKING.md))")
OTHERS: tuple[Variable, ...] = (PART, PARTS, BENCH_GIT_MIRRORS, BENCH_REUSE_STORES)


class Environment:
    """The CODEVOUCH_* variables of `raw` (os.environ for `current()`), each read and parsed
    when its attribute is read: a bad one raises only where it is used. Frozen; equal only to
    itself (one call's environment is one object)."""
    __slots__ = ("raw",)
    raw: Mapping[str, str]

    def __init__(self, raw: Mapping[str, str] | None = None) -> None:
        object.__setattr__(self, "raw", {} if raw is None else raw)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"an Environment is frozen: cannot set {name!r}")

    def __repr__(self) -> str:
        return f"Environment(raw={self.raw!r})"

    def __reduce__(self) -> tuple[type[Environment], tuple[Mapping[str, str]]]:
        return (Environment, (self.raw,))       # copied or pickled through __init__, never setattr

    @overload
    def get(self, name: str) -> str | None: ...

    @overload
    def get(self, name: str, default: str) -> str: ...

    def get(self, name: str, default: str | None = None) -> str | None:
        """Any variable of the environment (HOME, XDG_*, GIT_*), not only a declared one."""
        return self.raw.get(name, default)

    def expanduser(self, path: str) -> str:
        """os.path.expanduser with this environment's HOME (`~` and `~/...`); `~user` from the
        password database, as os.path does."""
        if path == "~" or path.startswith("~/"):
            home = self.raw.get("HOME")
            if home is not None:
                return (home.rstrip("/") or "/") + path[1:]
        return os.path.expanduser(path) if path.startswith("~") else path

    def value(self, var: Variable) -> Any:
        text = self.raw.get(var.name)
        if text is None or var.empty(text) or var.parse is None:
            return var.default
        return _parse(var, text)

    def is_set(self, var: Variable) -> bool:
        """Whether `var` is set to something that is not unset (empty, or blank where blanks are)."""
        text = self.raw.get(var.name)
        return text is not None and not var.empty(text)

    @property
    def index(self) -> str | None:
        return self.value(INDEX)

    @property
    def chroma_url(self) -> str | None:
        return self.value(CHROMA_URL)

    @property
    def chroma_timeout(self) -> float:
        return self.value(CHROMA_TIMEOUT)

    @property
    def lease_ttl(self) -> float:
        return self.value(LEASE_TTL)

    @property
    def busy_timeout(self) -> float:
        return self.value(BUSY_TIMEOUT)

    @property
    def budget(self) -> int | None:
        return self.value(BUDGET)

    @property
    def model(self) -> str | None:
        return self.value(MODEL)

    @property
    def reserve(self) -> str | None:
        return self.value(RESERVE)

    @property
    def embedding_model(self) -> str | None:
        return self.value(EMBEDDING_MODEL)

    @property
    def embedding_device(self) -> str | None:
        return self.value(EMBEDDING_DEVICE)

    @property
    def match_threshold(self) -> float | None:
        return self.value(MATCH_THRESHOLD)

    @property
    def no_record(self) -> bool:
        return self.value(NO_RECORD)

    @property
    def progress_seconds(self) -> float:
        return self.value(PROGRESS_SECONDS)

    @property
    def max_input_bytes(self) -> int:
        return self.value(MAX_INPUT_BYTES)

    @property
    def max_snippets(self) -> int:
        return self.value(MAX_SNIPPETS)

    @property
    def max_references(self) -> int:
        return self.value(MAX_REFERENCES)

    @property
    def max_branches(self) -> int:
        return self.value(MAX_BRANCHES)

    @property
    def overlay_limit(self) -> int:
        return self.value(OVERLAY_LIMIT)

    @property
    def overlay_seconds(self) -> float:
        return self.value(OVERLAY_SECONDS)

    @property
    def build_numpy_texts(self) -> int:
        """CODEVOUCH_BUILD_NUMPY_TEXTS: the most texts a build embeds without torch (embedding.build_encoder)."""
        return self.value(BUILD_NUMPY_TEXTS)

    @property
    def allow_outside_git_dir(self) -> bool:
        """CODEVOUCH_ALLOW_OUTSIDE_GIT_DIR: whether a git directory elsewhere may be read (gitreads.guard)."""
        return self.value(ALLOW_OUTSIDE_GIT_DIR)

    @property
    def run_git_filters(self) -> bool:
        """CODEVOUCH_RUN_GIT_FILTERS: whether git may run configured filter drivers (gitio's run_filters)."""
        return self.value(RUN_GIT_FILTERS)

    @property
    def git_timeout(self) -> float:
        """CODEVOUCH_GIT_TIMEOUT: seconds one git process may run (0: no limit; worktree/git/_process)."""
        return self.value(GIT_TIMEOUT)

    @property
    def git_memory_mb(self) -> int:
        """CODEVOUCH_GIT_MEMORY_MB: MiB one git process may allocate (0: no limit; worktree/git/_process)."""
        return self.value(GIT_MEMORY_MB)

    @property
    def server(self) -> str:
        """CODEVOUCH_SERVER: "on", "off" or "auto" (the CLI's engine client decides what auto means)."""
        return self.value(SERVER)

    @property
    def server_builds(self) -> str:
        """CODEVOUCH_SERVER_BUILDS: "on" or "off", whether a build goes to a running engine (engine/handoff.py)."""
        return self.value(SERVER_BUILDS)

    @property
    def server_idle(self) -> float:
        return self.value(SERVER_IDLE)

    @property
    def server_timeout(self) -> float:
        return self.value(SERVER_TIMEOUT)


def of(env: Mapping[str, str] | Environment) -> Environment:
    """An Environment: `env` itself, or the declared variables of a mapping."""
    if isinstance(env, Environment):
        return env
    return Environment({v.name: env[v.name] for v in VARIABLES if v.name in env})


_CURRENT = Environment(os.environ)

# The environment of the call running in this context (codevouch.call.Call.entered): the caller's
# own, a snapshot, where the process runs calls for others (the engine, the MCP server); unset,
# the process's own (a `codevouch` process, a library user's). Never os.environ rewritten.
_CALL: ContextVar[Environment | None] = ContextVar("codevouch_call_environment", default=None)


def current() -> Environment:
    """The running call's environment, else the process's variables as they are set at each read
    (see the module's docstring)."""
    return _CALL.get() or _CURRENT


@contextmanager
def applied(env: Environment) -> Iterator[None]:
    """`env` as `current()` in this context (this thread, and what it runs with its context)."""
    token = _CALL.set(env)
    try:
        yield
    finally:
        _CALL.reset(token)


@clearable
@lru_cache(maxsize=64)
def _parse(var: Variable, text: str) -> Any:
    # Keyed by the text itself, so a change is never missed; an exception is not kept.
    return var.parse(text) if var.parse is not None else var.default


def doc_table() -> str:
    """The table of docs/CONFIGURATION.md, "Environment variables"."""
    rows = ["| variable | default | range | what it sets |", "|---|---|---|---|"]
    rows += [f"| `{v.name}` | {v.shown} | {v.range} | {v.doc} |" for v in (*VARIABLES, *OTHERS)]
    return "\n".join(rows) + "\n"
