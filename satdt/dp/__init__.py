"""The dynamic-programming side of satdt (NumPy + numba; importing it loads numba).

``solve_min_error`` finds minimum-error trees of bounded depth with Blossom; ``warmup``
compiles its kernels (or loads them from numba's on-disk cache).

Modules: :mod:`~satdt.dp._counts` holds the counting kernels every DP method shares (class
weights, single and pair counts, the exact depth-one and depth-two solvers, the similarity
lower bound) over named tuples of flat arrays; :mod:`~satdt.dp.blossom` orchestrates
Blossom's search, whose kernels live in :mod:`~satdt.dp._blossom_kernels`; :mod:`~satdt.dp.dl85`
is DL8.5 and CA-DL8.5 (a cached OR-AND search in Python over the shared kernels).
"""

from .blossom import solve_min_error, warmup

__all__ = ["solve_min_error", "warmup"]
