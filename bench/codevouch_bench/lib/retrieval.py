"""The retrieval methods compared in the quality figure, and their scoring.

Every dense method embeds with the same model (MiniLM) into the same kind of store
(embedded Chroma, cosine, through codevouch's VectorStore), so only the chunking differs.
"""
from __future__ import annotations

import math
import random
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from codevouch_bench.lib.docstrings import Target

WINDOW_LINES = 40


@dataclass(frozen=True)
class Span:
    """A retrievable piece of a file: where it is, what names it carries, its text."""
    path: str
    start_line: int
    end_line: int
    text: str
    symbol: str | None = None   # codevouch chunks only: ", "-joined qualified names


def line_windows(path: str, text: str, size: int = WINDOW_LINES) -> list[Span]:
    """Consecutive non-overlapping windows of `size` lines (blank-only windows dropped)."""
    lines = text.split("\n")
    spans = []
    for start in range(0, len(lines), size):
        part = lines[start:start + size]
        if any(line.strip() for line in part):
            spans.append(Span(path, start + 1, start + len(part), "\n".join(part)))
    return spans


LANGCHAIN_LANGUAGE = {".py": "PYTHON", ".rs": "RUST", ".js": "JS", ".mjs": "JS", ".cjs": "JS", ".jsx": "JS",
                      ".ts": "TS", ".tsx": "TS", ".mts": "TS", ".go": "GO", ".java": "JAVA", ".md": "MARKDOWN",
                      ".rst": "RST", ".html": "HTML"}


def langchain_chunks(path: str, text: str, chunk_size: int | None = None, overlap: int | None = None) -> list[Span]:
    """RecursiveCharacterTextSplitter.from_language (its defaults, 4000/200, unless sizes are
    given; the plain splitter for files of no listed language), mapped back to lines.

    Its chunks are stripped substrings of the file (overlapping by up to `overlap` characters),
    so each is located by searching forward from the previous chunk's start.
    """
    from langchain_text_splitters import Language, RecursiveCharacterTextSplitter

    lang = LANGCHAIN_LANGUAGE.get(Path(path).suffix)
    sizes = {} if chunk_size is None else {"chunk_size": chunk_size, "chunk_overlap": overlap or 0}
    splitter = (RecursiveCharacterTextSplitter.from_language(Language[lang], **sizes) if lang
                else RecursiveCharacterTextSplitter(**sizes))
    spans: list[Span] = []
    cursor = 0
    for chunk in splitter.split_text(text):
        pos = text.find(chunk, cursor)
        if pos < 0:
            pos = text.find(chunk)
        if pos < 0:  # not a substring (never seen so far): leave it out rather than guess lines
            continue
        start = text.count("\n", 0, pos) + 1
        spans.append(Span(path, start, start + chunk.count("\n"), chunk))
        cursor = pos + 1
    return spans


# -- scoring -------------------------------------------------------------------------------

def _short(name: str) -> str:
    return re.split(r"\.|::", name.strip())[-1]


def symbol_hit(span: Span, target: Target) -> bool:
    """Symbol level: same file, overlapping lines, and its symbol names the function."""
    if span.path != target.path or span.end_line < target.start_line or span.start_line > target.end_line:
        return False
    names = [n.strip() for n in (span.symbol or "").split(",")]
    return target.qualname in names or any(_short(n) == target.name for n in names)


def overlap_hit(span: Span, target: Target) -> bool:
    """Line level, the same rule for every method: right file, lines overlapping the function."""
    return span.path == target.path and span.start_line <= target.end_line and span.end_line >= target.start_line


def window_hit(span: Span, target: Target) -> bool:
    """A window without symbols "names" the function when it holds the def line."""
    return span.path == target.path and span.start_line <= target.def_line <= span.end_line


def rank_of(ranked: Sequence[Span], target: Target, match: Callable[[Span, Target], bool]) -> int | None:
    for i, span in enumerate(ranked[:10], 1):
        if match(span, target):
            return i
    return None


def scores(ranks: Sequence[int | None]) -> dict[str, Any]:
    n = len(ranks)
    if n == 0:
        return {"queries": 0}
    return {"queries": n,
            "mrr@10": round(sum(1 / r for r in ranks if r) / n, 3),
            "recall@1": round(sum(1 for r in ranks if r and r <= 1) / n, 3),
            "recall@5": round(sum(1 for r in ranks if r and r <= 5) / n, 3),
            "recall@10": round(sum(1 for r in ranks if r and r <= 10) / n, 3)}



def paired(a: Sequence[int | None], b: Sequence[int | None], rounds: int = 2000, seed: int = 0) -> dict[str, Any]:
    """Method a against method b on the same queries: how many queries each ranks better, and the
    difference of their MRR@10 (a - b) with a 95% interval from resampling the queries (a
    paired bootstrap): with 40 queries, one query moving from rank 1 to 2 is 0.0125 of MRR."""
    assert len(a) == len(b), "paired scores need the same queries"
    rr = [(1 / x if x else 0.0) - (1 / y if y else 0.0) for x, y in zip(a, b)]
    n = len(rr)
    if n == 0:
        return {"queries": 0}
    rng = random.Random(seed)
    means = sorted(sum(rr[rng.randrange(n)] for _ in range(n)) / n for _ in range(rounds))
    return {"queries": n, "better": sum(1 for d in rr if d > 0), "worse": sum(1 for d in rr if d < 0),
            "mrr@10_difference": round(sum(rr) / n, 3),
            "interval_95": [round(means[int(0.025 * rounds)], 3), round(means[int(0.975 * rounds) - 1], 3)]}

def ratio(a: Sequence[int | None], b: Sequence[int | None], rounds: int = 2000, seed: int = 0) -> dict[str, Any]:
    """Method a's MRR@10 divided by method b's on the same queries, with a 95% interval from
    resampling the queries (a paired bootstrap, as `paired`): the form of a target such as "at
    least 0.9x the baseline". None where b scores 0 (in the sample or a resample's bound)."""
    assert len(a) == len(b), "paired scores need the same queries"
    ra = [1 / x if x else 0.0 for x in a]
    rb = [1 / y if y else 0.0 for y in b]
    n = len(ra)
    if n == 0 or not sum(rb):
        return {"queries": n, "ratio": None}
    rng = random.Random(seed)
    draws = []
    for _ in range(rounds):
        picks = [rng.randrange(n) for _ in range(n)]
        low = sum(rb[i] for i in picks)
        draws.append(sum(ra[i] for i in picks) / low if low else math.inf)
    draws.sort()
    high = draws[int(0.975 * rounds) - 1]
    return {"queries": n, "ratio": round(sum(ra) / sum(rb), 2),
            "interval_95": [round(draws[int(0.025 * rounds)], 2), round(high, 2) if high != math.inf else None]}


# -- BM25 ------------------------------------------------------------------------------------

_WORD = re.compile(r"[A-Za-z][a-z]*|[A-Z]+(?![a-z])|\d+")
STOPWORDS = frozenset("a an and are as at be by for from has have if in into is it its of on or "
                      "that the this to was were will with".split())


def code_tokens(text: str) -> list[str]:
    """Identifiers split on snake_case and camelCase, lower-cased, English stopwords out:
    without the split, `get_app` never matches the query word "app"."""
    return [w.lower() for w in _WORD.findall(text) if w.lower() not in STOPWORDS and len(w) > 1]


class BM25Index:
    def __init__(self, spans: Sequence[Span]) -> None:
        import bm25s

        self.spans = list(spans)
        self._bm25 = bm25s.BM25()
        self._bm25.index([code_tokens(s.text) for s in self.spans], show_progress=False)

    def search(self, query: str, k: int = 10) -> list[Span]:
        tokens = code_tokens(query)
        if not tokens:
            return []
        k = min(k, len(self.spans))
        docs, _scores = self._bm25.retrieve([tokens], k=k, show_progress=False)
        return [self.spans[int(i)] for i in docs[0]]


class DenseMatrix:
    """Exact cosine top-k over spans' embeddings (normalised vectors, one matrix product)."""

    def __init__(self, spans: Sequence[Span], embed: Callable[[list[str]], list[list[float]]]) -> None:
        import numpy as np

        self.spans = list(spans)
        self.matrix = np.asarray(embed([s.text for s in self.spans]), dtype="float32").reshape(len(self.spans), -1)

    def search(self, qvec: Sequence[float], k: int = 10) -> list[Span]:
        import numpy as np

        if not self.spans:
            return []
        sims = self.matrix @ np.asarray(qvec, dtype="float32")
        top = np.argsort(-sims, kind="stable")[:k]
        return [self.spans[int(i)] for i in top]
