"""Arguments shared by the figure modules, so each can run alone or from the runner (python -m codevouch_bench)."""
from __future__ import annotations

import argparse
import shutil
from pathlib import Path
from typing import Any

from codevouch_bench.lib.common import CACHE
from codevouch_bench.lib.config import PROFILES, Profile


def parser(description: str) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--quick", action="store_true", help="the quick profile (minutes)")
    p.add_argument("--out", type=Path, required=False, help="write this figure's JSON here")
    p.add_argument("--fake", action="store_true",
                   help="FakeEmbedder instead of MiniLM: checks the plumbing in seconds; figures meaningless")
    return p


def worker_args(p: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """The arguments of a build script's worker mode: one build of --branch of --repo into --index,
    in a process of its own (so its peak memory is that build's alone), JSON on stdout."""
    p.add_argument("--worker", action="store_true", help="internal: one measurement, JSON on stdout")
    p.add_argument("--repo", type=Path)
    p.add_argument("--index", type=Path)
    p.add_argument("--branch", default="main")
    return p


def embedder(args: argparse.Namespace) -> Any:
    from codevouch.embedding import FakeEmbedder, MiniLMEmbedder

    return FakeEmbedder() if args.fake else MiniLMEmbedder()


def profile(args: argparse.Namespace) -> Profile:
    return PROFILES["quick" if args.quick else "full"]


def workdir(prof: Profile, figure: str, fresh: bool = True) -> Path:
    """Scratch space for temp repos and indexes: under .bench-cache/, never committed."""
    path = CACHE / "work" / prof.name / figure
    if fresh:
        shutil.rmtree(path, ignore_errors=True)
    path.mkdir(parents=True, exist_ok=True)
    return path


def safe_name(spec: str) -> str:
    return spec.replace("==", "-").replace(":", "-").replace(",", "-")
