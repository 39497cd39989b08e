"""Where the package's files live. Everything is relative to the repository root,
which can be moved with SERVERBENCH_ROOT (tests use it to work in a temporary copy)."""

from __future__ import annotations

import os
from pathlib import Path


def repo_root() -> Path:
    env = os.environ.get("SERVERBENCH_ROOT")
    if env:
        return Path(env).resolve()
    # src/python/serverbench/paths.py -> repository root is three levels above the package
    return Path(__file__).resolve().parents[3]


def spec_dir() -> Path:
    # The contract is never relocated with SERVERBENCH_ROOT: it belongs to the code.
    return Path(__file__).resolve().parents[3] / "spec"


def data_dir() -> Path:
    return Path(os.environ.get("SERVERBENCH_DATA", repo_root() / "data")).resolve()


def raw_dir() -> Path:
    return data_dir() / "raw"


def processed_dir() -> Path:
    return data_dir() / "processed"


def reference_dir() -> Path:
    return data_dir() / "reference"


def paper_dir() -> Path:
    return Path(os.environ.get("SERVERBENCH_PAPER", repo_root() / "paper")).resolve()


def figures_dir() -> Path:
    return paper_dir() / "figures"


def profiles_dir() -> Path:
    return Path(__file__).resolve().parent / "profiles"
