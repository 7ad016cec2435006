"""Swift: classes, structs, enums, actors, protocols and extensions as containers; an
extension's members are its type's (`extension InvoiceBook { func total() }` defines
`InvoiceBook.total`)."""
from __future__ import annotations

import re

from codevouch.syntax.spec import CONTAINER, LEAF, Imports, Language, LanguageSpec

SWIFT = Language(
    name="swift",
    grammar=("tree_sitter_swift", "language"),
    extensions={".swift": "swift"},
    syntax=LanguageSpec(
        definitions={
            "class_declaration": CONTAINER,      # class, struct, enum, actor, extension
            "protocol_declaration": CONTAINER,
            "function_declaration": LEAF,
            "protocol_function_declaration": LEAF,
            "init_declaration": LEAF,
            "typealias_declaration": LEAF,
        },
        prefix=frozenset({"comment", "multiline_comment", "attribute"}),
        blocks=frozenset({"source_file", "statements", "class_body", "protocol_body", "enum_class_body",
                          "function_body", "switch_statement", "switch_entry"}),
    ),
    keywords=("func", "class", "struct", "enum"),     # an extension names a type defined elsewhere
    fences=("swift",),
    tests=("Tests/", "*Tests.swift", "*Test.swift"),
    generated=("*.pb.swift", "*.generated.swift"),
    # `import Billing`, `@testable import Billing`, `import struct Billing.InvoiceBook`: a module is
    # a target a Package.swift names (or a directory under Sources/), its types in any Swift file.
    imports=Imports(re.compile(r"[ \t]*(?:@\w+[ \t]+)*import[ \t]+(?:(?:typealias|struct|class|enum|protocol|"
                               r"let|var|func)[ \t]+)?(?P<names>[\w.]+)[ \t]*(?://.*)?$"),
                    declares=re.compile(r"(?:\.\w*[tT]arget|\.library|Package)\([ \t\n]*name:[ \t]*\"(\w+)\""),
                    modules=True),
)
