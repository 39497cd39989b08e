"""One raw sweep folder (data/raw/<sweep-id>/), read once: its manifest, its runs (every
runs*.jsonl, checked against the schema) and its harness sessions.

Every part of the analysis that reads a raw sweep goes through `Sweep`: the processing
(process.process_sweep and sweepinfo), the explorer, the dimensioning experiment and the
stability command's repeats, so each file of a sweep is read once (the parsers themselves
are serverbench.rawdata.records', shared with the harness; `python -m serverbench validate` checks
a committed sweep's SHA256SUMS, serverbench.rawdata.checksums)."""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from serverbench.rawdata import records, sweepfiles
from serverbench.rawdata.columns import Col


@dataclass
class Sweep:
    """A raw sweep folder. skip_bad: a corrupt or schema-violating line is set aside (in
    `skipped`, with file, line and reason) instead of raising records.RawLogError."""

    folder: Path
    skip_bad: bool = False
    quiet: bool = field(default=False, repr=False)  # no warning for skipped lines: the caller counts them

    def __post_init__(self) -> None:
        self.folder = Path(self.folder)

    @property
    def id(self) -> str:
        return str(self.manifest.get(Col.sweep_id) or self.folder.name)

    @cached_property
    def manifest(self) -> dict:
        return sweepfiles.read_manifest(self.folder)

    @cached_property
    def sessions(self) -> list[dict]:
        return sweepfiles.read_sessions(self.folder)

    @cached_property
    def _loaded(self) -> tuple[list[dict], list[tuple[str, int, str]]]:
        with warnings.catch_warnings():
            if self.quiet:
                warnings.simplefilter("ignore")
            return records.load_records([self.folder], skip_bad=self.skip_bad)

    @property
    def records(self) -> list[dict]:
        """Every valid line of every runs*.jsonl, in file order."""
        return self._loaded[0]

    @property
    def skipped(self) -> list[tuple[str, int, str]]:
        """(file, line, reason) of each line set aside (skip_bad only)."""
        return self._loaded[1]

    @cached_property
    def raw(self):
        """The records as one flat DataFrame (records.flatten), with attrs `skipped` and
        `cpu_models` as records.load_raw gives them."""
        df = records.flatten(self.records)
        df.attrs["skipped"] = self.skipped
        df.attrs["cpu_models"] = records.cpu_models(self.records)
        return df
