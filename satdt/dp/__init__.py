"""The dynamic-programming side of satdt (NumPy + numba; importing it loads numba).

``solve_min_error`` finds minimum-error trees of bounded depth with Blossom; ``warmup``
compiles its kernels (or loads them from numba's on-disk cache).
"""

from .blossom import solve_min_error, warmup

__all__ = ["solve_min_error", "warmup"]
