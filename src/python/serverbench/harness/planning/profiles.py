"""Sweep definitions as data: TOML profiles, overrides, validation and expansion.
(Kept whole past ~350 lines: parsing, overrides and validation share a profile's key rules.)

A profile (see profiles/quick.toml for the annotated layout) has top-level settings
(name, description, seed, variant, languages), a [defaults] table of run settings, and
one table per benchmark of spec/cli.json ([pingping], [spawn], [throughput], ...) plus one
per search a benchmark declares (planning.search: [spawn_max], the Fig. 4a max-processes
search), after its benchmark's. A benchmark table holds its parameter
lists (every combination is a configuration; the parameters are the contract's) and may
override any [defaults] key. A sub-table [<bench>.per_language.<lang>] overrides
parameter lists or settings for one language (e.g. pingping at 5 kB only for java).
Each [[<bench>.also]] table adds one more grid: the benchmark table with these parameter
lists or settings replaced (e.g. a few saturate-mode points beside the flood grid).
A language that does not implement a benchmark (spec/cli.json languages.<lang>.benchmarks)
simply has no runs of it. Expansion into runs is harness.planning.plan.
"""

from __future__ import annotations

import copy
import re
import secrets
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # pragma: no cover (Python 3.10)
    import tomli as tomllib  # type: ignore

from serverbench import contract, paths, protocol
from serverbench.harness.planning import search
from serverbench.harness.planning.resolved import Profile
from serverbench.harness.planning.values import ProfileError
from serverbench.harness.planning.values import bool_value as _bool
from serverbench.harness.planning.values import bytes_value as _bytes
from serverbench.harness.planning.values import int_value as _int
from serverbench.harness.planning.values import languages as _langs
from serverbench.harness.planning.values import param_values as _param_values
from serverbench.harness.planning.values import positive_number as _pos_number
from serverbench.harness.planning.values import runtime_settings as _runtime_settings
from serverbench.rawdata.columns import Col

GiB = 1024**3
MiB = 1024**2
PROFILES = ("smoke", "quick", "paper")
_SETTING_KEYS = ("name", "description", "seed", "variant", "languages", "rerun_interfered", "defaults", "pieces")
DEFAULT_KEYS = {
    "trials": 3,
    "warmup": False,
    "timeout_s": 300.0,
    "memory_budget_bytes": 4 * GiB,
    "heap_fraction": 0.6,
    "process_limit": 1_048_576,
    "memory_enforcement": "auto",
    "watchdog_interval_s": 0.05,
    "cores": ["max"],
    "skip_unavailable_cores": False,
    "options": {},  # family-specific settings (e.g. socket benchmarks' placement), checked by that family
    "settings": {},  # runtime settings per language, each a list swept: { go = { gc = ["greentea", "nogreentea"] } }
}
COMMON_BENCH_KEYS = set(DEFAULT_KEYS) | {"enabled", "languages", "per_language", "steps", "also"}


# Asked of the contract at each call, never computed at import: a benchmark added to the
# spec (or a test's copy of it) is a profile table at once.
def table_names() -> tuple[str, ...]:
    """Every profile table: each benchmark's, and after it the table of the search it declares (if any)."""
    searches = {d.benchmark: d.table for d in search.declared().values()}
    return tuple(b for x in contract.benchmarks() for b in ((x, searches[x]) if x in searches else (x,)))


def top_keys() -> set[str]:
    """The keys a profile may hold at its top level: its settings and its tables."""
    return set(_SETTING_KEYS) | set(table_names())


def param_keys(table: str) -> tuple[str, ...]:
    """The parameters a profile may list in `table`: the contract's (spec/cli.json); a search
    table lists none (it grows its parameter itself)."""
    return () if search.of_table(table) else contract.profile_params(table)


# ---------------------------------------------------------------------------------------
def profile_path(name_or_path) -> Path:
    p = Path(str(name_or_path))
    if str(name_or_path) in PROFILES or (p.suffix != ".toml" and not p.exists()):
        cand = paths.profiles_dir() / f"{name_or_path}.toml"
        if cand.exists():
            return cand
        raise ProfileError(
            f"unknown profile {str(name_or_path)!r}; known: {', '.join(available_profiles())} "
            "(or give a path to a .toml file)"
        )
    if not p.exists():
        raise ProfileError(f"no such profile file: {p}")
    return p


def available_profiles() -> list[str]:
    return sorted(p.stem for p in paths.profiles_dir().glob("*.toml"))


def parse_value(text: str):
    """A --set value as a TOML literal (42, 1.5, true, [1, 2], "x"); a bare word stays a string."""
    try:
        return tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_.+-]*", text.strip()):
            return text.strip()
        raise ProfileError(
            f'cannot parse {text!r} as a TOML value (e.g. 5, 1.5, true, [1000, 10000], "copy")'
        ) from None


def parse_set(items) -> dict:
    """['pingping.repetitions=[1000,10000]', ...] -> {'pingping.repetitions': [1000, 10000]}."""
    out = {}
    for item in items or []:
        key, eq, val = item.partition("=")
        if not eq or not key.strip():
            raise ProfileError(f"--set wants key=value, got {item!r}")
        out[key.strip()] = parse_value(val)
    return out


def _flatten_overrides(overrides, prefix="") -> dict:
    out = {}
    for k, v in (overrides or {}).items():
        key = f"{prefix}{k}"
        if isinstance(v, dict) and key in ("defaults", *table_names()):
            out.update(_flatten_overrides(v, key + "."))
        else:
            out[key] = v
    return out


def apply_overrides(prof: dict, overrides) -> dict:
    prof = copy.deepcopy(prof)
    top, tables = top_keys(), ("defaults", *table_names())
    for key, value in _flatten_overrides(overrides).items():
        parts = key.split(".")
        if parts[0] not in top:
            raise ProfileError(f"unknown setting {key!r}; top-level keys: {', '.join(sorted(top))}")
        if len(parts) == 1:
            if parts[0] in tables and not isinstance(value, dict):
                raise ProfileError(f"{key!r} is a table; set one of its keys, e.g. {key}.trials=3")
            prof[parts[0]] = value
            continue
        if len(parts) != 2 or parts[0] not in tables:
            raise ProfileError(f"unknown setting {key!r}")
        table, sub = parts
        allowed = _allowed_keys(table)
        if sub not in allowed:
            raise ProfileError(f"unknown setting {key!r}; {table} keys: {', '.join(sorted(allowed))}")
        prof.setdefault(table, {})[sub] = value
    return prof


def _allowed_keys(table: str) -> set:
    if table == "defaults":
        return set(DEFAULT_KEYS)
    keys = COMMON_BENCH_KEYS | set(param_keys(table))
    if search.of_table(table):
        keys |= search.allowed_keys(table)
    return keys


def load_profile(name_or_path="quick", overrides=None) -> Profile:
    """The resolved profile: file, then overrides; every key checked, defaults filled in.

    Core counts stay as written (with "max"); expansion against the machine is plan()."""
    path = profile_path(name_or_path)
    try:
        with open(path, "rb") as f:
            raw = tomllib.load(f)
    except tomllib.TOMLDecodeError as e:
        raise ProfileError(f"{path}: not valid TOML ({e})") from None
    raw.setdefault("name", path.stem)
    prof = apply_overrides(raw, overrides)
    return resolve(prof, source=str(path))


def sweep_seed(prof: Profile, sweep_dir) -> int:
    """The seed of a sweep's run order: the profile's (--seed N / --set seed=N) when given;
    else the one its manifest recorded (a resumed sweep, another shard of it, keeps its
    order); else a fresh one from the OS's random source, recorded in the manifest."""
    if prof.seed is not None:
        return int(prof.seed)
    from serverbench.rawdata.sweepfiles import read_manifest

    recorded = read_manifest(sweep_dir).get(Col.seed)
    if isinstance(recorded, int) and not isinstance(recorded, bool):
        return recorded
    return secrets.randbelow(2**31)


def resolve(prof: dict, source: str = "<dict>") -> Profile:
    top = top_keys()
    for k in prof:
        if k not in top:
            raise ProfileError(f"{source}: unknown top-level key {k!r}")
    out = {
        "name": str(prof.get(Col.name, "custom")),
        "description": str(prof.get(Col.description, "")),
        "source": source,
        # None: the sweep draws its own (sweep_seed), so two sweeps do not share one run order
        "seed": None if prof.get(Col.seed) is None else _int(prof[Col.seed], "seed", minimum=0),
        "variant": prof.get(Col.variant, "fair"),
        "languages": _langs(prof.get(Col.languages, list(contract.languages())), "languages"),
        # an ok run flagged interfered (harness/running/interference.py) is run once more; smoke, a
        # build check and test fixture, keeps one record per task
        "rerun_interfered": _bool(prof.get(Col.rerun_interfered, True), "rerun_interfered"),
    }
    built = contract.implemented_variants()
    if out[Col.variant] not in built:
        raise ProfileError(
            f"variant {out[Col.variant]!r} is not built (spec/cli.json implemented_variants: {', '.join(built)})"
        )
    defaults = dict(DEFAULT_KEYS)
    for k, v in (prof.get(Col.defaults) or {}).items():
        if k not in DEFAULT_KEYS:
            raise ProfileError(f"{source}: unknown key defaults.{k}; known: {', '.join(sorted(DEFAULT_KEYS))}")
        defaults[k] = v
    out[Col.defaults] = _check_settings(defaults, "defaults")
    for bench in table_names():
        table = prof.get(bench)
        if table is None:
            out[bench] = {"enabled": False}
            continue
        b = {"enabled": bool(table.get(Col.enabled, True))}
        b.update(_bench_settings(bench, table, out[Col.defaults], source))
        b[Col.languages] = _langs(table.get(Col.languages, out[Col.languages]), f"{bench}.languages")
        # steps = "knobs": the audit's fair, paper and single-knob steps (serverbench.harness.planning.audit_steps)
        b[Col.steps] = table.get(Col.steps, "variant")
        if b[Col.steps] not in ("variant", "knobs"):
            raise ProfileError(f'{source}: {bench}.steps must be "variant" or "knobs", got {b[Col.steps]!r}')
        per = table.get(Col.per_language) or {}
        if not isinstance(per, dict):
            raise ProfileError(f"{source}: {bench}.per_language must be a table of language tables")
        b[Col.per_language] = {}
        for lang, sub in per.items():
            _langs([lang], f"{bench}.per_language")
            if not isinstance(sub, dict) or Col.per_language in sub or Col.languages in sub or Col.enabled in sub:
                raise ProfileError(
                    f"{source}: {bench}.per_language.{lang} must be a table of parameter lists or settings"
                )
            full = _bench_settings(
                bench,
                {**{k: b[k] for k in b if k not in ("enabled", "languages", "per_language")}, **sub},
                out[Col.defaults],
                f"{source}: {bench}.per_language.{lang}",
            )
            b[Col.per_language][lang] = {k: full[k] for k in sub}
        b["also"] = _also(bench, table.get("also") or [], b, out[Col.defaults], source)
        out[bench] = b
    return Profile.from_dict(out)


def _also(bench: str, also, b: dict, defaults: dict, source: str) -> list[dict]:
    """The [[<bench>.also]] grids: each a table of parameter lists or settings that replace
    the benchmark table's (not its per-language tables), checked. A grid may name
    `languages`, a subset of the table's, to run only those (e.g. one runtime setting of
    one language at a few points), and `cores`, to run its grid at other core counts (e.g.
    one pairs value on 1 core beside the full grid on 2)."""
    if not isinstance(also, list) or not all(isinstance(x, dict) for x in also):
        raise ProfileError(f"{source}: {bench}.also must be an array of tables ([[{bench}.also]])")
    if also and search.of_table(bench):
        raise ProfileError(f"{source}: {bench} (a search) takes no [[{bench}.also]] grids")
    out = []
    for i, sub in enumerate(also):
        bad = sorted(set(sub) & {"enabled", "per_language", "also", "steps"})
        if bad:
            raise ProfileError(f"{source}: {bench}.also[{i}] may not set {', '.join(bad)}")
        sub = dict(sub)
        langs = _langs(sub.pop("languages"), f"{source}: {bench}.also[{i}].languages") if Col.languages in sub else None
        if langs is not None and set(langs) - set(b[Col.languages]):
            raise ProfileError(
                f"{source}: {bench}.also[{i}].languages: {', '.join(sorted(set(langs) - set(b[Col.languages])))} "
                f"not among {bench}'s languages ({', '.join(b[Col.languages])})"
            )
        base = {k: b[k] for k in b if k not in ("enabled", "languages", "per_language", "also")}
        try:
            full = _bench_settings(bench, {**base, **sub}, defaults, f"{source}: {bench}.also[{i}]")
        except ProfileError as e:  # name the grid: the message alone names only the key
            raise ProfileError(f"{bench}.also[{i}]: {e}") from None
        out.append({k: full[k] for k in sub} | ({"languages": langs} if langs is not None else {}))
    return out


def _bench_settings(bench: str, table: dict, defaults: dict, source: str) -> dict:
    """A benchmark table's settings and parameter lists, checked, defaults filled in."""
    allowed = _allowed_keys(bench)
    for k in table:
        if k not in allowed:
            raise ProfileError(f"{source}: unknown key {bench}.{k}; known: {', '.join(sorted(allowed))}")
    b = _check_settings({k: table.get(k, defaults[k]) for k in DEFAULT_KEYS}, bench)
    if search.of_table(bench):
        return search.check_settings(bench, table, b)
    by_param = {f.param: f for f in contract.flags(bench).values() if f.param}
    for key in param_keys(bench):
        f = by_param[key]
        if key in table:
            values = table[key]
        elif f.has_default:
            values = f.default
        else:
            raise ProfileError(f"{source}: {bench}.{key} is required (flag {f.flag})")
        b[key] = _param_values(values, f"{bench}.{key}", f)
    return b


def _check_settings(s: dict, where: str) -> dict:
    s = dict(s)
    s[Col.trials] = _int(protocol.trials(s[Col.trials]), f"{where}.trials", minimum=1)
    if not isinstance(s[Col.warmup], bool):
        raise ProfileError(f"{where}.warmup must be true or false, got {s[Col.warmup]!r}")
    s[Col.timeout_s] = _pos_number(s[Col.timeout_s], f"{where}.timeout_s")
    s[Col.memory_budget_bytes] = _bytes(s[Col.memory_budget_bytes], f"{where}.memory_budget_bytes", allow_none=True)
    hf = s[Col.heap_fraction]
    if isinstance(hf, bool) or not isinstance(hf, (int, float)) or not 0 < hf <= 1:
        raise ProfileError(f"{where}.heap_fraction must be a number in (0, 1], got {hf!r}")
    s[Col.process_limit] = _int(s[Col.process_limit], f"{where}.process_limit", minimum=1024)
    if s[Col.memory_enforcement] not in ("auto", "cgroup", "watchdog", "none"):
        raise ProfileError(f"{where}.memory_enforcement must be auto, cgroup, watchdog or none")
    s[Col.watchdog_interval_s] = _pos_number(s[Col.watchdog_interval_s], f"{where}.watchdog_interval_s")
    if not isinstance(s[Col.skip_unavailable_cores], bool):
        raise ProfileError(f"{where}.skip_unavailable_cores must be true or false")
    cores = s[Col.cores]
    if not isinstance(cores, list):
        cores = [cores]
    if not cores:
        raise ProfileError(f"{where}.cores is empty")
    for c in cores:
        if c != "max" and (isinstance(c, bool) or not isinstance(c, int) or c < 1):
            raise ProfileError(f'{where}.cores: {c!r} is not a positive core count (or "max")')
    s[Col.cores] = cores
    if not isinstance(s[Col.options], dict):
        raise ProfileError(f"{where}.options must be a table")
    s[Col.settings] = _runtime_settings(s[Col.settings], f"{where}.settings")
    return s
