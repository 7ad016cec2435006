"""One place per language (issue 44, item 4): a language is its module in syntax/langs/ and a line
in syntax/registry.py, and the readers of the parse follow the registry."""
from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

import codevouch
from codevouch import clear_caches
from codevouch.indexer.chunker import chunk_text
from codevouch.syntax import registry
from codevouch.syntax.definitions import find_definitions
from codevouch.syntax.languages import detect_language, get_language
from codevouch.syntax.spec import CONTAINER, LEAF, Language, LanguageSpec

PACKAGE = Path(codevouch.__file__).parent

# A toy language: Python's grammar under another name and extension, and rules of its own (no
# decorators, methods only as members of a class).
TOY = Language(
    name="toy",
    grammar=("tree_sitter_python", "language"),
    extensions={".toy": "toy"},
    syntax=LanguageSpec(definitions={"class_definition": CONTAINER, "function_definition": LEAF},
                        blocks=frozenset({"module", "block"})),
    keywordless=True,
    keywords=("def",),
    fences=("toy",),
)

TOY_SOURCE = "class Greeter:\n    def hello(self):\n        return 'hi'\n\n\ndef main():\n    Greeter().hello()\n"


@pytest.fixture
def with_toy(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(registry, "LANGUAGES", (*registry.LANGUAGES, TOY))
    clear_caches()
    yield
    monkeypatch.undo()
    clear_caches()


def test_a_language_added_through_its_spec_is_detected_parsed_chunked_and_named(with_toy: None) -> None:
    assert detect_language("src/app.toy") == "toy"
    assert get_language("toy") is not None
    assert find_definitions(TOY_SOURCE, "src/app.toy") == {
        "Greeter": [(1, 3)], "Greeter.hello": [(2, 3)], "main": [(6, 7)]}
    chunks, language = chunk_text(TOY_SOURCE, "src/app.toy", lambda text: len(text.split()), budget=8)
    assert language == "toy"
    # keywordless: the chunker records what the parse says each chunk defines (Python does not)
    assert [(c.symbol, c.defines, c.start_line, c.end_line) for c in chunks] == [
        ("Greeter", ("Greeter", "Greeter.hello"), 1, 3), ("main", ("main",), 6, 7)]


def test_without_the_toy_nothing_reads_it() -> None:
    assert detect_language("src/app.toy") is None
    assert find_definitions(TOY_SOURCE, "src/app.toy") == {}


def test_the_registry_lists_each_language_once_with_its_own_extensions() -> None:
    names = [lang.name for lang in registry.LANGUAGES]
    assert len(names) == len(set(names))
    extensions = [ext for lang in registry.LANGUAGES for ext in lang.extensions]
    shared = {ext for lang in registry.LANGUAGES if lang.claims is not None for ext in lang.extensions}
    assert len([e for e in extensions if e not in shared]) == len(set(extensions) - shared)
    assert all(ext.startswith(".") and ext == ext.lower() for ext in extensions)
    langs = {p.stem for p in (PACKAGE / "syntax" / "langs").glob("*.py")} - {"__init__"}
    assert langs == {"python", "javascript", "typescript", "go", "rust", "java",
                     "ruby", "php", "scala", "bash", "lua", "c", "cpp", "csharp", "kotlin", "swift"}


# Where a language may still be named outside its own module and the registry, and why:
# - check-refs resolves imports in Python (refs/extract.py, which fences hold them; refs/worktree.py
#   and refs/check.py, how a module maps to a file) and relative specifiers in JavaScript and
#   TypeScript (refs/check.py, the candidate files of `./a`): per-language resolvers to move next;
# - worktree/rules.py's default test and generated patterns (`*_test.go`): their order is recorded
#   in every branch's rules, so they move with the next change of the defaults (spec.Language).
_REFS = {"refs/extract.py", "refs/worktree.py", "refs/check.py"}
_ALLOWED = {"python": _REFS, "javascript": _REFS, "typescript": _REFS, "tsx": _REFS}
_RULES = "worktree/rules.py"


def _literals(path: Path) -> set[str]:
    """The string literals of a module that could name a language: no whitespace (prose in a
    docstring or a message names languages freely)."""
    return {node.value for node in ast.walk(ast.parse(path.read_text()))
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and not re.search(r"\s", node.value)}


def test_a_language_is_named_only_in_its_module_and_the_registry() -> None:
    """No string literal outside syntax/langs/ is a language's name or holds one of its
    extensions as a suffix, glob or path (`.go`, `*_test.go`, `/index.ts`), but the ones listed."""
    named: dict[str, set[str]] = {}
    for path in PACKAGE.rglob("*.py"):
        rel = path.relative_to(PACKAGE).as_posix()
        if rel.startswith("syntax/langs/") or rel == "engine/paths.py":     # paths: the package's own sources
            continue
        literals = _literals(path)
        for lang in registry.LANGUAGES:
            if any(lit == lang.name or any(re.search(re.escape(ext) + r"\b", lit) for ext in lang.extensions)
                   for lit in literals):
                named.setdefault(lang.name, set()).add(rel)
    assert named, "the scan found nothing at all: it no longer reads the modules"
    for lang in registry.LANGUAGES:
        assert named.get(lang.name, set()) <= _ALLOWED.get(lang.name, set()) | {_RULES}, lang.name


# A language whose grammar wheel is not installed: its files are text windows and the build says so.
BROKEN = Language(
    name="broken",
    grammar=("tree_sitter_not_installed_here", "language"),
    extensions={".brk": "broken"},
    syntax=LanguageSpec(definitions={"function_definition": LEAF}),
)


def test_a_language_whose_grammar_fails_to_load_is_text_and_the_build_says_so(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from codevouch import Index
    from codevouch.embedding import FakeEmbedder
    from tests.clihelp import FAKE, cv
    from tests.gitrepo import Repo

    monkeypatch.setattr(registry, "LANGUAGES", (*registry.LANGUAGES, BROKEN))
    clear_caches()
    try:
        repo = Repo(tmp_path / "repo")
        repo.commit_files({"a.brk": "def f():\n    pass\n", "b.py": "def g():\n    pass\n"})
        [summary] = Index(repo.root, tmp_path / "index", embedder=FakeEmbedder()).build()
        assert summary.indexed_files == 2 and summary.chunks == 2
        assert list(summary.text_only) == ["broken"]
        assert "tree_sitter_not_installed_here" in summary.text_only["broken"]
        clear_caches()
        out = cv("index", "build", "--repo", str(repo.root), *FAKE, index=tmp_path / "index2")
        assert out.returncode == 0, out.stderr
        assert "text windows for broken: its grammar did not load (tree_sitter_not_installed_here" in out.stdout
    finally:
        monkeypatch.undo()
        clear_caches()
