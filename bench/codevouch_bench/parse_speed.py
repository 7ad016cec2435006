"""Parse against embed: what chunking costs per MB of source in each of the sixteen languages,
next to what embedding the same chunks costs, so a language whose parse would be a build's
bottleneck shows.

For each real repository (a pinned release of a public project: the sdists and bare mirrors the
other figures use), every file codevouch reads as the row's language is chunked as a build
chunks it (`chunk_text` with the packaged model's token counter and the build's token budget),
and the CPU seconds are counted (`time.process_time`: the cores are shared, wall time would
count other people's work). Then a sample of its chunks is embedded by the packaged model the
way a build embeds (`MiniLMEmbedder.embed`: torch, in batches), CPU seconds per chunk, and scaled by the
language's chunks per MB. CPU seconds, not wall: torch's threads are counted too.

    CODEVOUCH_BENCH_GIT_MIRRORS=/path/to/mirrors python -m codevouch_bench.parse_speed --out X.json
"""
from __future__ import annotations

import random
import statistics
import time
from typing import Any

from codevouch_bench.lib import corpus
from codevouch_bench.lib.cli import parser
from codevouch_bench.lib.common import RESULTS, log, machine, write_figure
from codevouch_bench.lib.config import LANGUAGE_EVOLUTIONS, WINDOWS_HELD_OUT
from codevouch_bench.names_scripting import CORPORA as SCRIPTING

OUT = RESULTS / "bench-parse-speed.json"
SAMPLE = 48          # chunks embedded per language (seeded choice)
SEED = 20261206


def corpora() -> list[tuple[str, str, str, tuple[str, ...]]]:
    """(label, spec, language, subdirectories): the newer release of each held-out pair and
    language history, and the names figure's scripting repositories."""
    rows = [(w.name.split(" → ")[0].split(" ")[0] + " " + w.name.split(" → ")[1], w.new, w.language, w.subdirs)
            for w in WINDOWS_HELD_OUT]
    languages = ("c", "cpp", "csharp", "kotlin", "swift", "ruby")
    for language, (_, new) in zip(languages, LANGUAGE_EVOLUTIONS):
        rows.append((new.split("/")[-1].split("@")[0], new, language, ()))
    for c in SCRIPTING:
        if any(r[2] == c.language for r in rows):
            continue
        rows.append((c.label, f"git:https://github.com/{c.mirror.replace('+', '/')}@{c.commit}", c.language, ()))
    return rows


def measure(label: str, spec: str, language: str, subdirs: tuple[str, ...], embed: Any,
            count_tokens: Any) -> dict[str, Any]:
    from codevouch.embedding import CHUNK_TOKEN_BUDGET
    from codevouch.indexer.chunker import chunk_text
    from codevouch.syntax.definitions import resolve_language
    from codevouch.syntax.lines import decode

    root = corpus.extract(spec)
    texts = []
    for path in corpus.files_of(root, subdirs):
        rel = path.relative_to(root).as_posix()
        data = path.read_bytes()
        if b"\0" in data[:8192] or len(data) > 1_000_000:
            continue
        text = decode(data)
        if resolve_language(rel, None, text) == language:
            texts.append((rel, text))
    size = sum(len(t.encode()) for _, t in texts)
    started = time.process_time()
    chunks = [c.text for rel, text in texts for c in chunk_text(text, rel, count_tokens, CHUNK_TOKEN_BUDGET)[0]]
    chunk_cpu = time.process_time() - started
    sample = random.Random(SEED).sample(chunks, min(SAMPLE, len(chunks)))
    started = time.process_time()
    embed(sample)
    per_chunk = (time.process_time() - started) / max(1, len(sample))
    mb = size / 1e6
    chunk_per_mb, embed_per_mb = chunk_cpu / mb, per_chunk * len(chunks) / mb
    log(f"{label} ({language}): {len(texts)} files, {mb:.2f} MB, {len(chunks)} chunks; chunking "
        f"{chunk_per_mb:.2f} CPU s/MB, embedding {embed_per_mb:.1f} CPU s/MB")
    return {"label": label, "spec": spec, "language": language, "files": len(texts), "mb": round(mb, 3),
            "chunks": len(chunks), "chunks_per_mb": round(len(chunks) / mb, 1),
            "chunk_cpu_s_per_mb": round(chunk_per_mb, 3), "embed_cpu_s_per_chunk": round(per_chunk, 4),
            "embed_cpu_s_per_mb": round(embed_per_mb, 2),
            "chunk_share": round(chunk_per_mb / (chunk_per_mb + embed_per_mb), 4)}


def main() -> None:
    ap = parser(__doc__.split("\n")[0])
    ap.add_argument("--only", nargs="*", help="languages to run")
    args = ap.parse_args()
    from codevouch.embedding import MiniLMEmbedder, token_counter

    started = machine()
    count_tokens = token_counter()
    embedder = MiniLMEmbedder()
    encode = embedder.embed          # what a whole build embeds with: torch, in batches
    encode(["warm up the model"])
    rows = [measure(label, spec, language, subdirs, encode, count_tokens)
            for label, spec, language, subdirs in corpora() if not args.only or language in args.only]
    shares = [r["chunk_share"] for r in rows]
    data = {"command": "python -m codevouch_bench.parse_speed", "machine": started, "embedder": embedder.name,
            "sample": SAMPLE, "rows": rows,
            "chunk_share_median": round(statistics.median(shares), 4) if shares else None,
            "chunk_share_max": max(shares) if shares else None}
    write_figure(args.out, OUT, data)


if __name__ == "__main__":
    main()
