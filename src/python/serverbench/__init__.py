"""serverbench: reproduce Valkov, Chechina & Trinder (SAC 2018), Figures 3-5.

Modules, by role:
  paths, contract  where things live; the native command-line contract (spec/cli.json)
  records          the two JSON Schemas (spec/), validation, the raw-log loader
  harness          sweeps of fresh, pinned, capped native runs -> data/raw/
  stats, process   medians, intervals, ratios; raw -> data/processed/
  figures, claims  Figures 3-5; the paper's conclusions as checks with verdicts
  reference        the paper's own numbers (data/reference/)
"""

__version__ = "0.1.0"

# numpy's kernels that need AVX-512 (X86_V4 and later), named as numpy 2.4 dispatches them
AVX512_KERNELS = "X86_V4 AVX512_ICL AVX512_SPR"


def use_portable_numpy_kernels() -> None:
    """Make numpy, when imported after this call (here and in the notebook kernels this
    process starts, which inherit its environment), use its AVX2 kernels on a CPU that has
    AVX-512. numpy picks kernels by CPU, and some AVX-512 ones differ from the AVX2 ones in
    the last bits: on an Intel Xeon (6/207) they moved one pixel of a committed figure
    (paper/audit's Fig. 5 normalised). With this every x86-64 CPU with AVX2 writes the
    same bytes. A value the user set wins; features a CPU lacks are ignored."""
    import os

    os.environ.setdefault("NPY_DISABLE_CPU_FEATURES", AVX512_KERNELS)
