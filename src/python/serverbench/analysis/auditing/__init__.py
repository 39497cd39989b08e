"""The audit: does a conclusion come from the language or from the original code? Its
paper/fair ratios quirk by quirk, its figure and its report section (docs/spec.md, "The
paper variant")."""
