"""Java: classes, interfaces, enums and records as containers; anonymous classes unnamed."""
from __future__ import annotations

import re

from codevouch.syntax.spec import CONTAINER, LEAF, Imports, Language, LanguageSpec

JAVA = Language(
    name="java",
    grammar=("tree_sitter_java", "language"),
    extensions={".java": "java"},
    syntax=LanguageSpec(
        definitions={
            "class_declaration": CONTAINER,
            "interface_declaration": CONTAINER,
            "enum_declaration": CONTAINER,
            "record_declaration": CONTAINER,
            "annotation_type_declaration": CONTAINER,
            "method_declaration": LEAF,
            "constructor_declaration": LEAF,
            "compact_constructor_declaration": LEAF,
        },
        transparent=frozenset({"enum_body_declarations"}),
        anonymous=frozenset({"object_creation_expression"}),
        prefix=frozenset({"line_comment", "block_comment"}),
        blocks=frozenset(
            {"program", "block", "class_body", "constructor_body", "interface_body",
             "enum_body", "enum_body_declarations", "switch_block",
             "switch_block_statement_group"}
        ),
    ),
    keywordless=True,       # a method has no keyword before its name
    keywords=("class", "interface", "enum"),
    fences=("java",),
    # `import com.acme.billing.InvoiceBook;`, `import static com.acme.billing.InvoiceBook.settle;`,
    # `import com.acme.billing.*;`: checked against the packages the repository's files declare.
    imports=Imports(re.compile(r"[ \t]*import[ \t]+(?:static[ \t]+)?(?P<names>[\w.]+(?:\.\*)?)[ \t]*;"),
                    declares=re.compile(r"^[ \t]*package[ \t]+([\w.]+)[ \t]*;", re.MULTILINE), family="jvm",
                    platform=("java", "javax", "jdk", "sun", "android", "androidx", "dalvik", "kotlin")),
)
