"""check-refs for an import that names a namespace-qualified name: Java and Kotlin `import
com.acme.billing.InvoiceBook`, Scala `import com.acme.billing.{Voucher, Coupon}`, C# `using
Billing.Invoices;`, Swift `import Billing`, PHP `use App\\Billing\\Invoice;` (spec.Imports.declares).

The repository's namespaces are the ones its files declare (`package com.acme.billing;`,
`namespace Billing.Invoices`, `namespace App\\Billing;` read as App.Billing, a Package.swift's
targets), read once per check from the files of the language's family (Java, Kotlin and Scala
import each other's). An import is:

- found when it names a declared namespace (or one a declared one is under: `com.acme`), or a
  definition in a file of the longest declared namespace it starts with (`InvoiceBook` in a file
  that says `package com.acme.billing`; a Swift module's types in any Swift file; the class Kotlin
  compiles a file's top-level functions into, `MoneyKt` of Money.kt, which Java imports);
- missing when it starts with such a namespace but no file of it defines the rest or names it as a
  word (`name-missing`), or when it is under one of the repository's top namespaces
  (`com.acme.billing` of `com.acme.billing.ghost.X`) and no file declares it (`module-missing`).
  In PHP (spec.Imports.vendors) a name is missing only when the rest is one name: PHP nests no
  type in a type, so `Slim\\Psr7\\Request` under a declared `Slim` names a namespace no file
  declares, another package of the vendor's (`module-external`);
- a library's (`module-external`) otherwise: `java.util.List`, `System.Text`, `Foundation`, as a
  Python import of a package that is not the repository's.
"""
from __future__ import annotations

import difflib
import posixpath
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property

from codevouch.printable import plural
from codevouch.refs.extract import Reference
from codevouch.refs.model import RefResult
from codevouch.syntax import registry
from codevouch.syntax.spec import Language

Texts = Callable[[str], "str | None"]
Defs = Callable[[str], "dict[str, list[tuple[int, int]]]"]


@dataclass
class Namespaces:
    """The namespaces one family of languages declares in a working tree: `files` lists the tree's
    files, `text` and `defs` read one (refs/worktree.py's reads, each file at most once)."""
    langs: tuple[Language, ...]
    files: list[str]
    text: Texts
    defs: Defs

    @cached_property
    def names(self) -> frozenset[str]:
        return frozenset(lang.name for lang in self.langs)

    @cached_property
    def sources(self) -> list[str]:
        """The family's files in the tree, in path order."""
        return sorted(f for f in self.files if (lang := registry.of_path(f)) is not None and lang.name in self.names)

    @cached_property
    def declared(self) -> dict[str, list[str]]:
        """Namespace -> the files that declare it. A file's several clauses declare their join
        (Scala's `package com.acme` then `package billing` is com.acme.billing; so are C#'s nested
        blocks; sibling blocks in one file, rare, read as one name that imports are not under),
        except in a module language, where each is a module (a Package.swift's targets)."""
        out: dict[str, list[str]] = {}
        for rel in self.sources:
            lang = registry.of_path(rel)
            assert lang is not None and lang.imports is not None and lang.imports.declares is not None
            sep = lang.imports.separator        # PHP's `namespace App\\Billing;` is App.Billing
            names = [m.group(1).replace(sep, ".") for m in lang.imports.declares.finditer(self.text(rel) or "")]
            for declared in names if lang.imports.modules else [".".join(names)] if names else []:
                out.setdefault(declared, []).append(rel)
            if lang.imports.modules:        # SwiftPM: Sources/<Module>/...
                parts = rel.split("/")
                at = next((i for i, p in enumerate(parts[:-2]) if p == "Sources"), None)
                if at is not None:
                    out.setdefault(parts[at + 1], []).append(rel)
        return out

    @cached_property
    def known(self) -> frozenset[str]:
        """Every declared namespace and each one it is under (`com.acme` of `com.acme.billing`)."""
        parts = [name.split(".") for name in self.declared]
        return frozenset(".".join(p[:i]) for p in parts for i in range(1, len(p) + 1))

    @cached_property
    def roots(self) -> frozenset[str]:
        """The repository's top namespaces: declared ones under no other declared one, and the
        common part (two names or more) of several (`com.acme` of com.acme.billing, com.acme.orders)."""
        top = [n for n in self.declared if not any(n.startswith(o + ".") for o in self.declared)]
        shared = posixpath.commonprefix([n.split(".") for n in top]) if len(top) > 1 else []
        return frozenset(top + ([".".join(shared)] if len(shared) > 1 else []))

    def owns(self, name: str) -> bool:
        return any(name == r or name.startswith(r + ".") for r in self.roots)

    def files_of(self, namespace: str) -> list[str]:
        """The files whose definitions a namespace holds: those that declare it; every file of
        the family for a module language (Swift)."""
        lang = registry.of_path(self.declared[namespace][0])
        modules = lang is not None and lang.imports is not None and lang.imports.modules
        return [f for f in self.sources if registry.of_path(f) is lang] if modules else self.declared[namespace]


# Android's classes made at build time, never in a repository: `R`, `BuildConfig`, view binding's.
_GENERATED = frozenset({"R", "BuildConfig", "databinding"})


def check_namespace_import(ref: Reference, spaces: Namespaces) -> RefResult:
    """`ref` (an import whose language declares namespaces) against the repository's namespaces:
    what is missing under the platform's namespaces (spec.Imports.platform) or generated at build
    time is a library's."""
    found = _resolved(ref, spaces)
    if found.status != "missing":
        return found
    lang = registry.by_name()[ref.language or ""]
    assert lang.imports is not None
    parts = (ref.module or "").split(".")
    platform = next((p for p in lang.imports.platform if parts[:len(p.split("."))] == p.split(".")), None)
    if platform is not None:
        return RefResult(ref, "module-external", f"{platform} is the platform's namespace; this repository "
                         f"adds to it ({found.found or 'elsewhere'}) but does not define {ref.module}.")
    made = next((p for p in parts[1:] if p in _GENERATED), None)
    if made is not None:
        return RefResult(ref, "module-external", f"{ref.module}: {made} is made at build time (Android), never "
                         "a file of the repository.")
    return found


def _resolved(ref: Reference, spaces: Namespaces) -> RefResult:
    name = ref.module or ""
    wild = name.endswith(".*")
    whole = name[:-2] if wild else name
    if whole in spaces.known:
        at = next((files[0] for ns, files in sorted(spaces.declared.items())
                   if ns == whole or ns.startswith(whole + ".")), None)
        return RefResult(ref, "module-found", f"{whole} is a namespace of this repository ({at}).", found=at)
    parts = whole.split(".")
    for i in range(len(parts) - 1, 0, -1):
        namespace = ".".join(parts[:i])
        if namespace in spaces.declared:
            if i < len(parts) - 1 and _vendors(ref):
                return RefResult(ref, "module-external", f"no file of this repository declares "
                                 f"{'.'.join(parts[:-1])}, under its own {namespace}: another package of "
                                 "the same vendor, most likely.")
            return _in_namespace(ref, spaces, namespace, parts[i:])
    if spaces.owns(whole):
        close = difflib.get_close_matches(".".join(parts[:-1]) or whole, sorted(spaces.known), n=3, cutoff=0.75)
        return RefResult(ref, "module-missing", f"no file of this repository declares {whole} or a namespace "
                         f"it starts with (its own: {', '.join(sorted(spaces.roots))}).",
                         suggestion="did you mean " + " or ".join(close) + "?" if close else None)
    return RefResult(ref, "module-external", f"{parts[0]} is no namespace of this repository (a library's, "
                     "most likely).")


def _vendors(ref: Reference) -> bool:
    lang = registry.by_name().get(ref.language or "")
    return lang is not None and lang.imports is not None and lang.imports.vendors


def _in_namespace(ref: Reference, spaces: Namespaces, namespace: str, rest: list[str]) -> RefResult:
    """`rest` (`InvoiceBook`, `InvoiceBook.settle`) in the files of `namespace`: defined, named as a
    word (a constant, an enum entry, a property the definition finder does not list), or missing."""
    files = spaces.files_of(namespace)
    want = ".".join(rest)
    facade = next((rel for rel in files if len(rest) == 1 and _facade(rel, spaces.text) == rest[0]), None)
    if facade is not None:
        return RefResult(ref, "symbol-defined", f"{ref.module} is the class the compiler makes of {facade}'s "
                         "top-level declarations.", found=facade)
    for rel in files:
        for qualified, spans in spaces.defs(rel).items():
            if qualified == want or qualified.endswith("." + want):
                where = f"{rel}#L{spans[0][0]}-L{spans[0][1]}"
                return RefResult(ref, "symbol-defined", f"{ref.module} is defined at {where}.", found=where)
    word = re.compile(rf"(?<![\w$]){re.escape(rest[-1])}(?![\w$])")
    named = next((rel for rel in files if word.search(spaces.text(rel) or "")), None)
    if named is not None:
        return RefResult(ref, "symbol-mentioned", f"{namespace} does not define {want}, but {named} names "
                         f"{rest[-1]} (a constant, an entry, a property).", found=named)
    members = sorted({q.rsplit(".", 1)[-1] for rel in files for q in spaces.defs(rel)})
    close = difflib.get_close_matches(rest[-1], members, n=3, cutoff=0.6)
    return RefResult(ref, "name-missing", f"{namespace} ({plural(len(files), 'file')}, e.g. {files[0]}) "
                     f"neither defines nor names {want}.",
                     found=files[0], suggestion="did you mean " + " or ".join(close) + "?" if close else None)


def _facade(rel: str, text: Texts) -> str | None:
    """The class a file's top-level declarations are compiled into, which the family's other
    languages import (Kotlin's `com.acme.orders.MoneyKt` of Money.kt; `@file:JvmName("Money")`
    names it: spec.Imports.file_class); None for a file of a language without one."""
    lang = registry.of_path(rel)
    if lang is None or lang.imports is None or not lang.imports.file_class:
        return None
    named = lang.imports.file_class_named.search(text(rel) or "") if lang.imports.file_class_named else None
    if named is not None:
        return named.group(1)
    stem = posixpath.basename(rel).rsplit(".", 1)[0]
    return stem[:1].upper() + stem[1:] + lang.imports.file_class


def family_of(lang: Language) -> tuple[Language, ...]:
    """The languages whose namespaces `lang`'s imports name: its family's, or its own."""
    assert lang.imports is not None
    if not lang.imports.family:
        return (lang,)
    return tuple(other for other in registry.LANGUAGES
                 if other.imports is not None and other.imports.family == lang.imports.family)
