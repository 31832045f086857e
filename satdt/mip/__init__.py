"""Optimal decision diagrams by mixed-integer linear programming (Florio et al., AAAI 2023).

The solver (HiGHS through ``highspy``, or SCIP through ``pyscipopt``) is an optional extra,
imported only when a model is solved: ``pip install -e ".[diagrams]"``.
"""
