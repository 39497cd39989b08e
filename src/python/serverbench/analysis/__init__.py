"""Raw logs -> processed tables, statistics, the paper's claims, figures and the report."""
