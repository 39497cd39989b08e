"""Analysis: statistics, processed tables, figures, the paper's claims, reference data."""
