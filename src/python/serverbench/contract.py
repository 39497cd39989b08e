"""The native command-line contract, read from spec/cli.json (the only copy)."""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

from serverbench import paths

LANGUAGES = ("erlang", "go", "scala_akka")
BENCHMARKS = ("pingping", "spawn", "throughput")


@lru_cache(maxsize=1)
def cli_contract() -> dict:
    with open(paths.spec_dir() / "cli.json", encoding="utf-8") as f:
        return json.load(f)


def language(name: str) -> dict:
    langs = cli_contract()["languages"]
    if name not in langs:
        raise ValueError(f"unknown language {name!r}; known: {', '.join(sorted(langs))}")
    return langs[name]


def benchmark_flags(benchmark: str) -> dict:
    benches = cli_contract()["benchmarks"]
    if benchmark not in benches:
        raise ValueError(f"unknown benchmark {benchmark!r}; known: {', '.join(sorted(benches))}")
    return benches[benchmark]["flags"]


def executable(lang: str) -> Path:
    """Absolute path of a language's built entry point (spec/cli.json 'executable')."""
    return Path(__file__).resolve().parents[3] / language(lang)["executable"]


def param_defaults(benchmark: str) -> dict:
    """params keys the native record reports, with the contract's defaults where it has one."""
    out = {}
    for spec in benchmark_flags(benchmark).values():
        if spec.get("param") and "default" in spec:
            out[spec["param"]] = spec["default"]
    return out


def native_args(benchmark: str, params: dict, variant: str = "fair") -> list[str]:
    """The native argv after the executable, e.g. ['pingping', '--message-bytes', '5000', ...].

    Every flag the contract gives the benchmark is passed explicitly, so that a record
    never depends on one language's default."""
    args = [benchmark]
    for flag, spec in benchmark_flags(benchmark).items():
        key = spec.get("param")
        if key is None:  # --variant
            args += [flag, variant]
            continue
        if key in params:
            value = params[key]
        elif "default" in spec:
            value = spec["default"]
        else:
            raise ValueError(f"{benchmark}: missing required parameter {key!r} (flag {flag})")
        args += [flag, _format(value)]
    return args


def _format(value) -> str:
    if isinstance(value, bool):
        raise ValueError(f"boolean is not a valid flag value: {value!r}")
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def exit_code(name: str) -> int:
    return int(cli_contract()["exit_codes"][name])


def spec_path(name: str) -> Path:
    return Path(paths.spec_dir()) / name
