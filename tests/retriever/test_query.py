"""The query as the name tier reads it: names, acronyms as words, qualified names (pure)."""
from __future__ import annotations

from codevouch.retriever.query import Qualified, qualified, read
from codevouch.retriever.settings import DEFAULT, Settings
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
