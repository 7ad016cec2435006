"""What the benchmarks (bench/) may import from codevouch: its public API (`codevouch.__all__`)
and the internals declared below, each with why a benchmark needs it. A refactor of codevouch
that moves one of these breaks a figure; this list says which, and the test fails on any import
that is not on it (or an entry nothing imports any more), so the surface only grows on purpose.

Imports are read with `ast`: import statements, and the Python source in string constants
(the snippets a figure runs as `python -c ...` in a process of its own).
"""
from __future__ import annotations

import ast
import importlib
from collections import defaultdict
from pathlib import Path

import codevouch

BENCH = Path(__file__).resolve().parents[1] / "bench"

# "module:name" for `from module import name`, "module" for `import module`.
DECLARED = {
    # The public package, reached through the module that defines it.
    # Models and the chunker's budget: every figure embeds or chunks as a build does.
    "codevouch.embedding:FakeEmbedder": "the --fake plumbing runs, and freshness (verdicts never read vectors)",
    "codevouch.embedding:MiniLMEmbedder": "the shipped model, loaded once and timed apart from the build",
    "codevouch.embedding:CHUNK_TOKEN_BUDGET": "synthetic stores and validate's snippets are chunked to the build's budget",
    "codevouch.embedding:MODEL_NAME": "synthetic stores are named for the shipped model, as a real build names them",
    "codevouch.embedding:token_counter": "synthetic stores count tokens as the build does",
    "codevouch.embedding:embedder_by_name": "across_scale fills its synthetic stores with vectors of the model's size",
    "codevouch.embedding.numpy_minilm:numpy_minilm": "figure 2's cold-start floor: the query encoder's load alone (a -c probe)",
    # The build.
    "codevouch.indexer.build:build_index": "figures 1, 4, branches and large time or make real builds",
    "codevouch.indexer.build:EMBED_BATCH": "figure 1's bare loop embeds in the build's own batches",
    "codevouch.indexer.build:text_hash": "synthetic stores key records by the build's text hash",
    "codevouch.indexer.chunker:Chunk": "validate's snippets are chunks, as a build makes them",
    "codevouch.indexer.chunker:chunk_text": "synthetic stores and validate's snippets chunk as the build does",
    "codevouch.indexer.embedtext:embedded_text": "the encoder figure embeds real chunks as a build embeds them",
    "codevouch.indexer:overlay": "the overlay figure reads what the overlay embedded per search",
    # Search.
    "codevouch.retriever.search:search": "branches and figure 2 time the library search function itself",
    "codevouch.retriever.search:chunk_text_of": "the quality figure reads each indexed chunk's text as search does",
    "codevouch.retriever.settings:Settings": "the quality figure's rows are Settings (the tuning grid)",
    "codevouch.across:fuse": "measure_across compares the fusion with a one-in-turn merge of the same answers",
    "codevouch.store.lexical:parts": "measure_across's dump counts the query's words a hit holds, split as the lexical list does",
    "codevouch.retriever.resident:Resident": "the overlay figure runs a resident engine's work between calls",
    "codevouch.retriever.resident:library": "the overlay figure's paced session waits for the library's background work",
    "codevouch.syntax.definitions:resolve_language": "parse_speed counts the files codevouch reads as each language",
    "codevouch.syntax.lines:decode": "parse_speed decodes files as a build does",
    # The store: synthetic stores of 10k-1M records are written straight into it.
    "codevouch.store:BranchState": "synthetic stores and drift register a branch as a build would",
    "codevouch.store:BuildChange": "synthetic stores and drift commit a build's change to the ledger",
    "codevouch.store:ChunkRecord": "synthetic stores write records; the quality figure reads them",
    "codevouch.store:FileRow": "synthetic stores write the files table",
    "codevouch.store:Ledger": "several figures read or seed the ledger (chunks, files, embedding cache)",
    "codevouch.store:NewChunk": "synthetic stores add chunks as a build does",
    "codevouch.store:VectorStore": "synthetic stores write vectors; figure 2 times the store query alone",
    "codevouch.store.vectors:ANN_LEAST": "the ann-recall figure reports how many neighbours a search asks for",
    "codevouch.store.lexical:names_tests": "the quality figure counts the test queries that the names-tests rule touches",
    "codevouch.store:chunk_id": "synthetic stores give records the build's ids",
    "codevouch.store:collection_base": "figures find a branch's collection as codevouch names it",
    "codevouch.store:space_name": "figures find the vector space as codevouch names it",
    "codevouch.store:lex_key": "synthetic stores key the lexical index as a build does",
    "codevouch.store:lexical": "synthetic stores make the lexical documents a build makes",
    "codevouch.store:lexindex": "synthetic stores stage the tantivy copy as a build does",
    "codevouch.store:overlaycache": "the overlay figure empties the overlay's cache between cold runs",
    # Validation.
    "codevouch.validator:validate": "figures 4 and 5 measure the validator itself",
    "codevouch.validator:render_text": "hit_tokens counts a hit as search's text output writes it",
    "codevouch.results:HIT_CHARS": "hit_tokens counts hits at the CLI's and MCP's default bound",
    "codevouch.results:check_fields": "hit_tokens counts hits with the --fields an agent would pass",
    "codevouch.results:hits_text": "hit_tokens counts a hit as the MCP search tool's text content writes it",
    "codevouch.validator:VERDICTS": "figure 5 counts every verdict",
    "codevouch.validator:clear_caches": "figure 5's first-call figure starts from empty caches",
    # Git.
    "codevouch.worktree.git._process:PROCESSES": "across_scale counts the git processes one query starts",
    "codevouch.worktree:gitio": "synthetic stores read trees and blobs; gitpython compares against it",
    "codevouch.worktree.identity:identify": "figures find the repository's identity as an index names it",
    # Whole commands, as a process (-c probes of figure 2's cold start).
    "codevouch.cli": "figure 2's cold-start floor: importing the CLI",
}


def _imports_in(tree: ast.AST) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module and (
                node.module == "codevouch" or node.module.startswith("codevouch.")):
            found.update(f"{node.module}:{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name == "codevouch" or a.name.startswith("codevouch."))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and "codevouch" in node.value:
            try:
                found |= _imports_in(ast.parse(node.value))
            except SyntaxError:
                pass
    return found


def bench_imports() -> dict[str, set[str]]:
    """Every codevouch import under bench/, to the files that make it."""
    where: dict[str, set[str]] = defaultdict(set)
    for path in sorted(BENCH.rglob("*.py")):
        for name in _imports_in(ast.parse(path.read_text(encoding="utf-8"))):
            where[name].add(str(path.relative_to(BENCH)))
    return where


def _public(name: str) -> bool:
    module, _, attr = name.partition(":")
    return module == "codevouch" and attr in codevouch.__all__


def test_the_benchmarks_import_only_the_public_api_and_the_declared_surface() -> None:
    used = bench_imports()
    assert used, f"no codevouch import found under {BENCH}"
    undeclared = {name: sorted(files) for name, files in used.items() if not _public(name) and name not in DECLARED}
    assert undeclared == {}, "declare these in DECLARED (with why), or use codevouch's public API"


def test_every_declared_entry_is_used_and_exists() -> None:
    used = bench_imports()
    assert sorted(set(DECLARED) - set(used)) == [], "no longer imported by bench/: drop from DECLARED"
    missing = []
    for name in DECLARED:
        module, _, attr = name.partition(":")
        try:
            found = importlib.import_module(module)
            if attr and not hasattr(found, attr):
                importlib.import_module(f"{module}.{attr}")  # a submodule not yet imported by its package
        except ImportError:
            missing.append(name)
    assert missing == [], "codevouch no longer has these: the benchmarks that import them break"


def test_the_walk_finds_imports_in_code_and_in_c_snippets() -> None:
    tree = ast.parse('from codevouch.store import Ledger\nimport codevouch.cli\n'
                     'CMD = ["python", "-c", "from codevouch.validator import validate"]\n'
                     'from codevouch_bench.lib import common\n')
    assert _imports_in(tree) == {"codevouch.store:Ledger", "codevouch.cli", "codevouch.validator:validate"}
