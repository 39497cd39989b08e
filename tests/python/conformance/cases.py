"""Conformance cases generated from spec/cli.json alone.

Every language in ``languages`` gets, for every benchmark it lists (and every role of a
socket benchmark): each flag given each kind of bad value, a missing value, a missing
required flag, an unknown flag, a stray argument; an unknown sub-command, a value given
to ``--version``; every benchmark it does not list and every variant it does not
implement (exit 2 naming them); and valid tiny runs: the smallest command line, each
enum value, each optional flag given explicitly, each implemented variant. Nothing here
names a language, benchmark or flag: a new one in cli.json is picked up by itself.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
SPEC_DIR = ROOT / "spec"

# Values a benchmark gets in a valid run, so that every run takes well under a second:
# counts at their minimum, except that a count whose minimum is 1 stays tiny anyway.
TINY_SECONDS = Decimal("0.05")


def load_cli() -> dict:
    return json.loads((SPEC_DIR / "cli.json").read_text())


def load_schema() -> dict:
    return json.loads((SPEC_DIR / "native-record.schema.json").read_text())


@dataclass(frozen=True)
class Case:
    """One command line and what the contract says it must do."""

    language: str
    kind: str  # "usage" (exit 2), "run" (a record), "version", "help"
    args: tuple[str, ...]
    mentions: tuple[str, ...] = ()  # texts the usage error line must contain
    benchmark: str | None = None
    role: str | None = None
    variant: str | None = None
    params: dict = field(default_factory=dict, hash=False, compare=False)  # expected record params

    @property
    def id(self) -> str:
        return f"{self.language}:{self.kind}:" + " ".join(self.args)


def _dec(v) -> Decimal:
    return Decimal(str(v))


def _text(d: Decimal) -> str:
    return format(d.normalize(), "f")


def small_value(f: dict) -> str:
    """A valid value that keeps a run tiny (or that a wrongly accepted bad case survives)."""
    t = f["type"]
    if "tiny" in f:  # cli.json's own tiny value, where a flag's minimum is no valid run
        return _text(_dec(f["tiny"]))
    if t == "enum":
        return str(f.get("default", f["values"][0]))
    if t == "int":
        lo = _dec(f.get("min", 1))
        return _text(lo)
    # number: the smallest of TINY_SECONDS, max; above min / min_exclusive
    hi = _dec(f["max"]) if "max" in f else TINY_SECONDS
    v = min(TINY_SECONDS, hi)
    if "min" in f:
        v = max(v, _dec(f["min"]))
    if "min_exclusive" in f and v <= _dec(f["min_exclusive"]):
        v = (_dec(f["min_exclusive"]) + hi) / 2
    return _text(v)


def bad_values(f: dict) -> list[tuple[str, str]]:
    """(label, value) pairs the flag must refuse: one of each kind its type has."""
    t = f["type"]
    if t == "enum":
        return [("unknown-enum", "bogus")]
    out = [("not-a-number", "abc"), ("negative", "-1")]
    if ("min" in f and _dec(f["min"]) > 0) or ("min_exclusive" in f and _dec(f["min_exclusive"]) >= 0):
        out.append(("zero", "0"))
    if t == "int":
        out.append(("fraction", "1.5"))
        if "min" in f and _dec(f["min"]) > 1:
            out.append(("below-min", _text(_dec(f["min"]) - 1)))
        if "max" in f:
            out.append(("above-max", _text(_dec(f["max"]) + 1)))
    else:
        out.append(("nan", "nan"))
        if "max" in f:
            out.append(("above-max", _text(_dec(f["max"]) + Decimal("0.5"))))
    return out


def _conv(f: dict, text: str):
    if f["type"] == "int":
        return int(text)
    if f["type"] == "number":
        return float(text)
    return text


def f_values(f: dict | None) -> list[str]:
    """The values a valid run gives a flag: every enum value, or one small value."""
    if f is None:
        return []
    return list(f["values"]) if f["type"] == "enum" else [small_value(f)]


def knob_value(f: dict, variant: str, lang: str) -> str | None:
    """What a knob flag means under a fixed variant (fair/paper) for lang, else None."""
    v = f["knob"].get(variant)
    return v.get(lang) if isinstance(v, dict) else v


def has_knob(f: dict, lang: str) -> bool:
    return "knob" in f and lang in f["knob"].get("languages", [])


def implemented_variants(cli: dict, lang: str) -> list[str]:
    return list(cli["languages"][lang].get("variants", cli["implemented_variants"]))


def subcommands(cli: dict, bench: str, lang: str | None = None) -> list[tuple[tuple[str, ...], str | None, dict]]:
    """[(argv prefix, role, flags)] for a benchmark: one entry, or one per role."""
    b = cli["benchmarks"][bench]
    if "roles" not in b:
        return [((bench,), None, b["flags"])]
    roles = sorted(b["roles"])
    if lang is not None:
        roles = cli["languages"][lang].get("roles", {}).get(bench, roles)
    return [((bench, r), r, b["roles"][r]["flags"]) for r in roles]


def _required_args(flags: dict, skip: str | None = None) -> list[str]:
    out: list[str] = []
    for name in sorted(flags):
        if name != skip and flags[name].get("required"):
            out += [name, small_value(flags[name])]
    return out


def usage_cases(cli: dict, lang: str) -> list[Case]:
    L = cli["languages"][lang]
    cases: list[Case] = []
    u = lambda args, *m: cases.append(Case(lang, "usage", tuple(args), tuple(m)))  # noqa: E731
    for bench in L["benchmarks"]:
        for prefix, _role, flags in subcommands(cli, bench, lang):
            for name in sorted(flags):
                f = flags[name]
                others = _required_args(flags, skip=name)
                for _label, v in bad_values(f):
                    u([*prefix, *others, name, v], name)
                u([*prefix, *others, name], name)  # missing value at the end
                u([*prefix, *others, f"{name}="], name)  # empty value
                if f.get("required"):
                    u([*prefix, *others], name)  # required flag left out
                if f.get("param") is None and f["type"] == "enum":
                    for v in f["values"]:
                        if v not in implemented_variants(cli, lang):
                            u([*prefix, *others, name, v], name, v)  # a variant not built
                if "knob" in f:
                    vdefault = next((g.get("default") for g in flags.values() if g.get("param") is None), None)
                    fixed = None
                    if vdefault in ("fair", "paper") and has_knob(f, lang):
                        fixed = knob_value(f, vdefault, lang)
                    for v in f["values"]:
                        if v == "variant":
                            continue
                        if not has_knob(f, lang):
                            u([*prefix, *others, name, v], name)  # not a knob of this language
                            break
                        if fixed is not None and v != fixed:
                            u([*prefix, *others, name, v], name)  # contradicts the default variant
                            break
            req = _required_args(flags)
            if len(req) > 2:
                u([*prefix, req[0], *req[2:]], req[0])  # its value swallowed by the next flag
            if req:
                u([*prefix, *req, *req[:2]], req[0])  # given twice
            u([*prefix, *req, "--bogus-flag", "1"], "--bogus-flag")
            u([*prefix, *req, "stray"], "stray")
        b = cli["benchmarks"][bench]
        if "roles" in b:
            u([bench, "bogus-role"], "bogus-role")
            u([bench], bench)
            for role in sorted(b["roles"]):
                if role not in L.get("roles", {}).get(bench, sorted(b["roles"])):
                    u([bench, role, *_required_args(b["roles"][role]["flags"])], lang, bench, role)
    for bench in sorted(set(cli["benchmarks"]) - set(L["benchmarks"])):
        for prefix, _role, flags in subcommands(cli, bench):
            u([*prefix, *_required_args(flags)], lang, bench)  # a benchmark this language lacks
    u(["bogus-benchmark"], "bogus-benchmark")
    u(["--version", "x"], "--version")
    u([], "sub-command")
    return cases


def _run_case(lang: str, bench: str, flags: dict, given: dict[str, str]) -> Case:
    """A valid run: the given flags, the required ones at small values, defaults expected."""
    args, params, variant = [bench], {}, None
    for name in sorted(flags):
        f = flags[name]
        text = given.get(name)
        if text is not None:
            args += [name, text]
        elif f.get("required"):
            text = small_value(f)
            args += [name, text]
        elif "default" in f:
            text = str(f["default"])
        if text is None:
            continue
        if f.get("param") is None:
            variant = text
        elif "knob" not in f:
            params[f["param"]] = _conv(f, text)
    return Case(lang, "run", tuple(args), benchmark=bench, variant=variant, params=params)


def run_cases(cli: dict, lang: str) -> list[Case]:
    """Valid tiny runs of the benchmarks without roles (a socket benchmark's roles need
    each other: their bad command lines are in usage_cases, their runs in the socket
    engineers' tests)."""
    cases: list[Case] = []
    variants = implemented_variants(cli, lang)
    for bench in cli["languages"][lang]["benchmarks"]:
        if "roles" in cli["benchmarks"][bench]:
            continue
        flags = cli["benchmarks"][bench]["flags"]
        vflag = next((n for n, f in flags.items() if f.get("param") is None), None)

        seen: set[tuple] = set()

        def add(c: Case, seen: set[tuple] = seen) -> None:
            if c.args not in seen:
                seen.add(c.args)
                cases.append(c)

        add(_run_case(lang, bench, flags, {}))
        for v in f_values(flags.get(vflag)) if vflag else []:
            if v in variants:
                add(_run_case(lang, bench, flags, {vflag: v}))  # every implemented variant
        # Every value of every other enum flag and every optional flag given explicitly,
        # in as few runs as there are values in the longest enum: run i gives each enum
        # its i-th value (each runs at least once, combinations are any).
        # Knob flags (cli.json "knob") take any of their values only under --variant
        # mixed, and only in the languages the knob lists; they are not record params.
        others = {
            n: f
            for n, f in flags.items()
            if n != vflag and "knob" not in f and (f["type"] == "enum" or not f.get("required"))
        }
        knobs = {n: f for n, f in flags.items() if has_knob(f, lang)}
        if vflag is None or "mixed" not in variants:
            knobs = {}
        width = max([len(f_values(f)) for f in [*others.values(), *knobs.values()]], default=0)
        for i in range(width):
            given = {n: f_values(f)[i % len(f_values(f))] for n, f in others.items()}
            if knobs:
                given.update({n: f_values(f)[i % len(f_values(f))] for n, f in knobs.items()})
                given[vflag] = "mixed"
            add(_run_case(lang, bench, flags, given))
    return cases


def other_cases(lang: str) -> list[Case]:
    return [Case(lang, "version", ("--version",)), Case(lang, "help", ("--help",))]


def all_cases(cli: dict) -> list[Case]:
    """Every case of every language: what tests/conformance/parser-cases.json holds."""
    out: list[Case] = []
    for lang in cli["languages"]:
        out += usage_cases(cli, lang) + run_cases(cli, lang) + other_cases(lang)
    return out


# Languages whose own test suite runs every usage case in process (parser-cases.json):
# the process-level suite gives them a fixed sample instead. The others (c, nodejs) have
# no test suite of their own and start in milliseconds, so they keep every case here;
# the Python echo servers' parser is checked in process by the pytest unit tier.
IN_PROCESS_PARSERS = {
    "go", "erlang", "rust_tokio", "scala_akka", "scala", "java", "scala_actors", "java_vthreads",
    "scala_pekko", "scala_pekko_jdk25", "scala_pekko_jdk25_compact", "scala_akka24",
    "twisted", "eventlet", "python_threads", "im_loadgen",
}  # fmt: skip


def program_key(cli: dict, lang: str) -> tuple:
    """What decides a language's parser: its executable and main class. Languages that
    differ only in a JVM, its options or a -D language property share one parser."""
    spec = cli["languages"][lang]
    cmd = spec["command"]
    main = cmd[cmd.index("-cp") + 2] if "-cp" in cmd else None
    return (spec["executable"], main)


def usage_sample(cases: list[Case]) -> list[Case]:
    """A fixed handful of one language's usage cases, one of each kind the process must
    show (exit 2, one error line, nothing on stdout): no sub-command, an unknown one, a
    value after --version, and the first benchmark's first bad value, unknown flag and
    stray argument."""
    picks: list[Case] = []
    kinds = [
        lambda c: c.args == (),
        lambda c: c.args == ("bogus-benchmark",),
        lambda c: c.args[:1] == ("--version",),
        lambda c: c.args[-1:] == ("abc",),
        lambda c: "--bogus-flag" in c.args,
        lambda c: c.args[-1:] == ("stray",),
    ]
    for kind in kinds:
        hit = next((c for c in cases if kind(c)), None)
        if hit is not None and hit not in picks:
            picks.append(hit)
    return picks


def one_run_per_variant(cases: list[Case]) -> list[Case]:
    """The first valid run of each (benchmark, variant): the smallest command line, then
    each implemented variant."""
    seen: set[tuple] = set()
    out = []
    for c in cases:
        if (c.benchmark, c.variant) not in seen:
            seen.add((c.benchmark, c.variant))
            out.append(c)
    return out


def process_cases(cli: dict) -> list[Case]:
    """What the process-level conformance suite runs: for every language --version,
    --help and one valid tiny run per (benchmark, variant), its record validated; every
    usage case where no in-process suite checks the parser, else a fixed sample, once per
    program. The other valid command lines (each enum value, each knob under mixed) are
    parsed in process by the language's own suite."""
    out: list[Case] = []
    programs: set[tuple] = set()
    for lang in cli["languages"]:
        key = program_key(cli, lang)
        first = key not in programs
        programs.add(key)
        usage = usage_cases(cli, lang)
        if lang in IN_PROCESS_PARSERS:
            usage = usage_sample(usage) if first else []
        out += usage + one_run_per_variant(run_cases(cli, lang)) + other_cases(lang)
    return out


# --- the in-process parser cases --------------------------------------------------------
# Each language's own test suite (go test, eunit, JUnit/ScalaTest, cargo test) reads this
# file and runs its parser, in process, on every case of the languages it builds: the
# 2,000-odd bad command lines would otherwise each start a process (a JVM for most).
PARSER_CASES = ROOT / "tests" / "conformance" / "parser-cases.json"


def parser_cases_document(cli: dict, cli_bytes: bytes) -> dict:
    """Every usage case and every valid command line of every language, as JSON."""
    import hashlib

    langs = {}
    for lang in cli["languages"]:
        langs[lang] = {
            "usage": [{"args": list(c.args), "mentions": list(c.mentions)} for c in usage_cases(cli, lang)],
            "valid": [
                {"args": list(c.args), "benchmark": c.benchmark, "variant": c.variant, "params": c.params}
                for c in run_cases(cli, lang)
            ],
        }
    return {
        "about": (
            "Generated from spec/cli.json by `python tests/python/conformance/cases.py`; do not edit. "
            "usage: the command line must exit with exit_codes.usage, print nothing on stdout and one "
            "stderr line starting 'error: ' that contains every text in mentions. valid: the command "
            "line must parse; under variant null or fair, params are what the record's params must be."
        ),
        "cli_json_sha256": hashlib.sha256(cli_bytes).hexdigest(),
        "exit_codes": cli["exit_codes"],
        "languages": langs,
    }


def parser_cases_text() -> str:
    """The document with one case a line (small diffs when cli.json changes)."""
    data = (SPEC_DIR / "cli.json").read_bytes()
    doc = parser_cases_document(json.loads(data), data)
    one = lambda v: json.dumps(v, sort_keys=True)  # noqa: E731
    head = ",\n".join(f" {one(k)}: {one(doc[k])}" for k in ("about", "cli_json_sha256", "exit_codes"))
    langs = []
    for lang, kinds in doc["languages"].items():
        parts = [
            f"  {one(kind)}: [\n" + ",\n".join(f"   {one(c)}" for c in cases) + "\n  ]" for kind, cases in kinds.items()
        ]
        langs.append(f"  {one(lang)}: {{\n" + ",\n".join(parts) + "\n  }")
    return "{\n" + head + ',\n "languages": {\n' + ",\n".join(langs) + "\n }\n}\n"


if __name__ == "__main__":
    PARSER_CASES.parent.mkdir(exist_ok=True)
    PARSER_CASES.write_text(parser_cases_text())
    print(f"wrote {PARSER_CASES.relative_to(ROOT)}")
