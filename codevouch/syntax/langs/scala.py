"""Scala: classes, objects, traits and enums as containers (a companion object's members share
its class's name: `Invoice.apply` beside `Invoice.settle`); `package com.acme.billing` names the
file's package by its last name."""
from __future__ import annotations

import re

from codevouch.syntax.spec import CONTAINER, LEAF, Imports, Language, LanguageSpec

SCALA = Language(
    name="scala",
    grammar=("tree_sitter_scala", "language"),
    extensions={".scala": "scala", ".sc": "scala"},
    syntax=LanguageSpec(
        definitions={
            "class_definition": CONTAINER,
            "object_definition": CONTAINER,
            "trait_definition": CONTAINER,
            "enum_definition": CONTAINER,
            "function_definition": LEAF,
            "function_declaration": LEAF,
            "type_definition": LEAF,
            "given_definition": LEAF,
        },
        wrappers=frozenset({"extension_definition"}),     # extension (s: String) def shout = ...
        prefix=frozenset({"comment", "block_comment", "annotation"}),
        blocks=frozenset({"compilation_unit", "template_body", "block", "enum_body", "indented_block",
                          "case_block"}),
    ),
    keywordless=True,       # `case object Note`: `case` opens it, and members merged into their object's chunk
    keywords=("def", "trait"),
    fences=("scala",),
    package_clause=re.compile(r"^[ \t]*package[ \t]+(?:\w+\.)*(\w+)[ \t]*$", re.MULTILINE),
    # `import com.acme.billing.{Voucher, Coupon => C}`, `import scala.util._`: checked against the
    # packages the repository's files declare (a chain `package com.acme` / `package billing` too).
    # A `package object vouchers` (under `package com.acme`) holds members of com.acme.vouchers.
    imports=Imports(re.compile(r"[ \t]*import[ \t]+(?P<names>[\w.{][^;/\n]*)"),
                    declares=re.compile(r"^[ \t]*package[ \t]+(?:object[ \t]+)?([\w.]+)"
                                        r"(?:[ \t]+extends[ \t][^{\n]*)?[ \t]*\{?[ \t]*$", re.MULTILINE),
                    family="jvm", platform=("scala", "java", "javax")),
)
