"""The query as the name tier reads it: names, acronyms as words, qualified names (pure)."""
from __future__ import annotations

import pytest

from codevouch.retriever import lexlists
from codevouch.retriever.query import Qualified, qualified, read
from codevouch.retriever.settings import DEFAULT, Settings
from codevouch.store import lexical
from codevouch.store.lexical import query_name_keys


def test_a_qualified_name_is_read_as_each_qualifier_and_rest() -> None:
    q = read("chi.URLParam", "hybrid", DEFAULT)
    assert q.names == ("chi.urlparam",)
    assert q.qualified == (Qualified("chi", "urlparam"),)
    assert q.lookup == ["chi.urlparam", "urlparam"]
    quoted = read("`chi.URLParam`", "hybrid", DEFAULT)     # in backticks, as an answer writes it
    assert (quoted.names, quoted.qualified) == (q.names, q.qualified)
    assert qualified("pkg.Type.Method") == [Qualified("pkg", "type.method"), Qualified("pkg.Type", "method")]
    assert qualified("crate::routing::Router")[-1] == Qualified("crate::routing", "router")
    # A token written as code in a short query is read too; a sentence's tokens are not.
    assert read("chi.URLParam key", "hybrid", DEFAULT).qualified == (Qualified("chi", "urlparam"),)
    assert read("how does the router read chi.URLParam", "hybrid", DEFAULT).qualified == ()


def test_dense_mode_or_no_tier_reads_no_names() -> None:
    assert read("chi.URLParam", "dense", DEFAULT).lookup == []
    assert read("chi.URLParam", "hybrid", Settings(name_first_words=0)).lookup == []


def test_an_acronym_or_a_word_in_a_sentence_names_nothing() -> None:
    assert [k for k in query_name_keys("register a custom HTTP method") if not k.startswith("~")] == []
    assert [k for k in query_name_keys("parse the URL and JSON body by ID") if not k.startswith("~")] == []
    # The whole query, or written as code, it is a name.
    assert query_name_keys("HTTP") == ["http", "~http"]
    assert "http" in query_name_keys("the `HTTP` constant")
    assert query_name_keys("`Mux`") == ["mux", "~mux"]
    assert "httpserver" in query_name_keys("start an HTTPServer now")


@pytest.mark.parametrize("text", ["OrderService.cancel_order", "  crate::routing::Router\n", "raise for status",
                                  "test fixtures for the ledger", "pytest fixture that builds an index", "`spelled_as_defined`",
                                  "where are exclusion rules loaded", "HTTPClient's cookie_jar", "", "   "])
def test_the_query_is_read_once_into_what_every_stage_needs(text: str) -> None:
    """What a search's stages and the api's name match read from the Query is what the store's
    functions say of its text, in every mode, and still so once it is read as a sentence."""
    for mode in ("hybrid", "dense", "lexical"):
        q = read(text, mode, DEFAULT)
        for each in (q, q.as_sentence()):
            assert each.text == text and each.stripped == text.strip()
            assert each.words == tuple(lexical.terms(text)) and each.parts == tuple(lexical.parts(text))
            assert each.tests == lexical.names_tests(text)
    for sym in ("OrderService.cancel_order", "cancel_order", "Router", "spelled_as_defined", "Ledger"):
        assert lexical.spelled_exactly(read(text, "hybrid", DEFAULT).stripped, sym) == lexical.spelled_as_defined(text, sym)


def test_the_lexical_terms_come_from_the_query_as_read() -> None:
    """lexlists.terms sends the query's words, and in hybrid mode its word pairs, as the text's."""
    for text in ("the cookie jar", "HTTPClient cookie_jar", "raise for status", "Router"):
        for how in ("phrase", "joined", None):
            settings = Settings(lexical_pairs=how)
            sent = lexlists.terms(read(text, "hybrid", settings), "hybrid", settings)
            assert sent == list(dict.fromkeys(lexical.terms(text) + lexlists.pairs_of(lexical.parts(text), how)))
        assert lexlists.terms(read(text, "lexical", DEFAULT), "lexical", DEFAULT) == list(dict.fromkeys(lexical.terms(text)))
