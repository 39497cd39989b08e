"""Teaching labs (notebooks/teaching/, docs/teaching.md): each lab's logic and its
self-checks, so that the notebooks stay thin. lab1 (message cost), lab2 (processes are
memory), lab3 (throughput vs cores), lab4 (benchmarking pitfalls; its optional part in
lab4_paper and lab4_tcp); common: loading and parameter checks; checks: the self-checks and
predictions; guide: the instructor guide's generated table (docs/instructor.md)."""
