"""C#: classes, structs, interfaces, records and enums as containers; methods, constructors,
properties, operators and local functions. A namespace does not qualify a symbol (as a Java
package does not): a block `namespace Billing { }` and a file-scoped `namespace Billing;` name
`InvoiceBook.Settle` alike."""
from __future__ import annotations

import re

from codevouch.syntax.spec import CONTAINER, LEAF, Imports, Language, LanguageSpec

CSHARP = Language(
    name="csharp",
    grammar=("tree_sitter_c_sharp", "language"),
    extensions={".cs": "csharp"},
    syntax=LanguageSpec(
        definitions={
            "class_declaration": CONTAINER,
            "struct_declaration": CONTAINER,
            "interface_declaration": CONTAINER,
            "record_declaration": CONTAINER,
            "enum_declaration": LEAF,
            "method_declaration": LEAF,
            "constructor_declaration": LEAF,
            "destructor_declaration": LEAF,
            "property_declaration": LEAF,
            "indexer_declaration": LEAF,
            "event_declaration": LEAF,
            "delegate_declaration": LEAF,
            "local_function_statement": LEAF,
        },
        transparent=frozenset({"namespace_declaration", "declaration_list"}),
        anonymous=frozenset({"anonymous_object_creation_expression"}),
        blocks=frozenset({"compilation_unit", "block", "declaration_list", "switch_body", "switch_section",
                          "accessor_list", "enum_member_declaration_list"}),
    ),
    keywordless=True,       # a method has no keyword before its name
    keywords=("class", "struct", "interface", "enum"),
    fences=("cs", "csharp", "c#"),
    tests=("*Tests.cs", "*Test.cs"),
    generated=("*.g.cs", "*.g.i.cs", "*.designer.cs", "*.Designer.cs", "*.generated.cs"),
    # `using Billing.Invoices;`, `global using static Billing.InvoiceBook;`, `using Book =
    # Billing.InvoiceBook;`: checked against the namespaces the repository's files declare.
    imports=Imports(re.compile(r"[ \t]*(?:global[ \t]+)?using[ \t]+(?:static[ \t]+)?(?:\w+[ \t]*=[ \t]*)?"
                               r"(?P<names>[\w.]+)[ \t]*;"),
                    declares=re.compile(r"^[ \t]*namespace[ \t]+([\w.]+)", re.MULTILINE),
                    platform=("System", "Microsoft", "Windows")),
)
