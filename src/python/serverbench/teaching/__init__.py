"""Teaching labs (notebooks/teaching/, docs/teaching.md): each lab's logic and its
self-checks, so that the notebooks stay thin. lab1 (message cost), lab2 (processes are
memory), lab3 (throughput vs cores), lab4 (benchmarking pitfalls); common: loading,
parameter checks and the self-check machinery."""
