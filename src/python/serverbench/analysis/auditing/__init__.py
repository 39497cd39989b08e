"""Audits. The audit: does a conclusion come from the language or from the original code? Its
paper/fair ratios quirk by quirk, its figure and its report section (docs/spec.md, "The
paper variant"). crosscheck: a second, minimal implementation of the protocol, written from
its text alone, that recomputes every committed verdict (N-version checking)."""
