"""codevouch.syntax.outline: a file's definitions as records (names, lines, signatures)."""
from __future__ import annotations

from codevouch.syntax.outline import Definition, outline


def test_python_definitions_with_decorators_members_and_nested_functions() -> None:
    text = ("import os\n\n@dataclass\nclass Order:\n    id: int\n\n    def cancel(self,\n               reason: str) -> bool:\n"
            "        def log():\n            pass\n        return True\n")
    assert outline(text, "shop/order.py") == [
        # Lines include the decorator; the signature is the defining node's own text.
        Definition("Order", 3, 11, "class Order:"),
        Definition("Order.cancel", 7, 11, "def cancel(self, reason: str) -> bool:"),
        Definition("Order.cancel.log", 9, 10, "def log():"),
    ]


def test_go_methods_are_named_by_their_receiver_and_a_type_spec_is_all_signature() -> None:
    text = "package m\n\ntype Server struct{}\n\nfunc (s *Server) Start(port int) error {\n\treturn nil\n}\n"
    names = {d.name: d for d in outline(text, "srv.go") or []}
    assert names["Server.Start"].signature == "func (s *Server) Start(port int) error"
    assert (names["Server.Start"].start, names["Server.Start"].end) == (5, 7)
    assert names["Server"].signature == "Server struct{}"      # the type_spec, without `type`


def test_an_arrow_function_constant_keeps_its_parameters_in_the_signature() -> None:
    found = outline("export const add = (a, b) => {\n  return a + b;\n};\n", "m.ts") or []
    # The declarator defines it (no `export const`); its value's body is cut off.
    assert [(d.name, d.signature) for d in found] == [("add", "add = (a, b) =>")]


def test_none_means_unknown_and_empty_means_nothing_defined() -> None:
    assert outline("anything", "notes.txt") is None
    assert outline("   \n", "a.py") == []
    assert outline("x = 1\nprint(x)\n", "a.py") == []
