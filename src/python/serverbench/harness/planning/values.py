"""Checked values of a profile: integers, positive numbers, byte sizes ("2GiB"), and
parameter lists against the contract's flag specs. Errors are ProfileError with the
setting's name."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping

from serverbench import contract
from serverbench.contract import Flag

GiB = 1024**3
MiB = 1024**2


class ProfileError(ValueError):
    """A profile or an override that cannot be run: a clear message for the user."""


def bool_value(v, what: str) -> bool:
    if isinstance(v, bool):
        return v
    if isinstance(v, str) and v.lower() in ("true", "false"):
        return v.lower() == "true"
    raise ProfileError(f"{what} must be true or false, not {v!r}")


def int_value(v, where, minimum=1):
    if isinstance(v, bool) or not isinstance(v, int):
        if isinstance(v, float) and v.is_integer():
            v = int(v)
        else:
            raise ProfileError(f"{where} must be an integer, got {v!r}")
    if v < minimum:
        raise ProfileError(f"{where} must be >= {minimum}, got {v}")
    return v


def positive_number(v, where):
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v <= 0:
        raise ProfileError(f"{where} must be a positive number, got {v!r}")
    return float(v)


_UNITS = {
    "": 1,
    "b": 1,
    "k": 1000,
    "kb": 1000,
    "kib": 1024,
    "m": 1000**2,
    "mb": 1000**2,
    "mib": MiB,
    "g": 1000**3,
    "gb": 1000**3,
    "gib": GiB,
}


def bytes_value(v, where, allow_none=False):
    if v is None or (isinstance(v, str) and v.lower() in ("none", "")):
        if allow_none:
            return None
        raise ProfileError(f"{where} is required")
    if isinstance(v, str):
        m = re.fullmatch(r"\s*([0-9]+(?:\.[0-9]+)?)\s*([A-Za-z]*)\s*", v)
        if not m or m.group(2).lower() not in _UNITS:
            raise ProfileError(f'{where}: cannot read {v!r} as a size (e.g. 2147483648, "2GiB", "512MiB")')
        v = int(float(m.group(1)) * _UNITS[m.group(2).lower()])
    return int_value(v, where, minimum=1)


def param_values(values, where, flag: Flag) -> list:
    """A profile's value(s) of a parameter as a list, each checked against its flag's type
    and range (spec/cli.json)."""
    if not isinstance(values, list):
        values = [values]
    if not values:
        raise ProfileError(f"{where} is an empty list")
    out = []
    for v in values:
        t = flag.type
        if t == "int":
            if isinstance(v, bool) or not isinstance(v, int):
                raise ProfileError(f"{where}: {v!r} is not an integer")
            least = 1 if flag.min is None else flag.min
            if v < least:
                raise ProfileError(f"{where}: {v} is not a positive size (minimum {least})")
            if flag.max is not None and v > flag.max:
                raise ProfileError(f"{where}: {v} is above the contract's maximum {flag.max}")
        elif t == "number":
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
                raise ProfileError(f"{where}: {v!r} is not a number")
            if flag.min is not None:  # a rate may be 0 (recovery.crashes_per_s); other numbers are positive
                if v < flag.min:
                    raise ProfileError(f"{where}: {v} is below the contract's minimum {flag.min}")
            elif v <= (flag.min_exclusive or 0):
                raise ProfileError(f"{where}: {v} must be positive")
            if flag.max is not None and v > flag.max:
                raise ProfileError(f"{where}: {v} is above the contract's maximum {flag.max}")
        elif t == "enum":
            if v not in flag.values:
                raise ProfileError(f"{where}: {v!r} is not one of {list(flag.values)}")
        out.append(v)
    return list(dict.fromkeys(out))


def runtime_settings(v, where: str) -> dict:
    """{lang: {setting: [values]}}, every name and value spec/cli.json's (a bare value = [value])."""
    if not isinstance(v, Mapping):
        raise ProfileError(f"{where} must be a table of language tables")
    out: dict = {}
    for lang, table in v.items():
        languages([lang], where)
        if not isinstance(table, Mapping):
            raise ProfileError(f"{where}.{lang} must be a table, e.g. {{ gc = [...] }}")
        out[lang] = {}
        for name, values in table.items():
            values = list(values) if isinstance(values, (list, tuple)) else [values]
            if not values:
                raise ProfileError(f"{where}.{lang}.{name} is empty")
            try:
                for value in values:
                    contract.check_settings(lang, {name: value})
            except ValueError as e:
                raise ProfileError(f"{where}: {e}") from None
            out[lang][name] = list(dict.fromkeys(values))
    return out


def languages(v, where) -> list[str]:
    """A non-empty list of spec/cli.json's languages (a comma-separated string too), without repeats."""
    if isinstance(v, str):
        v = [x for x in v.split(",") if x]
    if isinstance(v, tuple):
        v = list(v)
    if not isinstance(v, list) or not v:
        raise ProfileError(f"{where} must be a non-empty list of languages")
    for lang in v:
        if lang not in contract.languages():
            raise ProfileError(f"unknown language {lang!r}; known: {', '.join(contract.languages())}")
    return list(dict.fromkeys(v))
