"""codevouch/environment.py: every CODEVOUCH_* variable declared once, read only there, and the
table of docs/CONFIGURATION.md made from the declarations."""
from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

import codevouch
from codevouch import environment
from codevouch.errors import ConfigError, InputError, SettingError

ROOT = Path(codevouch.__file__).parent
DOC = ROOT.parent / "docs" / "CONFIGURATION.md"
DECLARED = {v.name for v in environment.VARIABLES}


def _reads(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, variable) of every read of a CODEVOUCH_* key from a mapping or the environment:
    `m.get(K)`, `os.getenv(K)`, `m.pop(K)`, `m.setdefault(K)`, `m[K]`, `K in m`, where K is a
    string literal or a module constant bound to one."""
    constants = {node.targets[0].id: node.value.value for node in ast.walk(tree)
                 if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
                 and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)}

    def key(node: ast.AST) -> str | None:
        value = node.value if isinstance(node, ast.Constant) else constants.get(node.id) if isinstance(
            node, ast.Name) else None
        return value if isinstance(value, str) and value.startswith("CODEVOUCH_") else None

    found = []
    for node in ast.walk(tree):
        keys: list[ast.AST] = []
        if isinstance(node, ast.Call) and isinstance(node.func, (ast.Attribute, ast.Name)) and node.args:
            name = node.func.attr if isinstance(node.func, ast.Attribute) else node.func.id
            if name in ("get", "getenv", "pop", "setdefault", "environ"):
                keys = [node.args[0]]
        elif isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load):
            keys = [node.slice]
        elif isinstance(node, ast.Compare) and any(isinstance(op, (ast.In, ast.NotIn)) for op in node.ops):
            keys = [node.left]
        found += [(node.lineno, k) for k in map(key, keys) if k is not None]
    return found


def test_no_module_but_environment_reads_a_codevouch_variable() -> None:
    offenders = []
    for path in sorted(ROOT.rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if rel == "environment.py":
            continue
        for line, name in _reads(ast.parse(path.read_text(encoding="utf-8"))):
            offenders.append(f"codevouch/{rel}:{line}: {name}")
    assert offenders == [], "read it through codevouch.environment.current() (declare it there if new)"


def test_the_check_finds_each_form_of_read() -> None:
    source = '''
import os
VAR = "CODEVOUCH_B"
os.environ.get("CODEVOUCH_A")
os.getenv(VAR)
os.environ["CODEVOUCH_C"]
"CODEVOUCH_D" in os.environ
env = {**os.environ, "CODEVOUCH_PART": "1"}   # setting one for a child is no read
'''
    assert sorted(name for _, name in _reads(ast.parse(source))) == [
        "CODEVOUCH_A", "CODEVOUCH_B", "CODEVOUCH_C", "CODEVOUCH_D"]


def test_every_variable_codevouch_names_is_declared() -> None:
    named = {m for path in ROOT.rglob("*.py")
             for m in re.findall(r"CODEVOUCH_[A-Z0-9_]+", path.read_text(encoding="utf-8"))}
    others = {v.name for v in environment.OTHERS}
    assert named - DECLARED - others == set()
    assert len(DECLARED | others) == len(environment.VARIABLES) + len(environment.OTHERS)   # each once


def test_the_configuration_page_is_the_declared_table() -> None:
    text = DOC.read_text(encoding="utf-8")
    start = text.index("| variable | default | range | what it sets |")
    table = text[start:text.index("\n\n", start) + 1]
    assert table == environment.doc_table(), (
        "docs/CONFIGURATION.md's table differs from the declarations: paste "
        "`python -c 'from codevouch import environment; print(environment.doc_table())'`")
    documented = re.findall(r"^\| `(CODEVOUCH_[A-Z0-9_]+)` \| ([^|]+) \|", table, flags=re.M)
    assert [(n, d.strip()) for n, d in documented] == [
        (v.name, v.shown) for v in (*environment.VARIABLES, *environment.OTHERS)]


def test_current_follows_the_environment_between_calls(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CODEVOUCH_BUSY_TIMEOUT", raising=False)
    assert environment.current().busy_timeout == 20.0
    monkeypatch.setenv("CODEVOUCH_BUSY_TIMEOUT", "0.3")
    assert environment.current().busy_timeout == 0.3
    assert environment.current() is environment.current()      # one view of os.environ
    monkeypatch.setenv("CODEVOUCH_BUSY_TIMEOUT", "")
    assert environment.current().busy_timeout == 20.0
    codevouch.clear_caches()
    assert environment.current().busy_timeout == 20.0


def test_a_text_is_parsed_once_and_a_failure_every_time(monkeypatch: pytest.MonkeyPatch) -> None:
    codevouch.clear_caches()
    monkeypatch.setenv("CODEVOUCH_MAX_REFERENCES", "7")
    assert environment.current().max_references == environment.current().max_references == 7
    assert environment._parse.cache_info().currsize == 1
    monkeypatch.setenv("CODEVOUCH_MAX_REFERENCES", "seven")
    for _ in range(2):
        with pytest.raises(ConfigError, match="CODEVOUCH_MAX_REFERENCES='seven'"):
            _ = environment.current().max_references
    assert environment._parse.cache_info().currsize == 1


def test_a_bad_variable_fails_only_where_it_is_read(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CODEVOUCH_BUSY_TIMEOUT", "abc")
    monkeypatch.setenv("CODEVOUCH_MAX_SNIPPETS", "0")
    monkeypatch.delenv("CODEVOUCH_CHROMA_TIMEOUT", raising=False)
    env = environment.current()
    assert env.chroma_timeout == 5.0
    with pytest.raises(ConfigError, match=r"^CODEVOUCH_BUSY_TIMEOUT='abc' is not a number of seconds \(>= 0\); "
                                          r"unset it for 20 s\.$"):
        _ = env.busy_timeout
    with pytest.raises(ConfigError, match=r"^CODEVOUCH_MAX_SNIPPETS='0' is not a positive whole number; "
                                          r"unset it for the default cap \(100000\)\.$"):
        _ = env.max_snippets


@pytest.mark.parametrize("values, attribute, expected", [
    ({}, "index", None), ({"CODEVOUCH_INDEX": ""}, "index", None), ({"CODEVOUCH_INDEX": "~/i"}, "index", "~/i"),
    ({"CODEVOUCH_CHROMA_URL": ""}, "chroma_url", None),
    ({"CODEVOUCH_LEASE_TTL": "inf"}, "lease_ttl", float("inf")),
    ({"CODEVOUCH_MAX_INPUT_BYTES": " 12 "}, "max_input_bytes", 12),
    ({"CODEVOUCH_MAX_REFERENCES": "  "}, "max_references", 5000),
    ({"CODEVOUCH_NO_RECORD": "0"}, "no_record", False), ({"CODEVOUCH_NO_RECORD": "no"}, "no_record", True),
    ({"CODEVOUCH_RUN_GIT_FILTERS": " Yes "}, "run_git_filters", True),
    ({"CODEVOUCH_RUN_GIT_FILTERS": "0"}, "run_git_filters", False),
    ({"CODEVOUCH_EMBEDDING_MODEL": "  "}, "embedding_model", None),
    ({"CODEVOUCH_EMBEDDING_MODEL": " /m "}, "embedding_model", "/m"),
    ({"CODEVOUCH_MATCH_THRESHOLD": "0.5"}, "match_threshold", 0.5),
    ({"CODEVOUCH_OVERLAY_LIMIT": " 3 "}, "overlay_limit", 3), ({}, "overlay_limit", 64),
    ({"CODEVOUCH_BUDGET": "1234"}, "budget", 1234), ({"CODEVOUCH_RESERVE": "0.2"}, "reserve", "0.2"),
    ({"CODEVOUCH_PROGRESS_SECONDS": "0"}, "progress_seconds", 0.0),
])
def test_each_variable_reads_as_before(values: dict[str, str], attribute: str, expected: object) -> None:
    assert getattr(environment.of(values), attribute) == expected


@pytest.mark.parametrize("values, attribute, error, message", [
    ({"CODEVOUCH_BUDGET": "lots"}, "budget", InputError, "CODEVOUCH_BUDGET='lots' is not a whole number of tokens."),
    ({"CODEVOUCH_OVERLAY_LIMIT": "many"}, "overlay_limit", InputError,
     "CODEVOUCH_OVERLAY_LIMIT must be a whole number of chunks (got 'many')."),
    ({"CODEVOUCH_MATCH_THRESHOLD": "high"}, "match_threshold", ConfigError,
     "CODEVOUCH_MATCH_THRESHOLD must be a similarity between -1 and 1 (a cosine)."),
    ({"CODEVOUCH_CHROMA_TIMEOUT": "-1"}, "chroma_timeout", ConfigError,
     "CODEVOUCH_CHROMA_TIMEOUT='-1' is not a number of seconds (>= 0); unset it for the default (5 s)."),
    ({"CODEVOUCH_LEASE_TTL": "nan"}, "lease_ttl", ConfigError,
     "CODEVOUCH_LEASE_TTL='nan' is not a number of seconds (>= 0); unset it for 36 h."),
    ({"CODEVOUCH_MAX_INPUT_BYTES": "lots"}, "max_input_bytes", ConfigError,
     "CODEVOUCH_MAX_INPUT_BYTES='lots' is not a positive whole number; unset it for the default cap (8388608 bytes)."),
])
def test_each_error_keeps_its_words(values: dict[str, str], attribute: str, error: type[Exception],
                                    message: str) -> None:
    with pytest.raises(error) as caught:
        getattr(environment.of(values), attribute)
    assert str(caught.value) == message


def test_the_modules_defaults_are_the_declared_ones() -> None:
    from codevouch.commands import common, progress
    from codevouch.refs import check
    from codevouch.retriever import overlay
    from codevouch.store import chromahttp, lease, locks, settings
    from codevouch.validator import parse

    assert (locks.BUSY_TIMEOUT_S, chromahttp.DEFAULT_TIMEOUT, lease.DEFAULT_TTL_S, progress.EVERY) == (
        20.0, 5.0, 36 * 3600.0, 10.0)
    assert (common.MAX_INPUT_BYTES, parse.MAX_SNIPPETS, check.MAX_REFERENCES, overlay.EMBED_LIMIT) == (
        8 << 20, 100_000, 5_000, 64)
    assert overlay.EMBED_SECONDS == 0.5
    # A store opened without a Call (tests, benches) has the declared defaults, not the process's.
    store = settings.DEFAULT
    assert (store.chroma_url, store.chroma_timeout, store.busy_timeout, store.lease_ttl) == (
        None, 5.0, 20.0, 36 * 3600.0)


# Every numeric variable has a range; a value past either end, or not a number, is a SettingError
# (an InputError: exit 2) that names the variable. CODEVOUCH_MAX_INPUT_BYTES=9...9 (23 digits)
# ended in an OverflowError traceback from os.read.
NUMERIC = [v for v in environment.VARIABLES if v.range != "-"]
HUGE = "99999999999999999999999"


def test_every_numeric_variable_has_a_range_in_the_table() -> None:
    assert {v.name for v in NUMERIC} == {
        "CODEVOUCH_CHROMA_TIMEOUT", "CODEVOUCH_LEASE_TTL", "CODEVOUCH_BUSY_TIMEOUT", "CODEVOUCH_BUDGET",
        "CODEVOUCH_RESERVE", "CODEVOUCH_MATCH_THRESHOLD", "CODEVOUCH_PROGRESS_SECONDS", "CODEVOUCH_MAX_INPUT_BYTES",
        "CODEVOUCH_MAX_SNIPPETS", "CODEVOUCH_MAX_REFERENCES", "CODEVOUCH_OVERLAY_LIMIT", "CODEVOUCH_OVERLAY_SECONDS",
        "CODEVOUCH_SERVER_IDLE", "CODEVOUCH_SERVER_TIMEOUT", "CODEVOUCH_MAX_BRANCHES", "CODEVOUCH_GIT_TIMEOUT",
        "CODEVOUCH_GIT_MEMORY_MB", "CODEVOUCH_BUILD_NUMPY_TEXTS"}
    for var in NUMERIC:
        assert f"| `{var.name}` | {var.shown} | {var.range} |" in DOC.read_text(encoding="utf-8")


@pytest.mark.parametrize("var", NUMERIC, ids=lambda v: v.name)
@pytest.mark.parametrize("text", [HUGE, "-" + HUGE, "1e300", "-1e300", "1" + "0" * 5000, "nan", "lots"])
def test_a_value_out_of_range_is_a_usage_error_naming_the_variable(var: environment.Variable, text: str) -> None:
    if var is environment.LEASE_TTL and text == "1e300":
        text = "1e12"                   # inf is allowed for the lease; 1e300 is past its finite end too
    with pytest.raises(SettingError) as caught:
        environment.of({var.name: text}).value(var)
    assert isinstance(caught.value, InputError) and isinstance(caught.value, ConfigError)
    assert var.name in str(caught.value) and len(str(caught.value)) < 300


@pytest.mark.parametrize("var, top", [
    (environment.MAX_INPUT_BYTES, 1 << 30), (environment.MAX_SNIPPETS, 100_000_000),
    (environment.BUSY_TIMEOUT, 604800.0), (environment.LEASE_TTL, 10 * 365 * 86400.0),
    (environment.BUDGET, 100_000_000), (environment.OVERLAY_LIMIT, 100_000_000),
    (environment.GIT_MEMORY_MB, 1 << 20), (environment.GIT_TIMEOUT, 604800.0),
    (environment.BUILD_NUMPY_TEXTS, 100_000_000),
])
def test_each_end_of_a_range_is_taken_and_one_past_it_is_not(var: environment.Variable, top: float) -> None:
    assert environment.of({var.name: str(top)}).value(var) == top
    with pytest.raises(SettingError, match="out of range"):
        environment.of({var.name: str(top + 1)}).value(var)


def test_an_environment_is_frozen_equal_only_to_itself_and_survives_a_copy() -> None:
    import copy
    import pickle

    env = environment.of({"CODEVOUCH_BUSY_TIMEOUT": "7", "HOME": "/nowhere"})
    with pytest.raises(AttributeError):
        env.raw = {}  # type: ignore[misc]
    assert env == env and env != environment.of({"CODEVOUCH_BUSY_TIMEOUT": "7"})
    assert len({env, env}) == 1                 # hashable: a call's environment keys caches by identity
    for again in (copy.copy(env), copy.deepcopy(env), pickle.loads(pickle.dumps(env))):
        assert again.busy_timeout == 7.0 and again.raw == env.raw
    # Unset or empty is the default; a bad text raises where it is read, naming the variable.
    assert environment.of({}).busy_timeout == environment.of({"CODEVOUCH_BUSY_TIMEOUT": ""}).busy_timeout
    with pytest.raises(SettingError, match="CODEVOUCH_BUSY_TIMEOUT"):
        _ = environment.of({"CODEVOUCH_BUSY_TIMEOUT": "soon"}).busy_timeout
