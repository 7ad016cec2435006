"""Whether a hit matches its query by name, and whether it is a good match (pure)."""
from __future__ import annotations

import pytest

from codevouch.retriever.matching import DEFINITION_NAME, good_match, matches_by_name, spells
from codevouch.retriever.query import read
from codevouch.retriever.search import DEFINITION_NAME as SEARCH_LABEL
from codevouch.retriever.settings import DEFAULT

MODES = ("hybrid", "dense", "lexical")


@pytest.mark.parametrize(("query", "symbol"), [
    ("Client.send", "Client.send"),          # the qualified name
    ("send", "Client.send"),                 # its last component
    ("client.SEND", "Client.send"),          # whatever the case
    ("raise for status", "Response.raise_for_status"),   # the same identifier words
    ("g zip decoder", "GZipDecoder"),
    ("gzip decoder", "GZipDecoder"),
    ("parse", "Reader::parse"),              # Rust and C++ paths
    ("parse", "Reader#parse"),               # Ruby's instance methods
    ("cancel", "Order.create, Order.cancel"),   # any definition of a merged chunk
])
def test_the_query_spells_the_symbol(query: str, symbol: str) -> None:
    assert all(spells(read(query, mode, DEFAULT), symbol) for mode in MODES)   # the query as a search reads it
    assert spells(read(f"  {query}\n", "hybrid", DEFAULT), symbol)


@pytest.mark.parametrize(("query", "symbol"), [
    ("send a request", "Client.send"),       # a sentence that uses the name
    ("Client", "Client.send"),               # a qualifier is not the name
    ("module", "<module>"),                  # module-level code has no name
    ("", ""),
])
def test_the_query_does_not_spell_the_symbol(query: str, symbol: str) -> None:
    assert not any(spells(read(query, mode, DEFAULT), symbol) for mode in MODES)


def test_a_definition_the_search_found_by_name_matches_by_name() -> None:
    assert SEARCH_LABEL == DEFINITION_NAME
    sentence, name = read("how do we cancel", "hybrid", DEFAULT), read("cancel", "hybrid", DEFAULT)
    assert matches_by_name(sentence, "Order.cancel", (DEFINITION_NAME, "lexical"))
    assert matches_by_name(name, "Order.cancel", ("dense",))
    assert not matches_by_name(sentence, "Order.cancel", ("lexical", "dense"))
    assert matches_by_name(sentence.as_sentence(), "Order.cancel", (DEFINITION_NAME,))
    assert matches_by_name(name.as_sentence(), "Order.cancel", ())   # read as prose, the same words


def test_a_good_match_is_a_name_match_or_a_similarity_at_the_threshold() -> None:
    assert good_match(True, None, None) is True          # a name match needs no similarity
    assert good_match(True, 0.1, 0.5) is True
    assert good_match(False, 0.5, 0.5) is True           # at the threshold
    assert good_match(False, 0.49, 0.5) is False
    assert good_match(False, None, 0.5) is None          # lexical mode: no similarity
    assert good_match(False, 0.9, None) is None          # a model never measured
