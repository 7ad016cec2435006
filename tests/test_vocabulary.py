"""The shared words (codevouch/vocabulary.py; retriever/mode.py re-exports the modes): each spelled once, and a member
written to disk or JSON reads back equal to it."""
from __future__ import annotations

import json
import sqlite3
from typing import get_args

import codevouch
from codevouch import api, vocabulary
from codevouch.retriever.mode import SEARCH_MODES, SearchMode
from codevouch.validator.model import KIND_REASON, REASONS, VERDICTS
from codevouch.validator.shapes import INPUT_FORMATS
from codevouch.vocabulary import CURRENT_VERDICTS, EXCLUDED_KINDS, INDEXED_KINDS, Kind, Verdict
from codevouch.worktree.rules import DEFAULT_PATTERNS, KIND_ORDER, Rules, classify_path


def test_members_are_written_as_their_strings() -> None:
    db = sqlite3.connect(":memory:")
    db.execute("CREATE TABLE t (v TEXT)")
    for member in (*Verdict, *Kind, *SearchMode):
        assert f"{member}" == str(member) == member.value == member
        assert json.loads(json.dumps({member: member}, indent=2)) == {member.value: member.value}
        db.execute("DELETE FROM t")
        db.execute("INSERT INTO t VALUES (?)", (member,))
        [(back,)] = db.execute("SELECT v FROM t").fetchall()
        assert type(back) is str and back == member and {member: 1}[back] == 1


def test_kinds_each_have_one_place() -> None:
    assert set(INDEXED_KINDS) | set(EXCLUDED_KINDS) == set(Kind) and not set(INDEXED_KINDS) & set(EXCLUDED_KINDS)
    assert set(KIND_ORDER) == set(Kind) - {Kind.SOURCE} == set(DEFAULT_PATTERNS)
    assert set(KIND_REASON) == set(EXCLUDED_KINDS)
    assert {REASONS[code].verdict for code in KIND_REASON.values()} == {Verdict.EXCLUDED}
    assert api.KINDS == ("source", "test", "docs", "config")
    found = classify_path("vendor/lib.py", Rules())
    assert type(found.kind) is Kind and found.kind == "vendor" and found.excluded


def test_verdicts_and_modes_are_spelled_once() -> None:
    assert VERDICTS == ("usable", "stale-but-ok", "historical-only", "excluded")
    assert CURRENT_VERDICTS == ("usable", "stale-but-ok")
    assert SEARCH_MODES == ("hybrid", "dense", "lexical")
    assert codevouch.Verdict is Verdict and codevouch.Kind is Kind and codevouch.SearchMode is SearchMode
    assert vocabulary.SearchMode is SearchMode and vocabulary.SEARCH_MODES is SEARCH_MODES   # mode.py re-exports them


def test_the_mcp_schema_spells_the_same_kinds_and_modes() -> None:
    from codevouch import mcp_server

    [kinds_list, _] = get_args(get_args(mcp_server.Kinds)[0])      # list[Literal[...]] | None
    assert get_args(get_args(kinds_list)[0]) == api.KINDS
    assert get_args(get_args(mcp_server.Mode)[0]) == SEARCH_MODES
    assert get_args(get_args(mcp_server.InputFormat)[0]) == INPUT_FORMATS
