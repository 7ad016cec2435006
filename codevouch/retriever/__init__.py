"""Retrieval: query embedding, dense and lexical search on a branch's shared space, fusion,
collapse, text read back from git (search.py; its tantivy lists in lexlists.py, each cut to the
branch by members.py, all built from one search's facts, searchrun.py); the search modes
(mode.py, re-exported from codevouch.vocabulary). A search takes a SearchRequest
(codevouch.request) whole. Import from the modules: this package
imports nothing, so `retriever.mode` stays cheap."""
