"""The raw data every layer shares: the records' schemas and their validation (records, quick), a
sweep folder's files (sweepfiles), long samples kept beside the raw log (sidecars) and a
committed sweep's SHA256SUMS (checksums)."""
