"""
Encoding a CNF and solving it with an external solver
=====================================================

The perfect-tree formula of Avellaneda (formulas (1)-(6)) for ``tiny.csv`` at depth 2, written
as DIMACS CNF with every variable explained, solved by a SAT solver outside satdt (here
PySAT's Glucose, as any solver reading DIMACS would), and the answer decoded back into a tree.
"""

from pathlib import Path

from pysat.formula import CNF
from pysat.solvers import Glucose4

from satdt import read_csv
from satdt.sat.dimacs import decode_dimacs, encode_dimacs

# the shipped data, beside this folder (the site builder runs the example from its folder)
HERE = Path(__file__).parent if "__file__" in globals() else Path.cwd()
DATA = HERE.resolve().parent / "data" / "tiny.csv"
text = encode_dimacs(read_csv(DATA), depth=2)
print("\n".join(line for line in text.splitlines()[:12]))  # the header explains the variables

cnf = CNF(from_string=text)
with Glucose4(bootstrap_with=cnf.clauses) as solver:
    assert solver.solve()
    answer = "s SATISFIABLE\nv " + " ".join(map(str, solver.get_model())) + " 0\n"
tree = decode_dimacs(text, answer)
print(tree.export_text())
