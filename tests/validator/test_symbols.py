"""Nested definitions and other tools' symbol spellings, through validate() on real repositories
in all six languages; and the spelling rules themselves (validator/symbols.py)."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from codevouch.validator import to_json, validate
from codevouch.validator.symbols import own_spelling, resolve, spellings
from tests.validator_helpers import Repo, find_line, snippet

# path -> (source, the body line of the nested definition, its name as another tool spells it,
#          its name here, the text that renames it)
CASES: dict[str, tuple[str, str, str, str, tuple[str, str]]] = {
    "pkg/outer.py": (
        "def outer():\n    def inner(x):\n        y = x + 1\n        return y * 2\n    return inner\n",
        "y = x + 1", "outer.<locals>.inner", "outer.inner", ("def inner(", "def renamed(")),
    "lib/m.js": (
        "function outer() {\n  function inner(x) {\n    const y = x + 1;\n    return y * 2;\n  }\n"
        "  return inner;\n}\n",
        "const y = x + 1;", "lib/m.js::outer.inner", "outer.inner", ("function inner(", "function renamed(")),
    "src/store.ts": (
        "export class Store {\n  load(): number {\n    const parse = (x: number): number => {\n"
        "      const y = x + 1;\n      return y * 2;\n    };\n    return parse(1);\n  }\n}\n",
        "const y = x + 1;", "Store#load.parse", "Store.load.parse", ("const parse =", "const renamed =")),
    "src/App.tsx": (
        "export function App() {\n  const onClick = (x: number) => {\n    const y = x + 1;\n"
        "    return y * 2;\n  };\n  return <div onClick={() => onClick(1)} />;\n}\n",
        "const y = x + 1;", "App::onClick", "App.onClick", ("const onClick =", "const renamed =")),
    "server/server.go": (
        "package server\n\ntype Server struct{}\n\nfunc (s *Server) Start() int {\n\tstop := func(x int) int {\n"
        "\t\ty := x + 1\n\t\treturn y * 2\n\t}\n\treturn stop(1)\n}\n",
        "y := x + 1", "(*Server).Start.stop", "Server.Start.stop", ("stop := func(", "renamed := func(")),
    "src/server.rs": (
        "pub struct Server;\n\nimpl Server {\n    pub fn start(&self) -> i32 {\n        fn inner(x: i32) -> i32 {\n"
        "            let y = x + 1;\n            y * 2\n        }\n        inner(1)\n    }\n}\n",
        "let y = x + 1;", "crate::server::Server::start::inner", "Server.start.inner",
        ("fn inner(", "fn renamed(")),
    "src/main/java/com/example/Outer.java": (
        "package com.example;\n\nclass Outer {\n  int run() {\n    class Local {\n      int m(int x) {\n"
        "        int y = x + 1;\n        return y * 2;\n      }\n    }\n    return new Local().m(1);\n  }\n}\n",
        "int y = x + 1;", "com.example.Outer.run.Local.m", "Outer.run.Local.m", ("int m(", "int renamed(")),
}


@pytest.fixture()
def repo(tmp_path: Path) -> Repo:
    r = Repo.create(tmp_path / "repo")
    r.commit_files({path: case[0] for path, case in CASES.items()}, "all languages")
    return r


def body_snippet(repo: Repo, path: str) -> dict[str, Any]:
    source, body, foreign, _, _ = CASES[path]
    line = find_line(source, body)
    return snippet(repo, path, line, line + 1, symbol=foreign)


@pytest.mark.parametrize("path", sorted(CASES))
def test_nested_symbol_in_a_foreign_spelling_survives_an_edit(repo: Repo, path: str) -> None:
    item = body_snippet(repo, path)
    source = CASES[path][0]
    first, rest = source.split("\n", 1)
    repo.write(path, first + "\n// moved down\n" + rest if not path.endswith(".py") else "# moved down\n" + source)
    out = to_json(validate(repo.root, [item])[0])
    assert (out["verdict"], out["reason"]) == ("stale-but-ok", "chunk-moved")
    assert out["current"]["symbol"] == CASES[path][3]
    assert out["current"]["start_line"] == item["start_line"] + 1


@pytest.mark.parametrize("path", sorted(CASES))
def test_nested_symbol_renamed_around_its_surviving_body_is_gone(repo: Repo, path: str) -> None:
    item = body_snippet(repo, path)
    old, new = CASES[path][4]
    repo.write(path, CASES[path][0].replace(old, new))
    out = to_json(validate(repo.root, [item])[0])
    assert (out["verdict"], out["reason"]) == ("historical-only", "symbol-removed")


def test_a_name_no_version_defines_is_judged_by_its_text(repo: Repo) -> None:
    # `outer.helper` never existed (another tool's naming we cannot map): the text decides.
    item = {**body_snippet(repo, "pkg/outer.py"), "symbol": "somewhere.else.helper"}
    repo.write("pkg/outer.py", "# edited\n" + CASES["pkg/outer.py"][0])
    out = to_json(validate(repo.root, [item])[0])
    assert (out["verdict"], out["reason"]) == ("stale-but-ok", "chunk-moved")
    repo.write("pkg/outer.py", CASES["pkg/outer.py"][0].replace("x + 1", "x + 2"))
    assert to_json(validate(repo.root, [item])[0])["verdict"] == "historical-only"


@pytest.mark.parametrize(("spelled", "path", "canonical"), [
    ("outer.<locals>.inner", "a.py", "outer.inner"),
    ("A.f.<locals>.g.<locals>.h", "a.py", "A.f.g.h"),
    ("pkg.mod.Class.method", "pkg/mod.py", "Class.method"),
    ("src.pkg.mod.Class.method", "src/pkg/mod.py", "Class.method"),
    ("pkg.Class", "pkg/__init__.py", "Class"),
    ("pkg/mod.py::Class.method", "pkg/mod.py", "Class.method"),
    ("tests/test_x.py::TestX::test_y", "tests/test_x.py", "TestX.test_y"),
    ("Class::method", "a.rs", "Class.method"),
    ("crate::net::Conn::open", "src/net/mod.rs", "Conn.open"),
    ("Class#method", "a.js", "Class.method"),
    ("(*Server).Start", "server.go", "Server.Start"),
    ("(Server).Start", "server.go", "Server.Start"),
    ("(*List[T]).Push", "list.go", "List.Push"),
    ("Server.Start", "server.go", "Server.Start"),
    ("com.example.Outer.Inner.m", "src/main/java/com/example/Outer.java", "Outer.Inner.m"),
    ("Class.method()", "a.ts", "Class.method"),
])
def test_spellings_resolve_to_the_qualified_name(spelled: str, path: str, canonical: str) -> None:
    defs = {canonical: [(1, 2)], "unrelated": [(3, 4)]}
    assert resolve(defs, spelled, path) == canonical
    assert canonical in spellings(spelled, path)


def test_spellings_never_strip_what_is_not_the_files_module() -> None:
    # `other.Class.method` in pkg/mod.py: `other` is not this file's module, so no match.
    assert resolve({"Class.method": [(1, 2)]}, "other.Class.method", "pkg/mod.py") is None
    assert resolve({"method": [(1, 2)]}, "Class.method", "pkg/mod.py") is None


@pytest.mark.parametrize(("symbol", "path", "own"), [
    ("OrderService.cancel_order", "src/orders/service.py", True),
    ("A.f, A.g", "lib/a.py", True),
    ("outer.<locals>.inner", "pkg/outer.py", False),
    ("(*Server).Start", "server/server.go", False),
    ("Server::start", "src/server.rs", False),
    ("orders.service.OrderService", "src/orders/service.py", False),   # also `OrderService`
    ("<module>", "lib/a.py", False),
    (None, "lib/a.py", False),
])
def test_own_spelling_is_codevouch_s_spelling_with_no_other_reading(symbol: str | None, path: str, own: bool) -> None:
    assert own_spelling(symbol, path) is own


KOTLIN = """package poet

class TypeName {
  companion object {
    fun get(mirror: Mirror): String {
      return mirror.accept(
        object : Visitor() {
          override fun visitPrimitive(t: Int): String {
            val name = "int"
            return name + t
          }
        },
      )
    }
  }
}
"""


@pytest.mark.parametrize(("symbol", "edit", "reason"), [
    # A function of an anonymous object: no version defines it here, so its text decides.
    ("TypeName.get.visitPrimitive", None, "chunk-moved"),
    # A name its own version defines, gone from the rename target around the same text.
    ("TypeName.get", ("fun get(", "fun fetch("), "renamed-and-changed"),
])
def test_a_name_in_a_renamed_and_edited_file_is_judged_as_in_its_own(
        tmp_path: Path, symbol: str, edit: tuple[str, str] | None, reason: str) -> None:
    # kotlinpoet 1.12 -> 1.15 moved src/main/java to src/commonMain/kotlin and edited the files:
    # an anonymous object's method intact at the new path was `renamed-and-changed`.
    repo = Repo.create(tmp_path / "repo")
    old, new = "src/main/java/poet/TypeName.kt", "src/commonMain/kotlin/poet/TypeName.kt"
    repo.commit_files({old: KOTLIN}, "1.12")
    line = find_line(KOTLIN, "val name = ")
    item = snippet(repo, old, line, line + 1, symbol=symbol)
    repo.remove(old)
    edited = "// Copyright\n" + KOTLIN + "\nfun other(): Int = 1\n"
    repo.commit_files({new: edited.replace(*edit) if edit else edited}, "1.15")
    out = to_json(validate(repo.root, [item])[0])
    assert out["reason"] == reason
    assert out["current"]["path"] == new
    assert out["current"]["start_line"] == line + 1
