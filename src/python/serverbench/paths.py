"""Where the package's files live: the one module that knows the tree's layout (no other
module counts `Path(__file__).parents[N]`).

Two roots. The code's own files (spec/, notebooks/, data/reference/, tests/golden/, the
built programs under src/) belong to the checkout this code sits in (`code_root()`) and
never move. What a sweep writes and reads (data/raw, data/processed, paper/) is under
`repo_root()`, which SERVERBENCH_ROOT moves (tests work in a temporary copy), and
SERVERBENCH_DATA / SERVERBENCH_PAPER move data/ and paper/ alone."""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path
from typing import Any


@lru_cache(maxsize=8)
def _resolved(p: str) -> Path:
    return Path(p).resolve()


def _code() -> Path:
    """src/python/serverbench/paths.py -> the root of the tree this module sits in (cached:
    portable() asks for it once per value written, the contract's reader at every read)."""
    return _tree_of(__file__)


@lru_cache(maxsize=8)
def _tree_of(module_file: str) -> Path:
    return _resolved(module_file).parents[3]


@lru_cache(maxsize=8)
def _holds_spec(tree: Path) -> bool:
    # asked at every read of the contract: whether the code's own tree is a checkout does not change
    return (tree / "spec" / "cli.json").is_file()


def _checkout() -> Path:
    """The checkout this code belongs to: three levels above the package (a clone, an editable
    install); for a package installed from it (`pip install .[notebooks]`), the checkout it is
    used from: the current folder or the nearest one above it holding spec/cli.json."""
    here = _code()
    if _holds_spec(here):
        return here
    cwd = Path.cwd()
    return next((d for d in (cwd, *cwd.parents) if (d / "spec" / "cli.json").is_file()), here)


def code_root() -> Path:
    """The checkout this code belongs to (see _checkout); never moved by SERVERBENCH_ROOT."""
    return _checkout()


def repo_root() -> Path:
    env = os.environ.get("SERVERBENCH_ROOT")
    if env:
        return _resolved(env)  # cached: portable() asks for it once per value written
    return _checkout()


# an absolute path inside a string (a command's argument, "-Dx=/path", a quoted list)
_ABS_PATH = re.compile(r"(?<![\w.~-])/[^\s'\",;=\[\]]+")
# the package's top-level folders: a path through one of them in another checkout
# (/tmp/clone/src/go/...) is written from that folder on
_TOP_FOLDERS = ("src", "data", "spec", "tests", "paper", "notebooks", "scripts")


def portable(obj):
    """obj with every path into this package written relative to its root (the root
    itself as "."), so raw logs, manifests and processed tables carry no machine paths.
    A path into another checkout (a sweep run in a clone) counts when the folder it goes
    through exists here too (src/go, data/raw, ...). Other paths (--raw-dir /tmp/x,
    /usr/lib/jvm) are not the package's and stay as they are."""
    return portabler()(obj)


def portabler() -> Callable[[Any], Any]:
    """portable() with the roots found once: for a whole column of values (finding the
    checkout stats a file, which per cell was a fifth of processing a sweep's runs)."""
    code = _code()
    roots = sorted({str(code), str(repo_root())}, key=len, reverse=True)
    roots = [r for r in roots if r != "/"]

    def rel(m: re.Match) -> str:
        p = m.group(0)
        for r in roots:
            if p == r:
                return "."
            if p.startswith(r + "/"):
                return p[len(r) + 1 :]
        parts = p.split("/")
        for i in range(1, len(parts) - 1):
            if parts[i] in _TOP_FOLDERS and (code / parts[i] / parts[i + 1]).is_dir():
                return "/".join(parts[i:])
        return p

    def fix(x):
        if isinstance(x, Path):
            x = str(x)
        if isinstance(x, str):
            return _ABS_PATH.sub(rel, x) if "/" in x else x
        if isinstance(x, dict):
            return {k: fix(v) for k, v in x.items()}
        if isinstance(x, (list, tuple)):
            return [fix(v) for v in x]
        return x

    return fix


def spec_dir() -> Path:
    # The contract is never relocated with SERVERBENCH_ROOT: it belongs to the code.
    return _spec_dir(code_root())


@lru_cache(maxsize=8)
def _spec_dir(root: Path) -> Path:
    return root / "spec"  # a path join costs microseconds, and the contract is read ~100,000 times a report


def notebooks_dir() -> Path:
    # The notebooks belong to the code, like spec/: never relocated with SERVERBENCH_ROOT.
    return code_root() / "notebooks"


def golden_dir() -> Path:
    """tests/golden: the golden sweep and its expected tables (analysis.claims.golden)."""
    return code_root() / "tests" / "golden"


def data_dir() -> Path:
    return Path(os.environ.get("SERVERBENCH_DATA", repo_root() / "data")).resolve()


def raw_dir() -> Path:
    return data_dir() / "raw"


def processed_dir() -> Path:
    return data_dir() / "processed"


def reference_dir() -> Path:
    """data/reference: the sources' own published values (the paper's figures, the TCP
    write-up's tables). They are inputs that ship with the code, like spec/, not what a
    sweep writes, so neither SERVERBENCH_DATA nor SERVERBENCH_ROOT moves them: a data
    folder elsewhere (a test's empty one, a cluster's scratch) still sees them."""
    return code_root() / "data" / "reference"


def paper_dir() -> Path:
    return Path(os.environ.get("SERVERBENCH_PAPER", repo_root() / "paper")).resolve()


def figures_dir() -> Path:
    return paper_dir() / "figures"


def profiles_dir() -> Path:
    return Path(__file__).resolve().parent / "profiles"
