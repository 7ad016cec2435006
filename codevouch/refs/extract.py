"""The code references in an agent's answer (markdown or a patch): pure text scanning, no I/O.

    extract("See `OrderService.cancel` in shop/service.py#L10-L20.")
    -> [Reference(kind="path", path="shop/service.py", start=10, end=20, ...),
        Reference(kind="symbol", symbol="OrderService.cancel", ...)]

What counts as a reference, and why (false alarms make a checker useless):
- paths with a line anchor (`path#L10-L20`, `path#L10`, `path:42`, `path:42-50`, a Python
  traceback's `File "path", line 42`), and bare paths with a slash or a known file extension;
  URLs are blanked out first;
- backticked names that look like code: dotted (`Class.method`, `pkg.mod.func`), called
  (`name()`), or a single identifier with an underscore or inner capital (`cancel_order`,
  `OrderService`); plain lowercase words and ALLCAPS in backticks are prose, not references;
- Python imports (`import a.b`, `from a.b import c`) in code blocks, backticks and a patch's
  added lines; C and C++ `#include "file.h"` in code blocks and a patch's added lines (as a path);
- in a patch: the old side of every file header must exist and every hunk's old line range
  must lie inside that file; files the patch adds are known to exist after it applies.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

from codevouch.syntax import registry
from codevouch.syntax.spec import Language
from codevouch.worktree.changes import HUNK_HEADER

KINDS = ("path", "symbol", "import")

# Extensions that make a bare name (no slash) a file reference; anything with a slash and an
# extension counts too. Kept to code and doc files so `e.g.` or `self.value` are not paths.
_FILE_EXTENSIONS = frozenset("""
py pyi pyx js mjs cjs jsx ts tsx mts cts go rs java kt kts scala c h cc cpp cxx hpp hh cs rb php swift m mm
sh bash zsh ps1 sql html htm css scss less vue svelte md rst txt adoc toml yaml yml json jsonc cfg ini conf
env lock xml proto graphql gradle cmake mk dockerfile tf hcl lua pl r jl ex exs erl hs ml clj dart zig nim
""".split())

_URL = re.compile(r"\b[a-zA-Z][a-zA-Z0-9+.-]*://\S+|\bwww\.\S+")
_SEG = r"\.?[\w@+-][\w.@+-]*"   # a leading dot for .github/, .git/
_PATH = re.compile(
    r"(?<![\w/.@+\\-])"
    r"(?P<path>(?:/|\.{1,2}/)*(?:" + _SEG + r"/)*" + _SEG + r"\.(?P<ext>[A-Za-z][A-Za-z0-9]{0,9}))"
    r"(?:#L(?P<h1>\d+)(?:-L?(?P<h2>\d+))?|:(?P<c1>\d+)(?:[-:](?P<c2>\d+))?)?"
    r"(?![\w/@+])")
_TRACEBACK = re.compile(r'File "(?P<path>[^"\n]+)", line (?P<line>\d+)')
_BACKTICK = re.compile(r"(?<!`)`([^`\n]+)`(?!`)")
_NAME = r"[A-Za-z_$][\w$]*"
_SYMBOL = re.compile(r"(?P<name>" + _NAME + r"(?:(?:\.|::|#)" + _NAME + r")*)(?P<call>\(.*\))?")
_PY_FROM = re.compile(r"^\s*from\s+(?P<mod>\.*[\w.]*)\s+import\s+(?P<names>[\w\s,().*]+?)\s*(?:#.*)?$")
_PY_IMPORT = re.compile(r"^\s*import\s+(?P<mods>[\w.]+(?:\s+as\s+\w+)?(?:\s*,\s*[\w.]+(?:\s+as\s+\w+)?)*)"
                        r"\s*(?:#.*)?$")
# JavaScript/TypeScript relative specifiers (`import x from "./a"`, `export * from "../b"`,
# `require("./c")`, `import("./d")`): only in a patch, which names the importing file.
JS_EXTENSIONS = registry.relative_specifier_extensions()
_JS_RELATIVE = re.compile(r"""(?:\bfrom\s*|\bimport\s*\(?\s*|\brequire\s*\(\s*)["'](\.{1,2}/[^"'\n]*)["']""")
# `#include "billing/ledger.h"` (C, C++; Objective-C's `#import`): a file of the repository, found
# by its path or, as a compiler's include path would, by the end of one. `<stdio.h>` is the
# system's, never checked.
_INCLUDE = re.compile(r'^\s*#\s*(?:include|import)\s*"(?P<path>[^"\n]+)"')
_FENCE = re.compile(r"^\s*(```+|~~~+)\s*([\w+-]*)")
_RECEIVERS = ("self.", "this.", "cls.", "super().")
# Backticked words that are code but never a repository's definition.
_LITERALS = frozenset({"True", "False", "None", "null", "undefined", "NaN", "nil", "NULL", "self", "this",
                       "cls", "super", "__init__", "__main__", "__name__", "__all__"})
# Fences in another language than Python: their lines hold no Python import to check. The
# languages codevouch parses name their own tags (spec.Language.fences).
_NON_PY_FENCES = registry.fences(but="python") | {"console", "json", "yaml", "toml", "text"}
# Fences whose language reads its imports with its own pattern (spec.Language.imports).
_IMPORTING_FENCES = {tag: lang for lang in registry.LANGUAGES if lang.imports is not None for tag in lang.fences}


@dataclass(frozen=True)
class Reference:
    """One reference as the answer wrote it, and where (1-based line in the answer).

    path refs: `path` and, when given, `start`/`end` lines. symbol refs: `symbol` (dotted,
    receivers like `self.` dropped). import refs: `module` (dotted, leading dots for relative
    imports) and `symbol` for `from module import symbol`; `base` is the file a patch adds
    the import to (relative imports resolve from it). `source`: how it was written
    (anchor, traceback, bare, backtick, import, include, patch-header, hunk).
    """
    kind: str
    text: str
    line: int
    path: str | None = None
    start: int | None = None
    end: int | None = None
    symbol: str | None = None
    module: str | None = None
    base: str | None = None
    source: str = "bare"
    # A wider reading of `path`: the whole backticked span, or the whole word, around a path
    # that a character the pattern stops at cut short (`space file.py`, `a=b.py`, `x,y.py`).
    # check-refs uses it when such a file exists, else `path`.
    wide: str | None = None
    # An import read by its language's own pattern (spec.Language.imports): the language's name.
    language: str | None = None

    def key(self) -> tuple[object, ...]:
        return (self.kind, self.path, self.start, self.end, self.symbol, self.module, self.base, self.wide,
                self.language)


@dataclass(frozen=True)
class Extracted:
    """The references of one answer, in order of first appearance, and what a patch adds."""
    refs: tuple[Reference, ...]
    added_paths: frozenset[str] = field(default_factory=frozenset)
    deleted_paths: frozenset[str] = field(default_factory=frozenset)


def extract(text: str) -> Extracted:
    """Every code reference in an agent's answer, deduplicated (first occurrence kept)."""
    scan = _Scan(text.split("\n"))
    for n, raw in enumerate(scan.lines, 1):
        scan.read(raw.rstrip("\r"), n)
    return Extracted(tuple(_dedupe(scan.refs)), frozenset(scan.added), frozenset(scan.deleted))


@dataclass
class _Scan:
    """One answer's scan, line by line: the references so far, what a patch adds and deletes,
    and where the scan is (inside a code fence, inside a patch section)."""
    lines: list[str]
    refs: list[Reference] = field(default_factory=list)
    added: set[str] = field(default_factory=set)
    deleted: set[str] = field(default_factory=set)
    fence: str | None = None
    fence_lang: str = ""
    patch_file: str | None = None      # old side of the current patch section
    new_file: str | None = None        # new side (for imports added by the patch)

    def read(self, line: str, n: int) -> None:
        """Line `n` (1-based): a fence, a patch's header, hunk or body, code, or prose."""
        if self._fence(line) or self._patch_header(line, n) or self._patch_body(line, n):
            return
        if self.fence is not None:
            fenced = _IMPORTING_FENCES.get(self.fence_lang)
            if fenced is not None:
                self.refs += language_imports(fenced, line, n)
            elif self.fence_lang not in _NON_PY_FENCES:
                self.refs += _imports(line, n)
            self.refs += _include(line, n) or _paths(line, n, code=True)
            return
        self.refs += _paths(line, n, code=False)
        self.refs += _backticked(line, n)

    def _fence(self, line: str) -> bool:
        """A code fence opening or closing (it ends any patch section)."""
        opened = _FENCE.match(line)
        if not (opened and (self.fence is None or opened.group(1).startswith(self.fence))):
            return False
        if self.fence is None:
            self.fence, self.fence_lang = opened.group(1), opened.group(2).lower()
        else:
            self.fence, self.fence_lang = None, ""
        self.patch_file = self.new_file = None
        return True

    def _patch_header(self, line: str, n: int) -> bool:
        """`diff --git` (a new section), or a `---`/`+++` pair: the section's old and new files."""
        if line.startswith("diff --git "):
            self.patch_file = self.new_file = None
            return True
        if not (line.startswith("--- ") and n < len(self.lines) and self.lines[n].startswith("+++ ")):
            return False
        old, new = _patch_path(line[4:]), _patch_path(self.lines[n][4:])
        self.patch_file, self.new_file = old, new
        if old is not None:
            self.refs.append(Reference("path", line, n, path=old, source="patch-header"))
        if old is None and new is not None:
            self.added.add(new)
        if new is None and old is not None:
            self.deleted.add(old)
        return True

    def _patch_body(self, line: str, n: int) -> bool:
        """Inside a patch section: the `+++` line, a hunk header (its old line range must exist)
        or a hunk line (an added line's imports). Anything else ends the section."""
        if self.patch_file is None and self.new_file is None:
            return False
        if line.startswith("+++ "):
            return True
        hunk = HUNK_HEADER.match(line)
        if hunk:
            start, count = int(hunk["old_start"]), int(hunk["old_count"] or 1)
            if self.patch_file is not None and count > 0:
                self.refs.append(Reference("path", line, n, path=self.patch_file, start=start,
                                           end=start + count - 1, source="hunk"))
            return True
        if line.startswith(("+", "-", " ", "\\")) or not line:
            if line.startswith("+"):
                self.refs += _imports(line[1:], n, base=self.new_file) + _include(line[1:], n)
            return True
        self.patch_file = self.new_file = None
        return False


def _patch_path(field_: str) -> str | None:
    name = field_.split("\t")[0].strip()
    if name == "/dev/null":
        return None
    if name.startswith('"') and name.endswith('"'):
        name = name[1:-1]
    return name[2:] if name.startswith(("a/", "b/")) else name


def _paths(line: str, n: int, code: bool) -> list[Reference]:
    clean = _URL.sub(lambda m: " " * len(m.group(0)), line)
    found: list[Reference] = []
    for m in _TRACEBACK.finditer(clean):
        if not re.search(r"[./]", m.group("path")):
            continue    # `File "<stdin>"`, `File "path"`: not a file of the repository
        at = int(m.group("line"))
        found.append(Reference("path", m.group(0), n, path=m.group("path"), start=at, end=at, source="traceback"))
    clean = _TRACEBACK.sub(lambda m: " " * len(m.group(0)), clean)
    spans = [(b.start(1), b.end(1)) for b in _BACKTICK.finditer(clean)]
    placed: list[tuple[int, Reference]] = []
    for m in _PATH.finditer(clean):
        if not _accepted(m, code):
            continue
        first, last = _anchor(m, clean)
        start = int(first) if first else None
        end = int(last) if last else start
        placed.append((m.start(), Reference("path", m.group(0), n, path=m.group("path"), start=start, end=end,
                                            source="anchor" if first else "bare", wide=_wide(clean, m, spans))))
    taken = [at for at, _ in placed]
    placed += [(b0, ref) for b0, b1 in spans if (ref := _loose(clean[b0:b1], n)) is not None
               and not any(b0 <= at < b1 for at in taken)]
    return found + [ref for _, ref in sorted(placed, key=lambda p: p[0])]


# Characters a word is not cut at when reading a path around a shorter match (`a=b.py`): what
# the pattern stops at, but a file name may hold. Opening quotes and brackets are dropped.
_OPENERS = "(\"'<[{"


def _wide(line: str, m: re.Match[str], spans: list[tuple[int, int]]) -> str | None:
    """The whole name around the path `m` found, when the pattern stopped short of it: inside a
    backticked span that holds only the path (and its anchor), all of the span before it, spaces
    included; elsewhere the rest of the word before it. None when there is nothing more."""
    at = m.start("path")
    inside = next(((b0, b1) for b0, b1 in spans if b0 <= at < b1), None)
    if inside is not None and m.end() == inside[1]:
        prefix = line[inside[0]:at]
    else:
        word = at
        while word > 0 and not line[word - 1].isspace() and line[word - 1] != "`":
            word -= 1
        prefix = line[word:at].lstrip(_OPENERS)
    return prefix + m.group("path") if prefix.strip() else None


# A backticked span that is a file name the path pattern cannot read at all (`[x].py`,
# `100%.py`, `a~1.py`), with a known file extension and an optional anchor.
_LOOSE = re.compile(r"(?P<path>[^`\s/][^`]*?\.(?P<ext>[A-Za-z][A-Za-z0-9]{0,9}))(?:#L(?P<h1>\d+)(?:-L?(?P<h2>\d+))?)?")


def _loose(span: str, n: int) -> Reference | None:
    m = _LOOSE.fullmatch(span)
    if m is None or m.group("ext").lower() not in _FILE_EXTENSIONS or _is_version(m.group("path")):
        return None
    start = int(m.group("h1")) if m.group("h1") else None
    end = int(m.group("h2")) if m.group("h2") else start
    return Reference("path", f"`{span}`", n, path=m.group("path"), start=start, end=end,
                     source="anchor" if start else "backtick")


def _anchor(m: re.Match[str], line: str) -> tuple[str | None, str | None]:
    """(first, last) line of `path#L10-L20`, `path:42-50`; `path:42:7` is line 42, column 7."""
    if m.group("h1"):
        return m.group("h1"), m.group("h2")
    if m.group("c1"):
        ranged = m.group("c2") and line[m.end("c1")] == "-"
        return m.group("c1"), m.group("c2") if ranged else None
    return None, None


def _accepted(m: re.Match[str], code: bool) -> bool:
    path, ext = m.group("path"), m.group("ext").lower()
    anchored = bool(m.group("h1") or m.group("c1"))
    if _is_version(path):
        return False
    if anchored:
        return True
    if code:
        return "/" in path  # `json.load` or `foo.py` inside code is an attribute or a string
    return "/" in path.strip("./") or ext in _FILE_EXTENSIONS


def _is_version(path: str) -> bool:
    """`v1.2.3`, `3.11.x`, `1.0.rc1`: numbers, not files."""
    return bool(re.fullmatch(r"v?\d+(\.\w+)+", path))


def _backticked(line: str, n: int) -> list[Reference]:
    found: list[Reference] = []
    for m in _BACKTICK.finditer(line):
        span = m.group(1).strip()
        imports = _imports(span, n)
        if imports:
            found += imports
            continue
        as_path = _PATH.fullmatch(span)
        if as_path and _accepted(as_path, code=False):
            continue  # already a path reference
        sym = _SYMBOL.fullmatch(span)
        if not sym or re.search(r"#L\d", span):   # `path#L10` is an anchor without a file extension
            continue
        name = re.sub(r"::|#", ".", sym.group("name"))
        for receiver in _RECEIVERS:
            if name.startswith(receiver):
                name = name[len(receiver):]
        if not name or name in _LITERALS or not _looks_like_code(name, called=bool(sym.group("call"))):
            continue
        found.append(_claimed_at(Reference("symbol", m.group(0), n, symbol=name, source="backtick"), line, m.end()))
    return found


# "`cancel_order` in shop/service.py#L2-L3", "`f()` (shop/a.py:5)", "`C.m`, defined in shop/c.py":
# the answer says where the symbol is, and that claim can be checked too.
_CLAIM = re.compile(r"\s*(?:\(\s*|,?\s+(?:(?:is|are|was|lives|sits)\s+)?(?:(?:defined|declared|implemented)\s+)?"
                    r"(?:in|at|from|inside)\s+)`?")


def _claimed_at(ref: Reference, line: str, end: int) -> Reference:
    gap = _CLAIM.match(line, end)
    at = _PATH.match(line, gap.end()) if gap else None
    if at is None or not _accepted(at, code=False) or _URL.match(line, gap.end() if gap else end):
        return ref
    first, last = _anchor(at, line)
    start = int(first) if first else None
    return replace(ref, path=at.group("path"), start=start, end=int(last) if last else start)


def _looks_like_code(name: str, called: bool) -> bool:
    if "." in name or called:
        return True
    if "_" in name.strip("_"):
        return True
    # PascalCase or camelCase: an uppercase letter that is not the whole word.
    return any(c.isupper() for c in name) and any(c.islower() for c in name)


def _imports(code: str, n: int, base: str | None = None) -> list[Reference]:
    lang = registry.of_path(base) if base is not None else None
    if lang is not None and lang.imports is not None:
        return language_imports(lang, code, n, base)
    if base is not None and base.rsplit(".", 1)[-1].lower() in JS_EXTENSIONS:
        return [Reference("import", code.strip(), n, module=spec, base=base, source="import")
                for spec in _JS_RELATIVE.findall(code)]
    found: list[Reference] = []
    m = _PY_FROM.match(code)
    if m:
        mod = m.group("mod")
        if mod.startswith(".") and base is None:
            return []   # a relative import needs the importing file: only a patch gives it
        names = [p.strip().split(" as ")[0].strip() for p in m.group("names").strip("() ").split(",")]
        for name in names:
            if name and name != "*" and re.fullmatch(r"\w+", name):
                found.append(Reference("import", code.strip(), n, module=mod, symbol=name, base=base,
                                       source="import"))
        if not found:
            found.append(Reference("import", code.strip(), n, module=mod, base=base, source="import"))
        return found
    m = _PY_IMPORT.match(code)
    if m:
        for part in m.group("mods").split(","):
            mod = part.strip().split(" as ")[0].strip()
            found.append(Reference("import", code.strip(), n, module=mod, base=base, source="import"))
    return found


def _include(code: str, n: int) -> list[Reference]:
    """The file a C or C++ `#include "..."` line names, as a path reference; [] for any other line."""
    m = _INCLUDE.match(code)
    return [Reference("path", code.strip(), n, path=m.group("path"), source="include")] if m else []


def language_imports(lang: Language, code: str, n: int, base: str | None = None) -> list[Reference]:
    """The imports of one line of `lang` (spec.Imports): a file it names (an import reference, its
    spec as written; one named from the importing file's directory starts with `./`), or each
    qualified name it names: where the language declares its namespaces (spec.Imports.declares), an
    import reference to the whole name (`com.acme.billing.InvoiceBook`; a wildcard ends in `.*`),
    else a symbol reference to its last two parts (`use App\\Models\\Customer` is `Models.Customer`:
    the class in a file whose package or directory is `Models`)."""
    assert lang.imports is not None
    found = lang.imports.pattern.match(code)
    if found is None:
        return []
    groups = found.groupdict()
    text = code.strip()
    if groups.get("names"):
        names = _names(groups["names"], lang.imports.separator)
        if lang.imports.declares is not None:
            return [Reference("import", text, n, module=".".join(name), base=base, source="import",
                              language=lang.name) for name in names]
        return [Reference("symbol", text, n, symbol=".".join(name[-2:]), source="import", language=lang.name)
                for name in names if name[-1] != "*"]
    here, file = groups.get("here"), groups.get("file")
    spec = ("./" + here if not here.startswith(("./", "../")) else here) if here else file
    return [Reference("import", text, n, module=spec, base=base, source="import", language=lang.name)] if spec else []


def _names(spec: str, separator: str) -> list[list[str]]:
    """The qualified names an import's names group spells, each as its parts: `a.b.{C, D => E}` is
    a.b.C and a.b.D; `A\\B as C` is A.B; a wildcard (`a.b._`, `a.b.*`) is a, b, *, and so is
    Scala 3's import of a package's given instances (`a.b.given`, `a.b.{given, C}`): no member of
    that name, what the package defines implicitly."""
    spec = spec.strip()
    if "{" in spec:
        prefix, group = spec.split("{", 1)
        heads = [prefix + item.strip() for item in group.rstrip("} \t;").split(",")]
    else:
        heads = spec.split(",")
    out = []
    for head in heads:
        head = re.split(r"\s+as\s+|\s*=>\s*", head.strip())[0].strip()
        parts = [p for p in head.split(separator) if p]
        wild = parts[-1:] in (["_"], ["*"], ["given"])
        words = parts[:-1] if wild else parts
        if words and all(re.fullmatch(r"[A-Za-z_$][\w$]*", p) for p in words):
            out.append([*words, "*"] if wild else words)
    return out


def _dedupe(refs: list[Reference]) -> list[Reference]:
    seen: set[tuple[object, ...]] = set()
    out: list[Reference] = []
    for ref in refs:
        if ref.key() not in seen:
            seen.add(ref.key())
            out.append(ref)
    return out
