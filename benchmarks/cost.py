"""Misclassification costs: satdt's ``cost_matrix`` beside pystreed's ``cost-sensitive`` task.

Both minimise ``sum_i C[y_i, prediction_i]`` over trees of depth <= d, on the CP4IM binary files
(``../shared/data/cp4im``, first column the class) and on scikit-learn's three-class iris and
wine and ten-class digits (each column binarised at ``--thresholds`` quantiles, the same 0/1
matrix for both; digits with ``C[a, b] = 1 + (a + 2b) mod 4``): satdt with
``OptimalTreeClassifier(objective="error", max_depth=d, cost_matrix=C)`` (``method="auto"``),
pystreed with ``STreeDCostSensitiveClassifier(max_depth=d)`` fitted with
``CostSpecifier(C, [zero feature costs])`` (its matrix is indexed [true][predicted] as satdt's:
checked on heart-cleveland, where the transposed matrix gives a different optimum). Each cost is
recomputed from the returned tree's predictions, never taken from the method; ``same`` says
whether the two costs are equal; ``(cap)`` marks a fit not proven optimal (satdt's
``result_.proven_optimal``, pystreed's ``fit_result.is_optimal()``). The two run one after the
other in the same process, one core; the time includes each library's own data preparation.
The target: the same optima, and satdt no slower on at least two thirds of the instances.

    python benchmarks/cost.py --files heart-cleveland,australian-credit,iris,wine --depths 3,4,5

Run from the repository root. Never collected by pytest; results never become assertions.
"""

from __future__ import annotations

import argparse
import time
import warnings
from pathlib import Path

import numpy as np

DATA = Path("../shared/data/cp4im")


# scikit-learn's bundled three-class tables, binarised the same way for both libraries
SKLEARN = {"iris": "load_iris", "wine": "load_wine", "digits": "load_digits"}


def read(name: str, thresholds: int) -> tuple[np.ndarray, np.ndarray]:
    """A CP4IM file, or a scikit-learn table as ``x[c] > t`` for ``thresholds`` quantiles t of
    each column (duplicate features dropped): the same binary matrix for both libraries."""
    if name in SKLEARN:
        import sklearn.datasets

        X, y = getattr(sklearn.datasets, SKLEARN[name])(return_X_y=True)
        quantiles = np.linspace(0, 1, thresholds + 2)[1:-1]
        columns = [X[:, c] > t for c in range(X.shape[1]) for t in np.quantile(X[:, c], quantiles)]
        B = np.unique(np.column_stack(columns).astype(np.int64), axis=1)
        return B[:, (B.min(axis=0) == 0) & (B.max(axis=0) == 1)], y.astype(np.int64)
    table = np.loadtxt(DATA / f"{name}.txt")
    return table[:, 1:].astype(np.int64), table[:, 0].astype(np.int64)


def matrix(text: str) -> np.ndarray:
    return np.array([[float(c) for c in row.split(",")] for row in text.split(";")])


def pattern(K: int) -> np.ndarray:
    """An asymmetric matrix for K classes besides the two given: C[a, b] = 1 + (a + 2b) mod 4."""
    a, b = np.indices((K, K))
    return np.where(a == b, 0.0, 1.0 + (a + 2 * b) % 4)


def run_satdt(X, y, C, depth, cap):
    from satdt import OptimalTreeClassifier

    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = OptimalTreeClassifier(
            objective="error", max_depth=depth, cost_matrix=C, time_limit=cap
        ).fit(X.astype(float), y)
    seconds = time.perf_counter() - start
    return float(C[y, model.predict(X.astype(float))].sum()), seconds, model.result_.proven_optimal


def run_pystreed(X, y, C, depth, cap):
    from pystreed import STreeDCostSensitiveClassifier
    from pystreed.data import CostSpecifier, FeatureCostSpecifier

    free = [FeatureCostSpecifier(0.0, 0.0, f"f{i}", i, i) for i in range(X.shape[1])]
    start = time.perf_counter()
    model = STreeDCostSensitiveClassifier(max_depth=depth, time_limit=cap)
    model.fit(X, y, CostSpecifier(C.tolist(), free))
    seconds = time.perf_counter() - start
    return float(C[y, model.predict(X)].sum()), seconds, bool(model.fit_result.is_optimal())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", default="heart-cleveland,australian-credit,hepatitis,vote")
    parser.add_argument("--depths", default="3,4,5")
    parser.add_argument("--cost", default="0,1;5,0", help="two classes: rows ';', costs ','")
    parser.add_argument("--cost3", default="0,1,4;2,0,1;1,3,0", help="three classes")
    parser.add_argument("--thresholds", type=int, default=8, help="quantiles (iris, wine)")
    parser.add_argument("--cap", type=float, default=60.0, help="seconds per fit")
    args = parser.parse_args()
    matrices = {2: matrix(args.cost), 3: matrix(args.cost3)}
    import satdt

    satdt.warmup()  # compile or load the kernels before anything is timed
    print(
        f"cost matrices {args.cost} and {args.cost3} ([true][predicted]), "
        f"cap {args.cap:g} s per fit\n"
    )
    print("| file | depth | satdt cost | pystreed cost | same | satdt s | pystreed s | ratio |")
    print("|---|---|---|---|---|---|---|---|")
    wins = total = 0
    for name in args.files.split(","):
        X, y = read(name, args.thresholds)
        K = len(np.unique(y))
        C = matrices[K] if K in matrices else pattern(K)
        for depth in map(int, args.depths.split(",")):
            ours, ours_s, ours_proven = run_satdt(X, y, C, depth, args.cap)
            theirs, theirs_s, theirs_proven = run_pystreed(X, y, C, depth, args.cap)
            total += 1
            wins += ours_s <= theirs_s
            mark = lambda proven: "" if proven else " (cap)"  # noqa: E731
            print(
                f"| {name} | {depth} | {ours:g} | {theirs:g} | {'yes' if ours == theirs else 'NO'} "
                f"| {ours_s:.2f}{mark(ours_proven)} | {theirs_s:.2f}{mark(theirs_proven)} "
                f"| {ours_s / max(theirs_s, 1e-9):.2f} |"
            )
    print(f"\nsatdt no slower on {wins} of {total} instances")


if __name__ == "__main__":
    main()
