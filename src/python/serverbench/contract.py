"""The native command-line contract, read from spec/cli.json (the only copy) and the
spec entries the plug-ins on the path ship (plugins.spec_files(): a language package's
language.json, a benchmark package's spec.json), merged in.

Languages, benchmarks, which language implements which benchmark (and variant, and
role) all come from there; nothing here restates them."""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from dataclasses import dataclass, fields
from functools import lru_cache
from pathlib import Path
from typing import Any

from serverbench import paths, plugins
from serverbench.rawdata.columns import Col

# Parameters the harness supplies itself for socket benchmarks (never a profile's choice).
HARNESS_PARAMS = ("host", "port")


def cli_contract() -> dict:
    """spec/cli.json with the plug-ins' entries: the same object while the plug-ins on the
    path are the same (catalog rebuilds its objects only when this is another one)."""
    return _merged(_cli_file(paths.spec_dir()), plugins.spec_files())


@lru_cache(maxsize=8)
def _cli_file(spec_dir: Path) -> str:
    return str(spec_dir / "cli.json")


@lru_cache(maxsize=8)
def _read(file: str) -> dict:
    with open(file, encoding="utf-8") as f:
        return json.load(f)


@lru_cache(maxsize=8)
def _merged(file: str, plugged: tuple[tuple[str, str, str], ...]) -> dict:
    spec = _read(file)
    if not plugged:
        return spec
    spec = copy.deepcopy(spec)
    langs, benches = spec[Col.languages], spec[Col.benchmarks]
    for kind, name, entry_file in plugged:  # languages first: a benchmark may name a plug-in language
        entry = plugins.spec_entry(entry_file)
        table = langs if kind == "language" else benches
        if name in table:
            raise ValueError(f"{entry_file}: {kind} {name!r} is already in spec/cli.json")
        if kind == "language":
            table[name] = {**entry, "executable": str(Path(entry_file).parent / entry["executable"])}
            continue
        missing = sorted({"cli", "languages", "record"} - set(entry))
        if missing:
            raise ValueError(f"{entry_file}: a benchmark's spec entry has no {', '.join(missing)}")
        shapes = (("cli", dict, "an object"), ("languages", list, "an array"), ("record", dict, "an object"))
        for key, kind_of, word in shapes:
            if not isinstance(entry[key], kind_of):
                raise ValueError(f"{entry_file}: its {key!r} is {word}, not {json.dumps(entry[key])[:60]}")
        table[name] = entry["cli"]
        for lang in entry[Col.languages]:
            if lang not in langs:
                raise ValueError(f"{entry_file}: no language {lang!r} runs it; known: {', '.join(langs)}")
            langs[lang] = {**langs[lang], "benchmarks": [*langs[lang].get(Col.benchmarks, []), name]}
    return spec


def languages() -> tuple[str, ...]:
    """Every language of spec/cli.json, in its order."""
    return tuple(cli_contract()[Col.languages])


def benchmarks() -> tuple[str, ...]:
    """Every benchmark of spec/cli.json, in its order."""
    return tuple(cli_contract()[Col.benchmarks])


def language(name: str) -> dict:
    langs = cli_contract()[Col.languages]
    if name not in langs:
        raise ValueError(f"unknown language {name!r}; known: {', '.join(sorted(langs))}")
    return langs[name]


def benchmark(name: str) -> dict:
    benches = cli_contract()[Col.benchmarks]
    if name not in benches:
        raise ValueError(f"unknown benchmark {name!r}; known: {', '.join(sorted(benches))}")
    return benches[name]


def implements(lang: str, bench: str) -> bool:
    """Whether spec/cli.json lists `bench` under languages.<lang>.benchmarks."""
    return bench in language(lang).get(Col.benchmarks, [])


def variants(lang: str) -> list[str]:
    """The variants a language implements (languages.<lang>.variants, else implemented_variants)."""
    return list(language(lang).get("variants", implemented_variants()))


def implemented_variants() -> list[str]:
    """The variants the programs are built with (implemented_variants; fair alone without it)."""
    return list(cli_contract().get("implemented_variants", ["fair"]))


def socket_host() -> str:
    """The address every socket benchmark's server listens on and its client connects to
    (sockets.host: loopback)."""
    return str(cli_contract()["sockets"][Col.host])


def roles(bench: str) -> list[str]:
    """The roles of a socket benchmark (server, client), [] for a single-process one."""
    return list(benchmark(bench).get("roles", {}))


def language_roles(lang: str, bench: str) -> list[str]:
    """The roles of `bench` that `lang` implements (languages.<lang>.roles.<bench>, absent = all)."""
    if not implements(lang, bench):
        return []
    return list(language(lang).get("roles", {}).get(bench, roles(bench)))


def family(bench: str) -> str:
    """How the harness runs a benchmark: 'socket' (a server and a client) or 'process'."""
    return "socket" if roles(bench) else "process"


@dataclass(frozen=True)
class Flag:
    """One flag of a benchmark's command line (spec/cli.json benchmarks.<b>[.roles.<r>].flags),
    typed: what the harness passes, checks a profile's values against, and documents."""

    flag: str  # e.g. "--message-bytes"
    param: str | None  # the record parameter it sets; None for --variant
    type: str  # int | number | enum
    has_default: bool = False
    default: Any = None
    min: float | None = None
    min_exclusive: float | None = None
    max: float | None = None
    values: tuple = ()  # an enum's values
    knob: Mapping | None = None  # a paper-variant knob ({"languages", "fair", "paper", "doc"?})

    @classmethod
    def of(cls, flag: str, entry: Mapping) -> Flag:
        known = {f.name for f in fields(cls)} - {"flag", "has_default", "values"}
        typed = {k: v for k, v in entry.items() if k in known}
        return cls(flag=flag, has_default="default" in entry, values=tuple(entry.get("values", ())), **typed)

    @property
    def is_param(self) -> bool:
        """Whether it sets a record parameter: not --variant, not a paper-variant knob
        (those are resolved from --variant and reported under `knobs`), not host/port."""
        return bool(self.param) and self.knob is None and self.param not in HARNESS_PARAMS


@dataclass(frozen=True, eq=False)
class SpecKey:
    """The parsed contract as a cache key: the same object is the same spec (it is rebuilt
    only when the plug-ins change, or a test overrides cli_contract)."""

    value: dict

    def __hash__(self) -> int:
        return id(self.value)

    def __eq__(self, other) -> bool:
        return isinstance(other, SpecKey) and other.value is self.value


def spec_key() -> SpecKey:
    return SpecKey(cli_contract())


def flags(bench: str, role: str | None = None) -> dict[str, Flag]:
    """The flags of a benchmark by name, in spec order (of one role for a socket benchmark;
    role None = the union of every role's flags, first role first). Built once per contract
    in force (spec_key); the same dict is shared: do not mutate it."""
    return _flags(spec_key(), bench, role)


@lru_cache(maxsize=256)
def _flags(key: SpecKey, bench: str, role: str | None) -> dict[str, Flag]:
    return _build_flags(bench, role)


def _build_flags(bench: str, role: str | None) -> dict[str, Flag]:
    b = benchmark(bench)
    roles = b.get("roles")
    if roles is None:
        tables = [b["flags"]]
    elif role is not None:
        if role not in roles:
            raise ValueError(f"benchmark {bench!r} has no role {role!r}; roles: {', '.join(roles)}")
        tables = [roles[role]["flags"]]
    else:
        tables = [r["flags"] for r in roles.values()]
    out: dict[str, Flag] = {}
    for table in tables:
        for flag, entry in table.items():
            out.setdefault(flag, Flag.of(flag, entry))
    return out


def flag_of(bench: str, param: str, role: str | None = None) -> Flag | None:
    """The flag that sets a parameter, or None."""
    return next((f for f in flags(bench, role).values() if f.param == param), None)


def profile_params(bench: str) -> tuple[str, ...]:
    """The parameters a profile may list for a benchmark (the record's params that the
    harness does not supply itself)."""
    return tuple(dict.fromkeys(f.param for f in flags(bench).values() if f.param and f.is_param))


def executable(lang: str, settings: Mapping | None = None) -> Path:
    """Absolute path of a language's built entry point (spec/cli.json 'executable'), or
    of the build a runtime setting's value names (languages.<lang>.settings.<s>.executables)."""
    rel = language(lang)["executable"]
    for name, value in (settings or {}).items():
        rel = runtime_settings(lang)[name].get("executables", {}).get(value, rel)
    return paths.code_root() / rel


def port_of(lang: str) -> str:
    """The language whose program `lang` ports to another runtime release (spec/cli.json
    `port_of`: Pekko and Akka 2.4.12 run scala_akka's code), else `lang` itself: the plan
    costs a port's run as its original's. A language key's settings ('go[gc=...]') are
    ignored."""
    base = lang.split("[", 1)[0]
    return cli_contract()[Col.languages].get(base, {}).get("port_of", base)


def runtime_settings(lang: str) -> dict:
    """A language's runtime settings (languages.<lang>.settings): {name: {values, default,
    executables, record, doc}}; e.g. Go's gc. Not flags of a benchmark: the harness picks
    the build, the record says which ran (its `record` path, e.g. runtime.gc)."""
    return dict(language(lang).get(Col.settings, {}))


def omitted_args(lang: str, settings: Mapping | None) -> list[str]:
    """The command template's arguments a runtime setting's value leaves out
    (languages.<lang>.settings.<s>.omit, e.g. the JVM's -Xms for heap=grow), unfilled."""
    out: list[str] = []
    for name, value in (settings or {}).items():
        out += runtime_settings(lang)[name].get("omit", {}).get(value, [])
    return out


def check_settings(lang: str, settings: dict) -> dict:
    """settings checked against the contract (ValueError naming the bad one)."""
    known = runtime_settings(lang)
    for name, value in settings.items():
        if name not in known:
            have = ", ".join(known) or "none"
            raise ValueError(f"{lang} has no runtime setting {name!r} (spec/cli.json: {have})")
        if value not in known[name]["values"]:
            raise ValueError(f"{lang} setting {name}: {value!r} is not one of {', '.join(known[name]['values'])}")
    return dict(settings)


def language_key(lang: str, settings: Mapping | None) -> str:
    """The language with the runtime settings a run chose, as config ids and the analysis
    name it: 'go[gc=nogreentea]' (the same language, another build of it). A setting at
    its default is the language itself ('go'), as every run that chose none."""
    defaults = {k: v.get("default") for k, v in language(lang).get(Col.settings, {}).items()}
    chosen = sorted((k, v) for k, v in (settings or {}).items() if defaults.get(k) != v)
    return lang + "".join(f"[{k}={v}]" for k, v in chosen)


def plot_styles() -> dict[str, dict]:
    """{language key: {label, color, marker}} (spec/cli.json `plot`): every language's, and
    every runtime setting value's that has one, under its key ('go[gc=nogreentea]')."""
    out: dict[str, dict] = {}
    for lang, spec in cli_contract()[Col.languages].items():
        out[lang] = dict(spec.get("plot", {}))
        for name, setting in spec.get(Col.settings, {}).items():
            for value, style in setting.get("plot", {}).items():
                out[language_key(lang, {name: value})] = dict(style)
    return out


def startup_costs(role: str = "startup_s") -> dict[str, float]:
    """{language: seconds} a fresh process of it takes to start (spec/cli.json `startup_s`;
    `server_startup_s` for a socket server): the plan's estimates."""
    return {lang: float(spec[role]) for lang, spec in cli_contract()[Col.languages].items() if role in spec}


def settings_mismatch(lang: str, settings: dict, native: dict) -> str | None:
    """Whether a native record ran the settings asked for (the default where none was):
    None, or what differs. A record that does not report a setting is a mismatch only
    when the setting was asked for (the tests' fake programs report none)."""
    for name, spec in runtime_settings(lang).items():
        want = settings.get(name, spec["default"])
        node: object = native
        for part in spec[Col.record].split("."):
            node = node.get(part) if isinstance(node, dict) else None
        if node is None and name not in settings:
            continue
        if node != want:
            return f"{spec[Col.record]} is {node!r}, the harness asked for {name}={want}"
    return None


def param_defaults(bench: str, role: str | None = None) -> dict:
    """params keys the native record reports, with the contract's defaults where it has one."""
    return {f.param: f.default for f in flags(bench, role).values() if f.param and f.is_param and f.has_default}


def native_args(bench: str, params: Mapping, variant: str = "fair", role: str | None = None) -> list[str]:
    """The native argv after the executable: the benchmark's id, its role for a socket
    benchmark, then its flags with their values (['<benchmark>', '--message-bytes', '5000', ...]).

    Every parameter flag the contract gives the benchmark is passed explicitly, so that a
    record never depends on one language's default; a paper-variant knob flag only when
    params name it (else --variant resolves it, as the record's `knobs` reports)."""
    if roles(bench) and role is None:
        raise ValueError(f"{bench} is a socket benchmark: give the role ({', '.join(roles(bench))})")
    args = [bench] + ([role] if role else [])
    for flag, f in flags(bench, role).items():
        key = f.param
        if key is None:  # --variant
            args += [flag, variant]
            continue
        if f.knob is not None and key not in params:
            continue
        if key in params:
            value = params[key]
        elif f.has_default:
            value = f.default
        else:
            raise ValueError(f"{bench}: missing required parameter {key!r} (flag {flag})")
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
