"""The resident engine's figure on a large real repository: codevouch_bench.engine on SQLAlchemy.

    python -m codevouch_bench.engine_large --work DIR --out PATH [--quick]
    python -m codevouch_bench --only engine_large        # the same, recorded in benchmarks.json

The same four figures as codevouch_bench.engine (in-process, first call, warm, 50 mixed calls
with edits), on a clone of SQLAlchemy at the commit the large build figure uses (~45k chunks,
fake embedder: the CLI's own cost). The clone comes from $CODEVOUCH_BENCH_GIT_MIRRORS or the URL.
"""
from __future__ import annotations

from codevouch_bench import engine
from codevouch_bench.lib.common import CACHE

URL = "https://github.com/sqlalchemy/sqlalchemy"
COMMIT = "eb5ef2ac708a6e70ec253d78955d04e20c3c9784"     # the large build figure's full build
EDIT = "lib/sqlalchemy/engine/url.py"                   # ~900 lines: one module an agent edits


def main() -> None:
    engine.main({"url": URL, "commit": COMMIT, "edit": EDIT, "work": CACHE / "engine-large",
                 "script": "codevouch_bench.engine_large"})


if __name__ == "__main__":
    main()
