"""MiniLM (BERT, 6 layers) forward pass in NumPy, for embedding a search query.

Importing sentence-transformers costs ~5-8 s on this CPU, most of a cold `codevouch search`.
A query is a dozen tokens, so the same model run in NumPy from the same safetensors weights
is milliseconds and starts in a fraction of a second. A build of a few texts uses it too (a
one-file commit: no seconds of torch import); a bigger one uses torch (batched, about twice as
fast per text): embedding.build_encoder. Tests check that both give the same vectors.

One query's matrices are a dozen rows: BLAS threads cost more to wake than they save, and
on a busy machine OpenBLAS's spinning threads turned a 5 ms pass into 40 ms-2 s (measured on
2 shared cores). So the pass runs with one BLAS thread, on weights transposed once at load.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path

import numpy as np

from codevouch.caches import clearable

LAYERS = 6
HEADS = 12
EPS = 1e-12
SQRT_HALF = float(np.sqrt(0.5))


def _layer_norm(x: np.ndarray, w: np.ndarray, b: np.ndarray) -> np.ndarray:
    x = x - x.mean(-1, keepdims=True)
    var = (x * x).mean(-1, keepdims=True)
    return x / np.sqrt(var + np.float32(EPS)) * w + b


def _erf(x: np.ndarray) -> np.ndarray:
    # Abramowitz & Stegun 7.1.26 (|error| < 1.5e-7): NumPy has no erf, and BERT's GELU is exact.
    # Python float constants keep float32 arrays float32 (a NumPy float64 scalar would not).
    sign = np.sign(x)
    a = np.abs(x)
    t = 1.0 / (1.0 + 0.3275911 * a)
    poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))))
    return sign * (1.0 - poly * np.exp(-a * a))


def _gelu(x: np.ndarray) -> np.ndarray:
    return 0.5 * x * (1.0 + _erf(x * SQRT_HALF))


class NumpyMiniLM:
    def __init__(self, model_dir: Path, max_tokens: int = 256) -> None:
        from safetensors.numpy import load_file
        from threadpoolctl import ThreadpoolController
        from tokenizers import Tokenizer

        weights = load_file(str(model_dir / "model.safetensors"))
        # `h @ W.T + b` with W.T made contiguous once, instead of a strided view per call.
        self.w = {k: (np.ascontiguousarray(v.T) if k.startswith("encoder.") and k.endswith(".weight")
                      and v.ndim == 2 else v) for k, v in weights.items()}
        # Query, key and value projections as one (384, 1152) matrix: one BLAS call, not three.
        for i in range(LAYERS):
            p = f"encoder.layer.{i}.attention.self."
            for part in ("weight", "bias"):
                names = [f"{p}{m}.{part}" for m in ("query", "key", "value")]
                self.w[f"{p}qkv.{part}"] = np.concatenate([self.w.pop(n) for n in names], axis=-1)
        self._blas = ThreadpoolController()
        self.tok = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        self.tok.no_padding()
        self.tok.enable_truncation(max_tokens)

    def embed_one(self, text: str) -> np.ndarray:
        with self._blas.limit(limits=1, user_api="blas"):
            return self._forward(text)

    def _forward(self, text: str) -> np.ndarray:
        w = self.w
        ids = np.array(self.tok.encode(text).ids)
        n = len(ids)
        x = (w["embeddings.word_embeddings.weight"][ids] + w["embeddings.position_embeddings.weight"][:n]
             + w["embeddings.token_type_embeddings.weight"][0])
        x = _layer_norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"])
        d = x.shape[1] // HEADS
        scale = 1.0 / math.sqrt(d)  # a Python float: the pass stays float32
        for i in range(LAYERS):
            p = f"encoder.layer.{i}."

            def lin(h: np.ndarray, name: str, p: str = p) -> np.ndarray:
                return h @ w[p + name + ".weight"] + w[p + name + ".bias"]

            q, k, v = lin(x, "attention.self.qkv").reshape(n, 3, HEADS, d).transpose(1, 2, 0, 3)
            scores = (q * scale) @ k.transpose(0, 2, 1)
            scores = np.exp(scores - scores.max(-1, keepdims=True))
            ctx = (scores / scores.sum(-1, keepdims=True)) @ v
            attn = lin(ctx.transpose(1, 0, 2).reshape(n, -1), "attention.output.dense")
            x = _layer_norm(attn + x, w[p + "attention.output.LayerNorm.weight"],
                            w[p + "attention.output.LayerNorm.bias"])
            ff = lin(_gelu(lin(x, "intermediate.dense")), "output.dense")
            x = _layer_norm(ff + x, w[p + "output.LayerNorm.weight"], w[p + "output.LayerNorm.bias"])
        pooled = x.mean(0)  # one unpadded sequence: mean pooling over all tokens
        return pooled / np.linalg.norm(pooled)

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return [self.embed_one(t).astype(np.float32).tolist() for t in texts]


@clearable
@lru_cache(maxsize=1)
def numpy_minilm() -> NumpyMiniLM:
    from codevouch.embedding.model_files import model_path

    return NumpyMiniLM(model_path())
