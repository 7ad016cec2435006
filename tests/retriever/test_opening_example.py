"""The README's opening story, with the real packaged model: a legacy handler that looks as
relevant as the current code, and the query that only the current code answers."""
from __future__ import annotations

from pathlib import Path

import pytest

from codevouch import Index
from codevouch.retriever.settings import Settings
from tests.gitrepo import Repo

pytestmark = pytest.mark.model

FILES = {
"src/orders/legacy/handlers.py": '''"""Request handlers of the first order API (kept for old clients)."""
from orders.legacy.bus import AuditLog, Request, Response


class CancelOrderHandler:
    """The legacy endpoint's handler for cancel order requests."""

    def __init__(self, orders, audit: AuditLog, clock) -> None:
        self.orders = orders
        self.audit = audit
        self.clock = clock

    def handle_request(self, request: Request) -> Response:
        order = self.orders.get(request.order_id)
        if order is None:
            return Response(status=404, body={"error": "no such order", "order_id": request.order_id})
        order.status = "cancelled"
        order.cancelled_at = self.clock.now()
        self.orders.put(order)
        self.audit.write("order_cancelled", order_id=order.id, request_id=request.id)
        return Response(status=200, body={"order_id": order.id, "status": order.status})

    def _validate(self, request: Request) -> list[str]:
        errors = []
        if not request.order_id:
            errors.append("order_id is required")
        if request.reason and len(request.reason) > 200:
            errors.append("reason is too long")
        return errors
''',
"src/orders/service.py": '''"""Orders: the service every current endpoint calls."""
from orders.audit import AuditLog
from orders.store import OrderStore


class OrderService:
    def __init__(self, store: OrderStore, audit: AuditLog) -> None:
        self.store = store
        self.audit = audit
        self.results: dict[str, dict] = {}

    def place_order(self, customer_id: str, items: list[str]) -> str:
        order = self.store.create(customer_id, items)
        self.audit.record("order_placed", order.id)
        return order.id

    def cancel_order(self, order_id: str, idempotency_key: str) -> dict:
        if idempotency_key in self.results:
            return self.results[idempotency_key]
        order = self.store.get(order_id)
        order.status = "cancelled"
        self.store.save(order)
        self.audit.record("order_cancelled", order.id)
        result = {"order_id": order.id, "status": order.status}
        self.results[idempotency_key] = result
        return result
''',
"src/orders/audit.py": '''class AuditLog:
    def __init__(self, sink) -> None:
        self.sink = sink

    def record(self, event: str, order_id: str) -> None:
        self.sink.append({"event": event, "order_id": order_id})
''',
}

QUERY = "cancel an order so that a repeated request returns the earlier result without a second audit event"


def test_the_current_service_ranks_above_the_legacy_handler_that_words_favour(repo: Repo, index_dir: Path) -> None:
    """As shipped (score fusion, each name's own words): dense search puts `OrderService.cancel_order`
    first by a hair (0.547 against 0.543) and so does the lexical list (BM25 5.0 against 4.0); the
    name-words list of each name's own words too (`cancel_order`: cancel, order; `handle_request`:
    handle, request). Against the qualified names' words (`CancelOrderHandler.handle_request`:
    cancel, order through its class, request through its method) the handler came first, by rank
    fusion (by 0.0012) and by score fusion (with `AuditLog` before the service)."""
    _assert_the_service_first(repo, index_dir, None)


def test_against_the_qualified_names_words_the_handler_ranks_first(repo: Repo, index_dir: Path) -> None:
    """Each name's own words rank the service first by rank fusion too; the default before, rank
    fusion with the qualified names' words, ranked the handler first."""
    _assert_the_service_first(repo, index_dir, Settings(fusion="rrf"))
    idx = Index(repo.root, index_dir, settings=Settings(fusion="rrf", name_words_weight=1.0, own_words_weight=0.0))
    assert idx.search(QUERY, k=1)[0].record.symbol == "CancelOrderHandler.handle_request"


def _assert_the_service_first(repo: Repo, index_dir: Path, settings: Settings | None) -> None:
    if not (repo.root / "src").exists():
        repo.commit_files(FILES)
        Index(repo.root, index_dir).build()
    idx = Index(repo.root, index_dir, **({"settings": settings} if settings is not None else {}))
    hits = idx.search(QUERY, k=3)
    assert [(h.record.path, h.record.symbol) for h in hits[:2]] == [
        ("src/orders/service.py", "OrderService.cancel_order"),
        ("src/orders/legacy/handlers.py", "CancelOrderHandler.handle_request")]
