"""The sweep harness: fresh, pinned, capped native runs -> append-only raw logs."""
