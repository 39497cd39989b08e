"""Reading a sweep: raw logs into processed tables (data/processed/<sweep-id>/), what a sweep
says about itself, the side tables, the registry the benchmark packages plug their tables,
figures, claims and sections into, the paper's reference values, and schema-valid synthetic
raw records for tests and for judging published numbers."""
