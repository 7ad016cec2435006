"""Names in C, C++, C#, Kotlin and Swift: a definition found first by its exact name.

The sibling of names_scripting.py, on one real repository per language (a pinned commit of a public
project, from a local bare mirror: $CODEVOUCH_BENCH_GIT_MIRRORS/owner+name/repo). The targets are
the functions, methods, classes, structs, interfaces, protocols, objects, properties and type
aliases whose short name the repository's files define exactly once, 4 characters or longer,
outside vendored and fixture directories, read by the grammar without a syntax error (a macro call
that looks like a function to it, `TEST_ASSERT_EQUAL_HEX8_ARRAY(p0, p1, 4); }`, is none): a C/C++
function by its definition (a body: a method declared in a header and defined in a .cc file counts
once, at its definition), a C type by its body or its typedef name, a Swift extension never (it
names a type defined elsewhere). Ground truth is this module's own tree-sitter walk (the grammars'
node types, below), never codevouch's chunker or definition finder. At most SAMPLE names a corpus
(seeded), each asked for by its name as written; a hit is right when it is the target's file and
its lines overlap the definition's. The fake embedder; nothing was tuned on these repositories:
every pair is held out.

    CODEVOUCH_BENCH_GIT_MIRRORS=/path/to/mirrors python -m codevouch_bench.names_c_family --out X.json
"""
from __future__ import annotations

import importlib
import tempfile
from collections import Counter
from pathlib import Path

import tree_sitter

from codevouch_bench.lib.cli import parser
from codevouch_bench.lib.common import RESULTS
from codevouch_bench.names_scripting import _SKIP_DIRS, MIN_NAME, Corpus, measure, write_names

OUT = RESULTS / "bench-names-c-family.json"
SAMPLE = 300

CORPORA = (
    Corpus("cJSON", "DaveGamble+cJSON", "a29814f285cc531c00223743ad3c55cd38c0dc56", "c"),
    Corpus("leveldb", "google+leveldb", "78a352f47ed6c1e9d750545e9b242289185b87e1", "cpp"),
    Corpus("serilog", "serilog+serilog", "60935b4d7abad71cf6157b45a10f5c3c65ead527", "csharp"),
    Corpus("kotlinpoet", "square+kotlinpoet", "be2de914ce6eb3694092ed4e0f28626cbce1ffe0", "kotlin"),
    Corpus("Alamofire", "Alamofire+Alamofire", "7595cbcf59809f9977c5f6378500de2ad73b7ddb", "swift"),
)

_C_TYPES = {"struct_specifier", "union_specifier", "enum_specifier"}
# language -> (grammar module, function), suffixes, node types that define a name.
GRAMMARS = {
    "c": (("tree_sitter_c", "language"), (".c", ".h"), {"function_definition", "type_definition", *_C_TYPES}),
    "cpp": (("tree_sitter_cpp", "language"), (".cc", ".cpp", ".cxx", ".h", ".hh", ".hpp"),
            {"function_definition", "class_specifier", *_C_TYPES}),
    "csharp": (("tree_sitter_c_sharp", "language"), (".cs",),
               {"class_declaration", "struct_declaration", "interface_declaration", "record_declaration",
                "enum_declaration", "method_declaration", "property_declaration", "delegate_declaration"}),
    "kotlin": (("tree_sitter_kotlin", "language"), (".kt", ".kts"),
               {"class_declaration", "object_declaration", "function_declaration", "type_alias"}),
    "swift": (("tree_sitter_swift", "language"), (".swift",),
              {"class_declaration", "protocol_declaration", "function_declaration", "typealias_declaration"}),
}
# What a C/C++ declarator chain ends in when it declares a function by a plain name.
_PLAIN = {"identifier", "field_identifier"}


def _text(node: tree_sitter.Node | None) -> str:
    return (node.text or b"").decode("utf-8", "replace") if node is not None else ""


def _declared(node: tree_sitter.Node | None) -> str:
    """The plain name a C/C++ declarator chain declares (`get_x` of `*get_x(int)`, `Write` of
    `DBImpl::Write(...)`); "" for an operator, a destructor or anything else."""
    while node is not None and node.type not in _PLAIN:
        node = node.child_by_field_name("name" if node.type == "qualified_identifier" else "declarator")
    return _text(node)


def name_of(node: tree_sitter.Node) -> str:
    """The short name a defining node gives, "" when it gives none here."""
    if node.type == "function_definition":
        return _declared(node.child_by_field_name("declarator"))
    if node.type == "type_definition":
        declarator = node.child_by_field_name("declarator")
        return _text(declarator) if declarator is not None and declarator.type == "type_identifier" else ""
    if node.type in _C_TYPES | {"class_specifier"} and node.child_by_field_name("body") is None:
        return ""       # `struct Foo *p`: a use, not a definition
    name = node.child_by_field_name("type" if node.type == "type_alias" else "name")
    if name is None or name.type == "user_type":    # a Swift extension names a type defined elsewhere
        return ""
    while name.named_child_count and name.type not in ("identifier", "type_identifier", "simple_identifier"):
        name = name.named_children[-1]
    return _text(name)


def targets(files: dict[str, bytes], language: str) -> list[tuple[str, str, int, int]]:
    """(name, path, first line, last line) of each name defined exactly once."""
    (module, func), suffixes, kinds = GRAMMARS[language]
    ts = tree_sitter.Parser(tree_sitter.Language(getattr(importlib.import_module(module), func)()))
    found: list[tuple[str, str, int, int]] = []
    for path, data in sorted(files.items()):
        if _SKIP_DIRS & set(path.split("/")[:-1]) or not path.endswith(suffixes):
            continue
        stack = [ts.parse(data).root_node]
        while stack:
            node = stack.pop()
            if node.type in kinds and not node.has_error and (name := name_of(node)):
                found.append((name, path, node.start_point[0] + 1, node.end_point[0] + 1))
            stack.extend(node.named_children)
    counts = Counter(name for name, *_ in found)
    return [t for t in found if counts[t[0]] == 1 and len(t[0]) >= MIN_NAME]


def main() -> None:
    p = parser(__doc__.splitlines()[0])
    args = p.parse_args()
    most = 40 if args.quick else SAMPLE
    with tempfile.TemporaryDirectory(prefix="cv-names-c-") as tmp:
        rows = [measure(c, Path(tmp), most, find=targets) for c in CORPORA]
    write_names("names_c_family", rows, args.out, OUT, sample=most)


if __name__ == "__main__":
    main()
