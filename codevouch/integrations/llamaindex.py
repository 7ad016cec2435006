"""`CodevouchPostprocessor`: a LlamaIndex node postprocessor (the `BaseNodePostprocessor`
interface) that vouches for retrieved code nodes against the git working tree.

    post = CodevouchPostprocessor(repo="path/to/repo")
    nodes = post.postprocess_nodes(index.as_retriever().retrieve(query))
    # or index.as_query_engine(node_postprocessors=[post])

Nodes carry `metadata["file_path"]` (or `file_name`), `start_char_idx`, and their text;
`commit`, `blob_sha`, `start_line`, `end_line` in the metadata are used when present.
A node that cannot be read (no file path) is dropped as excluded; the others are still judged.
Needs the `llamaindex` extra (llama-index-core); importing this module imports it.
"""
from __future__ import annotations

from llama_index.core.bridge.pydantic import Field
from llama_index.core.postprocessor.types import BaseNodePostprocessor
from llama_index.core.schema import MetadataMode, NodeWithScore, QueryBundle

from codevouch.integrations.windows import judge, llamaindex_item


class CodevouchPostprocessor(BaseNodePostprocessor):
    """Keeps usable and stale-but-ok nodes, each with its verdict and citation header in its
    metadata (`codevouch_*` keys); drops historical-only and excluded ones, or, with
    `keep_history=True`, gives a historical-only one the current code of its symbol instead."""

    repo: str = Field(description="the git repository the nodes were cut from")
    commit: str | None = Field(default=None, description="the commit they were cut at, where they carry none")
    keep_history: bool = Field(default=False, description="replace history by the current code")

    @classmethod
    def class_name(cls) -> str:
        return "CodevouchPostprocessor"

    def _postprocess_nodes(self, nodes: list[NodeWithScore],
                           query_bundle: QueryBundle | None = None) -> list[NodeWithScore]:
        items = [llamaindex_item(n.node.get_content(metadata_mode=MetadataMode.NONE), n.node.metadata,
                                 getattr(n.node, "start_char_idx", None), n.node.node_id, self.commit) for n in nodes]
        kept = []
        for item, judged in zip(nodes, judge(self.repo, items, "llamaindex", keep_history=self.keep_history)):
            if judged.text is None:
                continue
            node = item.node.model_copy(deep=True)
            node.metadata.update(judged.metadata)
            if judged.text != item.node.get_content(metadata_mode=MetadataMode.NONE):
                node.set_content(judged.text)
            kept.append(NodeWithScore(node=node, score=item.score))
        return kept
