"""One repository in Python and Go, built, then edited without a build: an uncommitted new caller,
a deleted method, a changed body with lines moved, a renamed file and a deleted file. The
navigation tests ask it what is true now."""
from __future__ import annotations

from pathlib import Path

from tests.clihelp import FAKE, cv
from tests.gitrepo import Repo

COMMITTED = {
    "shop/orders.py": ("class OrderService:\n"
                       "    def cancel_order(self, order):\n        order.cancel()\n        return order\n\n"
                       "    def refund(self, order):\n        return order.refund()\n"),
    "shop/pricing.py": "def total(items):\n    return sum(items)\n",
    "shop/util.py": "def helper(x):\n    return x + 1\n",
    "shop/api.py": ("from shop.orders import OrderService\n\n\n"
                    "def handle(o):\n    # cancel_order in a comment is no use\n"
                    "    return OrderService().cancel_order(o)\n"),
    "old/legacy.py": "from shop.orders import OrderService\n\n\ndef old(o):\n    return OrderService().cancel_order(o)\n",
    "srv/server.go": ("package srv\n\ntype Server struct{}\n\n"
                      "func NewServer() *Server {\n\treturn &Server{}\n}\n\n"
                      "func (s *Server) Start() error {\n\treturn nil\n}\n\n"
                      "func (s *Server) Stop() {}\n"),
    "srv/main.go": "package srv\n\nfunc run() {\n\t_ = NewServer().Start()\n}\n",
    ".gitignore": "secret/\n",
}

ORDERS_NOW = "class OrderService:\n    def cancel_order(self, order):\n        order.cancel()\n        return order\n"
PRICING_NOW = "import math\n\n\ndef total(items):\n    # rounded up now\n    return math.ceil(sum(items))\n"
NEW_CALLER = "from shop.orders import OrderService\n\n\ndef brand_new(o):\n    return OrderService().cancel_order(o)\n"
SERVER_NOW = ("package srv\n\ntype Server struct{}\n\n"
              "func NewServer() *Server {\n\treturn &Server{}\n}\n\n"
              "func (s *Server) Start() error {\n\tprintln(\"starting\")\n\treturn nil\n}\n")
GO_CALLER = "package srv\n\nfunc Fresh() *Server {\n\treturn NewServer()\n}\n"


def edited(root: Path, index_dir: Path) -> Repo:
    """The repository built at COMMITTED, then edited in the working tree (nothing committed)."""
    repo = Repo.create(root)
    repo.commit_files(COMMITTED)
    built = cv("index", "build", *FAKE, cwd=repo.root, index=index_dir)
    assert built.returncode == 0, built.stderr
    repo.write("shop/orders.py", ORDERS_NOW)             # refund deleted
    repo.write("shop/pricing.py", PRICING_NOW)           # total changed and moved down
    repo.write("shop/new.py", NEW_CALLER)                # a new caller, untracked
    repo.git("mv", "shop/util.py", "shop/helpers.py")    # renamed
    repo.remove("old/legacy.py")                         # a caller deleted
    repo.write("srv/server.go", SERVER_NOW)              # Stop deleted, Start changed
    repo.write("srv/extra.go", GO_CALLER)                # a new Go caller
    repo.write("secret/hidden.py", "def cancel_order():\n    return 'never read'\n")   # ignored
    return repo
