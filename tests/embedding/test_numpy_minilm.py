"""The NumPy query encoder must give the packaged model's vectors (it replaces torch at search time)."""
from __future__ import annotations

import numpy as np
import pytest

from codevouch.embedding import MiniLMEmbedder
from codevouch.embedding.numpy_minilm import numpy_minilm

pytestmark = pytest.mark.model


def test_numpy_encoder_matches_sentence_transformers() -> None:
    texts = ["where do we cancel orders", "def area(r):\n    return 3.14 * r * r\n" * 30,
             "caf\xe9 \u65e5\u672c\u8a9e", "x"]
    ours = np.array(numpy_minilm().embed(texts))
    reference = np.array(MiniLMEmbedder().embed(texts))
    cosines = (ours * reference).sum(axis=1)
    assert cosines.min() > 0.9999, cosines
    assert np.allclose(np.linalg.norm(ours, axis=1), 1.0, atol=1e-5)


def test_numpy_encoder_pass_stays_float32() -> None:
    # A NumPy float64 scalar anywhere in the pass promotes the hidden state to float64, and then
    # every matmul converts its weights to float64 first: twice the cost (measured: 37 vs 18 ms).
    assert numpy_minilm()._forward("where do we cancel orders").dtype == np.float32
