"""Quickstart: fit a minimum-depth decision tree, print it, predict, export it to Graphviz.

What it teaches: the one estimator of satdt, ``OptimalTreeClassifier``, used like any
scikit-learn classifier. With the default ``objective="depth"`` it finds the shallowest tree
that classifies every training row correctly, and proves that no shallower one exists: by SAT
and, on numeric columns with many thresholds, by ConTree beside it (``result_.stats`` says
which search settled what).

Run: ``python examples/quickstart.py`` (writes ``iris_tree.dot`` in the current directory;
render it with ``dot -Tpng iris_tree.dot -o iris_tree.png``).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from satdt import OptimalTreeClassifier, read_csv

DATA = Path(__file__).resolve().parent / "data" / "iris.csv"


def main() -> None:
    data = read_csv(DATA)  # the last column is the label
    model = OptimalTreeClassifier(objective="depth")
    model.fit(data.X, data.y, feature_names=data.feature_names)

    result = model.result_
    print(f"minimum depth: {result.objective_value:g} (proven: {result.proven_optimal})")
    print(f"nodes: {model.tree_.n_nodes}, leaves: {model.tree_.n_leaves}")
    stats = result.stats  # HybridStats: SAT and ConTree in turns
    print(f"tree found by: {stats.found_by}, lower bound proven by: {stats.lower_bound_by}")
    if stats.sat is not None:
        print(f"rows the SAT loop needed: {stats.sat.examples_used} of {len(data.y)}")
    print()
    print(model.tree_.export_text())
    print()

    rows = data.X[[0, 60, 120]]
    print("predictions for rows 0, 60, 120:", model.predict(rows).tolist())
    print("their labels:                     ", data.y[[0, 60, 120]].tolist())
    print(f"training accuracy: {np.mean(model.predict(data.X) == data.y):.3f}")

    out = Path("iris_tree.dot")
    out.write_text(model.tree_.to_dot() + "\n")
    print(f"wrote {out} (Graphviz DOT)")


if __name__ == "__main__":
    main()
