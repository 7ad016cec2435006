"""What codevouch knows of one language, as data: the `Language` record each module of
syntax/langs/ fills in, and the syntax tables (`LanguageSpec`, `DefRule`) inside it.

Adding a language is one module in syntax/langs/ and one line in syntax/registry.py (plus its
grammar wheel in pyproject.toml); everything that differs between languages is a field here,
read through the registry. No tree-sitter here: rendering a citation or classifying a path reads
these tables without loading a grammar.
"""
from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class DefRule:
    """How a node type that defines a symbol is treated.

    container:   members declared in its ``body`` field (or its child of a type in
                 ``LanguageSpec.bodies``) are definitions of their own (qualified as
                 ``Container.member``) and it may be split into a header piece plus its
                 members. A container with no name (C++'s ``namespace { }``, ``extern "C" { }``)
                 qualifies nothing: what its body holds are items of the level it sits at.
    name:        how the symbol name is read (syntax/tree.py, def_name):
                 "field"          text of the ``name`` field
                 "string"         ``name`` field with string quotes removed
                 "go_receiver"    ``Recv.Name`` from a Go method receiver
                 "impl_type"      base type name of a Rust ``impl`` block
                 "go_closure"     ``inner`` of ``inner := func() {...}`` (only ever
                                  inside a function, so only a nested definition)
                 "js_member"      ``Obj.name`` of ``Obj.name = function () {...}``,
                                  ``Obj.prototype.name = ...`` and ``exports.name = ...``
                                  (the object a chain of plain names; ``prototype``
                                  dropped from it)
                 "scoped"         the ``name`` field as a C++ scope path written with dots,
                                  template arguments dropped (``a::b`` -> ``a.b``,
                                  ``hash<Key>`` -> ``hash``)
                 "declarator"     the function a C/C++ ``declarator`` chain declares, through
                                  pointers and references, scoped as above (``Book::settle``
                                  -> ``Book.settle``, so an out-of-class method is named as its
                                  class's member); "" when the chain declares no function (a
                                  variable, a function pointer)
                 "declared_type"  the first type name in the ``declarator`` field (a C typedef)
    name_field:  the field the name is read from ("field" and "string"; ``name`` unless the
                 grammar puts it elsewhere: Kotlin's ``typealias`` under ``type``)
    nested:      False: only a definition at top level or directly in a container body counts
                 (a C prototype: inside a function the same syntax declares a local variable)
                 "path"           text of the ``name`` field read as a path of names, each
                                  separator the language writes (``::``, ``\\``, ``:``, ``.``)
                                  a dot, leading ones dropped: Ruby's ``class Billing::Invoice``
                                  is ``Billing.Invoice``, Lua's ``function M:f`` is ``M.f``
    value_types: when set, the node only counts as a definition if its
                 ``value_field`` field has one of these types (used for
                 ``const f = () => ...`` style bindings).
    value_field: the field ``value_types`` is read from (``value``; ``right``
                 for an assignment).
    """

    container: bool = False
    name: str = "field"
    name_field: str = "name"
    nested: bool = True
    value_types: frozenset[str] | None = None
    value_field: str = "value"


LEAF = DefRule()
CONTAINER = DefRule(container=True)


@dataclass(frozen=True)
class LanguageSpec:
    """Syntax tables for one language.

    definitions: node type -> rule, for nodes that define a symbol.  The chunker
                 cuts at those at module level or directly in a container body;
                 ``find_definitions`` also lists the ones nested anywhere else
                 (a function in a function, a class in a method).
    wrappers:    node types that are a definition iff one of their direct
                 named children is (decorators, ``export``, declarations that
                 hold ``const f = () => {}`` declarators ...).  The wrapper's
                 full range belongs to the definition.  A type both here and in
                 ``definitions`` is a wrapper where its own rule names nothing (a C++
                 ``struct S { ... };`` member is a field declaration holding a struct).
    transparent: node types at top level or inside a container body whose children
                 are items of that level (Java ``enum_body_declarations``, C's
                 ``#ifdef`` blocks, Kotlin's companion object); when the node has a
                 ``body`` field, the body's children are (Ruby's ``class << self ... end``,
                 a C# ``namespace``).
    bodies:      node types that are a container's body where the grammar gives the body
                 no ``body`` field (Kotlin's ``class_body``).
    blank:       a pattern whose first group is replaced by as many spaces before the parse
                 (lines and columns unchanged): a word the grammar misreads, such as the export
                 macro of C++'s ``class LEVELDB_EXPORT DB {``, which it takes for a function.
    prefix:      node types that belong to the *next* sibling when directly
                 above it without a blank line (comments, attributes,
                 sibling decorators).
    blocks:      node types whose direct children are statement-like; their
                 end lines are preferred cut points when a definition has to
                 be split into line windows.
    anonymous:   node types whose members have no name to qualify them by (a
                 Java anonymous class): definitions inside are not listed.
    bodiless:    node types that declare a name and do nothing: a TypeScript interface, type
                 alias, overload signature or ``declare`` (ambient) declaration. A chunk whose
                 code is all such nodes is a declaration (indexer/chunker.Chunk.declaration),
                 ranked after the bodies that do what a sentence asks (retriever/search.py).
    """

    definitions: Mapping[str, DefRule]
    wrappers: frozenset[str] = frozenset()
    transparent: frozenset[str] = frozenset()
    prefix: frozenset[str] = frozenset({"comment"})
    blocks: frozenset[str] = frozenset()
    anonymous: frozenset[str] = frozenset()
    bodies: frozenset[str] = frozenset()
    blank: re.Pattern[str] | None = None
    bodiless: frozenset[str] = frozenset()


@dataclass(frozen=True)
class Imports:
    """How a line of the language imports code, as check-refs reads it (refs/imports.py).

    pattern:  matched at the start of a line; its groups, where they took part:
              "file"   a file named from a load path or the repository's root (Ruby's `require
                       "billing/invoice"`, Lua's `require "billing.ledger"`, a shell's `source
                       lib/common.sh`): found at the root or under any directory
              "here"   a file named from the importing file's directory (`require_relative`)
              "names"  qualified names (`use App\\Models\\Customer;`, `import com.acme.{A, B}`):
                       each checked as the symbol its last two parts spell (`Models.Customer`),
                       the qualifier being the file's package (spec.Language.package_clause) or
                       a directory of its path
    suffixes: what the language appends to a file's name to find it (`.rb`; Lua's `.lua` and
              `/init.lua`), tried after the name as written
    dotted:   a "file" spec's dots are directories (Lua's `billing.ledger` is billing/ledger.lua)
    separator: what separates the parts of a name in "names" (PHP's `\\`, Scala's `.`)
    declares: a pattern whose first group is a namespace a file of the language declares in full
              (`package com.acme.billing`, `namespace Billing.Invoices`, a Package.swift's
              `.target(name: "Billing"`): where set, a "names" import is checked whole against the
              namespaces the repository's files declare (refs/namespaces.py), not as a symbol
    family:   languages whose files import each other's namespaces share one (Java, Kotlin and
              Scala: "jvm"); "" is the language's own
    modules:  a declared name is a module whose types may be in any of the language's files (a
              Swift target), not a package whose types are in the files that declare it; a
              directory right under `Sources/` is one too (SwiftPM's layout)
    platform: namespaces of the language's platform (`java`, `kotlin`, `System`): an import under
              one is a library's even where the repository adds to it (a polyfill's `namespace
              System;`), unless the repository defines what it names
    file_class: the suffix of the class a file's top-level declarations compile into, after its
              name's stem capitalized (Kotlin's `MoneyKt` of Money.kt), which other languages of the
              family import; "" for none
    file_class_named: a pattern whose first group names that class instead (`@file:JvmName("Money")`)
    vendors:  a namespace that no file declares, under one that a file does, is another package of
              the same vendor (Composer's slim/psr7 is `Slim\\Psr7`, beside slim/slim's `Slim`): an
              import of a name in it is a library's. Only a language whose namespaces hold no types
              within types (PHP) can tell that from a type nested in a declared namespace's class
    """

    pattern: re.Pattern[str]
    suffixes: tuple[str, ...] = ()
    dotted: bool = False
    separator: str = "."
    declares: re.Pattern[str] | None = None
    family: str = ""
    modules: bool = False
    platform: tuple[str, ...] = ()
    file_class: str = ""
    file_class_named: re.Pattern[str] | None = None
    vendors: bool = False


@dataclass(frozen=True)
class Language:
    """One language codevouch parses.

    name:          the language's name in records and settings (`go`), also the parse's
    grammar:       (wheel module, function returning the grammar pointer); never downloaded
    extensions:    lower-case extension with its dot -> the code fence tag a citation gives it
    syntax:        the definition rules the chunker and the definition finder read
    keywordless:   some definitions open with no keyword before their name (a JavaScript
                   method, a Java method, a Go name in a `type (...)` group): the lexical index
                   cannot read a defined name from a keyword there, so the parse says it
    keywords:      words that open a definition (`def`, `func`): in a lexical document the
                   term after one is a defined name (store/lexical.py)
    fences:        markdown fence tags that name the language (check-refs reads imports in
                   Python fences only: any other language's fence is skipped)
    declarations:  file-name suffixes of declaration files (stubs, headers) that declare what
                   another file implements: a name defined in both is asked for as its
                   implementation (retriever/stubs.py); also cut from a module path
    directory_stems: file stems that name their directory rather than themselves in a module
                   path (`__init__`, Rust's `mod`, a JavaScript directory's `index`)
    package_clause: a pattern whose first group is the package a file declares (Go's
                   `package chi`): a qualifier may name the file by it (syntax/packages.py)
    relative_specifiers: imports name other files by relative specifiers (`import x from
                   "./a"`, `require("../b")`): check-refs resolves those in a patch
    claims:        for an extension another language lists before this one (C++'s `.h`, which
                   C lists first): this language parses a file of it whose text matches
                   (registry.of_file); without the text, the first language does
    tests:         gitignore-style patterns of this language's test files (`*Test.kt`), tried
                   after the default rules' own test patterns (worktree/rules.py)
    generated:     the same for its generated files (`*.g.cs`, `moc_*.cpp`)
    file_names:    exact file names (no extension) of the language: Ruby's `Rakefile`, `Gemfile`
    interpreters:  programs a `#!` line names for the language (`bash`, `sh`): a file with no
                   extension and no known name is read as the language its first line names,
                   where the text is at hand (registry.of_file)
    imports:       how a line imports code, for check-refs (`Imports`); None: not read (Python's
                   and JavaScript's imports have their own readers in refs/ for now)

    The older languages' test and generated-file patterns (`*_test.go`, `*_pb2.py`) stay in
    worktree/rules.py: their order is part of every branch's recorded rules, and moving them
    here would re-read every file on the next build for no change. A language added since
    brings its own (`tests`, `generated`), appended after them.
    """

    name: str
    grammar: tuple[str, str]
    extensions: Mapping[str, str]
    syntax: LanguageSpec
    keywordless: bool = False
    keywords: tuple[str, ...] = ()
    fences: tuple[str, ...] = ()
    declarations: tuple[str, ...] = ()
    directory_stems: tuple[str, ...] = ()
    package_clause: re.Pattern[str] | None = None
    relative_specifiers: bool = False
    claims: re.Pattern[str] | None = None
    tests: tuple[str, ...] = ()
    generated: tuple[str, ...] = ()
    file_names: tuple[str, ...] = ()
    interpreters: tuple[str, ...] = ()
    imports: Imports | None = None
