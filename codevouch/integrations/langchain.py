"""`CodevouchCompressor`: a LangChain document compressor (the `BaseDocumentCompressor`
interface) that vouches for retrieved code windows against the git working tree.

    compressor = CodevouchCompressor(repo="path/to/repo")
    docs = compressor.compress_documents(retriever.invoke(query), query)
    # or ContextualCompressionRetriever(base_compressor=compressor, base_retriever=retriever)

Documents carry `metadata["source"]` (a path) and, from a splitter with `add_start_index=True`,
`metadata["start_index"]`; `commit`, `blob_sha`, `start_line`, `end_line` are used when present.
A Document that cannot be read (no `source`) is dropped as excluded; the others are still judged.
Needs the `langchain` extra (langchain-core); importing this module imports it.
"""
from __future__ import annotations

from collections.abc import Sequence

from langchain_core.callbacks import Callbacks
from langchain_core.documents import BaseDocumentCompressor, Document

from codevouch.integrations.windows import judge, langchain_item


class CodevouchCompressor(BaseDocumentCompressor):
    """Keeps usable and stale-but-ok documents, each with its verdict and citation header in its
    metadata (`codevouch_*` keys); drops historical-only and excluded ones, or, with
    `keep_history=True`, gives a historical-only one the current code of its symbol instead."""

    repo: str
    commit: str | None = None          # the commit the documents were cut at, where they carry none
    keep_history: bool = False

    def compress_documents(self, documents: Sequence[Document], query: str,
                           callbacks: Callbacks | None = None) -> Sequence[Document]:
        items = [langchain_item(d.page_content, d.metadata, d.id, self.commit) for d in documents]
        kept = []
        for doc, judged in zip(documents, judge(self.repo, items, "langchain", keep_history=self.keep_history)):
            if judged.text is not None:
                kept.append(Document(page_content=judged.text, metadata={**doc.metadata, **judged.metadata},
                                     id=doc.id))
        return kept
