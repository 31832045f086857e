"""How few rows the counterexample-guided loop needs, on monk2 (169 rows).

What it teaches: encoding every row (Algorithm 3's alternative) makes a large formula; the
loop of ``satdt.sat.loop`` adds a row's clauses only when the current tree misclassifies it,
and proves the minimum depth with a fraction of the rows. For each depth up to the minimum,
the script prints side by side: the full formula (all rows, formulas (1)-(6) as
``satdt encode`` writes them) with its size, answer and solving time, and the loop (solver
glucose 4, one counterexample per wrong leaf) with the rows it used, its largest formula and
its time. See encodings/incremental-loop.md.

Run: ``python examples/counterexamples.py``
"""

from __future__ import annotations

import time
from pathlib import Path

from pysat.formula import CNF
from pysat.solvers import Solver

from satdt import OptimalTreeClassifier, read_csv
from satdt.sat.dimacs import encode_dimacs

DATA = Path(__file__).resolve().parent / "data" / "monk2.csv"
SOLVER = "glucose4"


def full_formula(data, depth: int) -> tuple[int, int, str, float]:
    """Variables, clauses, answer and seconds (encoding + solving) for all rows at once."""
    started = time.perf_counter()
    cnf = CNF(from_string=encode_dimacs(data, depth))
    with Solver(name=SOLVER, bootstrap_with=cnf.clauses) as solver:
        answer = "SAT" if solver.solve() else "UNSAT"
    return cnf.nv, len(cnf.clauses), answer, time.perf_counter() - started


def main() -> None:
    data = read_csv(DATA)
    started = time.perf_counter()
    model = OptimalTreeClassifier(
        method="sat", solver=SOLVER, counterexamples="per_leaf"
    ).fit_dataset(data)
    loop_time = time.perf_counter() - started
    result = model.result_
    depth = int(result.objective_value)
    print(
        f"monk2: {len(data.y)} rows; minimum depth {depth}, proven by the loop in {loop_time:.2f} s"
    )
    print(f"rows the loop used: {result.stats.examples_used} of {result.stats.rows} distinct rows")
    print(f"SAT calls: {len(result.trace)}")
    settled = result.stats.settled_without_sat_call
    print()
    header = (
        f"{'depth':>5} | {'full: rows':>10} {'variables':>9} {'clauses':>9} {'answer':>6} {'time s':>7}"
        f" | {'loop: rows':>10} {'variables':>9} {'clauses':>9} {'answer':>6} {'time s':>7}"
    )
    print(header)
    print("-" * len(header))
    for k in range(1, depth + 1):
        n_vars, n_clauses, answer, seconds = full_formula(data, k)
        calls = [call for call in result.trace if call.depth == k]
        if calls:
            last = calls[-1]
            loop = (
                f"{last.n_examples:>10} {last.n_vars:>9} {last.n_clauses:>9} {last.status:>6} "
                f"{sum(call.time for call in calls):>7.3f}"
            )
        elif k in settled:
            loop = f"{'settled by the repaired heuristic tree (no SAT call)':>45}"
        else:
            loop = f"{'not tried (below the lower bound)':>45}"
        full = f"{result.stats.rows:>10} {n_vars:>9} {n_clauses:>9} {answer:>6} {seconds:>7.3f}"
        print(f"{k:>5} | {full} | {loop}")
    print()
    print("The loop's time is solver time only; the full formula's includes writing it.")


if __name__ == "__main__":
    main()
