"""The dynamic-programming side of satdt (NumPy + numba; the package itself loads neither).

:mod:`~satdt.dp.kernels` compiles the Numba kernels of every search off the caller's
critical path (and :func:`satdt.warmup` all of them at once).

Modules: :mod:`~satdt.dp._counts` holds the counting kernels every DP method shares (class
weights, single and pair counts, the exact depth-one and depth-two solvers, the similarity
lower bound) over named tuples of flat arrays; :mod:`~satdt.dp.blossom` orchestrates
Blossom's search, whose kernels live in :mod:`~satdt.dp._blossom_kernels`; :mod:`~satdt.dp.dl85`
is DL8.5 and CA-DL8.5 (a cached OR-AND search in Python over the shared kernels);
:mod:`~satdt.dp.boxes` proves minimum depth and size of consistent trees with NumPy alone,
so importing it does not load numba. Each search's ``solve_min_error`` lives in its module.
"""
