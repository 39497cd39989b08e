"""How the claims are judged on one sweep: one frozen value, built once and passed down
explicitly (the engine's Data.options), never a context variable or a shared dict."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from serverbench import catalog, protocol


@dataclass(frozen=True)
class Options:
    """How the claims are judged on one sweep: built once, passed down explicitly.

    chosen: every benchmark option's value (catalog.options(), e.g. spawn's spawn_metric),
    its default where none was given; a claim's Needs.metric may name one as "{name}".
    point_values: the values are a source's published ones, one per point: a comparison
    judges the ratio of the sides' medians as a point, not an interval of rounds.
    margin_exponent: the protocol's margin raised to it (1; the sensitivity columns' 0.5, 2).
    version: the protocol version to judge by; None: the one in force when the sweep started
    (a report re-judges older sweeps by the newest, to count how many agree today)."""

    chosen: tuple[tuple[str, str], ...] = ()
    point_values: bool = False
    margin_exponent: float = 1.0
    version: int | None = None

    @classmethod
    def of(cls, point_values: bool = False, margin_exponent: float = 1.0, **chosen: Any) -> Options:
        """Options with the benchmarks' options given by name (None: its default); an
        unknown option or a value not among its choices is an error naming them."""
        values = catalog.option_defaults()
        for name, value in chosen.items():
            if value is None:
                continue
            o = catalog.option(name)
            if value not in o.choices:
                raise ValueError(f"{name}={value!r}: choose one of {', '.join(o.choices)}")
            values[name] = value
        return cls(tuple(sorted(values.items())), bool(point_values), float(margin_exponent))

    @classmethod
    def coerce(cls, options: Options | Mapping[str, Any] | None) -> Options:
        """An Options as given, or built from a mapping of Options.of's arguments (None: the
        defaults). Anything else (a bare metric name, as the analysis took before it took
        Options) is a TypeError saying how to give it."""
        if isinstance(options, Options):
            return options
        if options is not None and not isinstance(options, Mapping):
            raise TypeError(
                f"options must be claims.Options or a mapping of option names, not {options!r}: "
                "e.g. Options.of(spawn_metric='spawn_call_s')"
            )
        return cls.of(**dict(options or {}))

    def value(self, name: str) -> str:
        return dict(self.chosen)[name]

    def scaled(self, exponent: float) -> Options:
        """The same options with the margin raised to `exponent` (a sensitivity column)."""
        return replace(self, margin_exponent=float(exponent))

    def region(self, cid: str, key: str = "yes") -> protocol.Region:
        """The claim's region `key` as these options judge against it."""
        return protocol.region(cid, key, self.margin_exponent, self.point_values)
