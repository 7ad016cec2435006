"""Package and module qualifiers of a file (pure)."""
from __future__ import annotations

from codevouch.syntax.packages import declared_package, module_parts, qualifier_parts, qualifies


def test_module_parts_drop_directory_stems_and_declaration_suffixes() -> None:
    assert module_parts("src/flask/app.py") == ("src", "flask", "app")
    assert module_parts("flask/__init__.py") == ("flask",)
    assert module_parts("types/index.d.ts") == ("types",)
    assert module_parts("src/routing/mod.rs") == ("src", "routing")
    assert module_parts("lib/utils.d.mts") == ("lib", "utils")


def test_a_qualifier_is_a_go_package_or_a_run_of_the_module_path() -> None:
    go = "// Package chi is a router.\n// package not_this\npackage chi\n\nfunc URLParam() {}\n"
    assert declared_package("srv/server.go", go) == "chi" and declared_package("srv/server.py", go) is None
    assert qualifies("chi", "context.go", go)
    assert not qualifies("chi", "context.go", "package render\n")
    assert qualifies("middleware", "middleware/recoverer.go", "package middleware\n")
    assert qualifies("flask", "src/flask/app.py") and qualifies("flask.app", "src/flask/app.py")
    assert not qualifies("app.flask", "src/flask/app.py") and not qualifies("flask", "src/other/app.py")
    assert qualifies("crate::routing", "src/routing/mod.rs") and qualifier_parts("crate::routing") == ("routing",)
    assert qualifies("crate", "src/lib.rs") and not qualifies("", "src/lib.rs")
