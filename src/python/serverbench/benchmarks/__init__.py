"""One package per benchmark: everything the Python side knows of it (docs/extending.md).
serverbench.plugins finds and loads them; this package's own module holds nothing else."""
