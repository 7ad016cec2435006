"""Kotlin: classes, interfaces and objects as containers; a companion object's members are its
class's (`InvoiceBook.create`, as Kotlin code calls them)."""
from __future__ import annotations

import re

from codevouch.syntax.spec import CONTAINER, LEAF, DefRule, Imports, Language, LanguageSpec

KOTLIN = Language(
    name="kotlin",
    grammar=("tree_sitter_kotlin", "language"),
    extensions={".kt": "kotlin", ".kts": "kotlin"},
    syntax=LanguageSpec(
        definitions={
            "class_declaration": CONTAINER,      # class, interface, enum class, data class
            "object_declaration": CONTAINER,
            "function_declaration": LEAF,
            "type_alias": DefRule(name_field="type"),
        },
        transparent=frozenset({"companion_object", "class_body"}),
        bodies=frozenset({"class_body", "enum_class_body"}),
        anonymous=frozenset({"object_literal"}),
        prefix=frozenset({"line_comment", "block_comment", "multiline_comment", "annotation"}),
        blocks=frozenset({"source_file", "block", "class_body", "enum_class_body", "statements",
                          "function_body", "when_expression", "lambda_literal"}),
    ),
    keywords=("fun", "class", "interface"),    # `object` is a word in every language
    fences=("kotlin", "kt", "kts"),
    tests=("*Test.kt", "*Tests.kt", "*Spec.kt"),
    # `import com.acme.billing.InvoiceBook`, `... as Book`, `import com.acme.billing.*`.
    imports=Imports(re.compile(r"[ \t]*import[ \t]+(?P<names>[\w.]+(?:\.\*)?(?:[ \t]+as[ \t]+\w+)?)[ \t]*;?[ \t]*(?://.*)?$"),
                    declares=re.compile(r"^[ \t]*package[ \t]+([\w.]+)", re.MULTILINE), family="jvm",
                    platform=("kotlin", "kotlinx", "java", "javax", "android", "androidx"), file_class="Kt",
                    file_class_named=re.compile(r'^[ \t]*@file[ \t]*:[ \t]*JvmName[ \t]*\([ \t]*"([\w$]+)"',
                                                re.MULTILINE)),
)
