"""The store's settings: `StoreSettings`, the four variables the store acts on, handed down by the
caller that opens the store (the api from its Call's environment, a command from its Call).

    store = StoreSettings(call.env)
    VectorStore(index_dir, readonly=True, settings=store)

    chroma_url      CODEVOUCH_CHROMA_URL: vectors (and team snapshots) on that server, else embedded
    chroma_timeout  CODEVOUCH_CHROMA_TIMEOUT: seconds one call to that server may take
    busy_timeout    CODEVOUCH_BUSY_TIMEOUT: seconds a reader waits for a build's vector write
    lease_ttl       CODEVOUCH_LEASE_TTL: seconds a server builder's lease lasts

The store never asks the environment itself (tests/test_environment_readers.py). Each value is
read from the caller's `Environment` when the store uses it, as it was when the store asked
`environment.current()`: a bad CODEVOUCH_BUSY_TIMEOUT still fails only what waits on the
embedded store (and again each time), and a library caller's `Index` over this process's
variables still sees a change made between its calls. `DEFAULT` (no variable set) is the
declared defaults, for callers below the api that open a store without a Call (tests, benches).

A leaf above `environment`: it imports nothing else of codevouch.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from codevouch.environment import Environment


@dataclass(frozen=True)
class StoreSettings:
    """The store's four settings, each read from `env` (the caller's) at its use."""
    env: Environment = field(default_factory=Environment)

    @property
    def chroma_url(self) -> str | None:
        """The Chroma server's URL when one is set: vectors (and team snapshots) live there."""
        return self.env.chroma_url

    @property
    def chroma_timeout(self) -> float:
        """Seconds one call to the Chroma server may take (0: no limit)."""
        return self.env.chroma_timeout

    @property
    def busy_timeout(self) -> float:
        """Seconds a reader waits for a build's write batch to the embedded store."""
        return self.env.busy_timeout

    @property
    def lease_ttl(self) -> float:
        """Seconds a server builder's lease lasts after its last renewal (inf: never lapses)."""
        return self.env.lease_ttl


DEFAULT = StoreSettings()
