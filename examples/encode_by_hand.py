"""The worked example of encodings/perfect-tree.md, built step by step with satdt's clause generators.

What it teaches: how a dataset becomes a CNF formula whose models are decision trees. It reads
``examples/data/tiny.csv``, binarises it as satdt does, creates the variables F (node tests
feature), C (leaf predicts class) and X (row goes right at a depth) with
``satdt.sat.perfect``, adds formulas (1)-(2) once and (3)-(6) for every row, solves the formula
with PySAT at depth 1 (unsatisfiable) and depth 2 (satisfiable), and decodes the model into a
tree. The formula is the one ``satdt encode examples/data/tiny.csv --depth 2`` writes.

Run: ``python examples/encode_by_hand.py``
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from pysat.formula import IDPool
from pysat.solvers import Solver

from satdt import Binarizer, Tree, read_csv
from satdt.prepare.rows import distinct_features
from satdt.sat.perfect import (
    decode,
    example_clauses,
    one_feature_clauses,
    perfect_leaf_of,
    some_feature_clauses,
    tree_vars,
)

DATA = Path(__file__).resolve().parent / "data" / "tiny.csv"


def perfect_tree(node_feature: np.ndarray, leaf_class: np.ndarray, depth: int, q: int = 1):
    """The perfect tree below node q as nested ``(feature, 0.5, left, right)`` tuples."""
    if q >= 2**depth:  # a leaf; one without a class is reached by no row
        return max(int(leaf_class[q - 2**depth]), 0)
    return (
        int(node_feature[q - 1]),
        0.5,
        perfect_tree(node_feature, leaf_class, depth, 2 * q),
        perfect_tree(node_feature, leaf_class, depth, 2 * q + 1),
    )


def main() -> None:
    # Step 1: the data as binary features (x[col] > t), as the estimator does it.
    data = read_csv(DATA)
    classes, y = np.unique(data.y, return_inverse=True)
    binarizer = Binarizer().fit(
        data.X, feature_names=data.feature_names, indicator=data.schema.indicator
    )
    B_all = binarizer.transform(data.X)
    keep = distinct_features(B_all)  # drop constant, duplicate and complementary features
    B = B_all[:, keep]
    names = [binarizer.names_[j] for j in keep]
    print("Step 1: binary features", names, "classes", classes.tolist())
    for line, row, label in zip(data.line_numbers, B, data.y, strict=True):
        print(f"  line {line}: {row.tolist()} -> {label}")

    for depth in (1, 2):
        print(f"\n=== depth {depth} ===")
        # Step 2: the variables F[q][a] and C[v][a] of a perfect tree of this depth.
        pool = IDPool()
        tv = tree_vars(pool, depth, n_features=B.shape[1], n_classes=len(classes))
        print(f"Step 2: {tv.F.size} F variables, {tv.C.size} C variables")

        # Step 3: formulas (1) and (2): every internal node tests exactly one feature.
        clauses = some_feature_clauses(tv) + one_feature_clauses(tv, "pairwise")
        print(
            f"Step 3: {len(clauses)} clauses (1)-(2), e.g. {clauses[0]} (node 1 tests some feature)"
        )

        # Step 4: for each row, its X variables and clauses (3)-(4) (it follows the tests)
        # and (5)-(6) (its leaf predicts its class).
        for i, (row, label) in enumerate(zip(B, y, strict=True)):
            clauses += example_clauses(tv, i, row, int(label))
        print(f"Step 4: {pool.top} variables, {len(clauses)} clauses in all")

        # Step 5: solve.
        with Solver(name="glucose4", bootstrap_with=clauses) as solver:
            if not solver.solve():
                print("Step 5: UNSAT: no tree of this depth classifies every row correctly")
                continue
            model = solver.get_model()
        print("Step 5: SAT; true variables:")
        for v in model:
            if v > 0:
                print(f"  {v:>3} = {pool.obj(v)}")

        # Step 6: decode: the feature of each node, the class of each leaf.
        node_feature, leaf_class = decode(tv, model)
        print(
            "Step 6: node tests",
            [names[a] for a in node_feature],
            "leaf classes",
            leaf_class.tolist(),
        )
        reached = perfect_leaf_of(node_feature, depth, B)
        print("  leaf reached by each row:", reached.tolist())

        tree = Tree.from_nested(
            perfect_tree(node_feature, leaf_class, depth), classes=np.arange(len(classes))
        )
        tree = tree.simplify(B)  # drop what no row reaches, merge same-class siblings
        tree = tree.map_features(
            binarizer.column_[keep],
            binarizer.threshold_[keep],
            data.feature_names,
            data.schema.indicator,
        )
        tree.classes = classes
        print("Step 7: the tree, in the data's own terms:")
        print(tree.export_text())
        print("  predicts every row correctly:", bool((tree.predict(data.X) == data.y).all()))


if __name__ == "__main__":
    main()
