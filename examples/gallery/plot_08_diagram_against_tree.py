"""
A decision diagram against a tree
=================================

Parity of four bits needs a tree of 15 tests; a decision diagram shares its nodes and needs 7.
Both are the smallest that classify every row correctly.
"""

import itertools

import matplotlib.pyplot as plt
import numpy as np

from satdt import OptimalDiagramClassifier, OptimalTreeClassifier
from satdt.plot import plot_tree

X = np.array(list(itertools.product([0.0, 1.0], repeat=4)))
y = X.sum(axis=1).astype(int) % 2
tree = OptimalTreeClassifier(objective="size").fit(X, y)
diagram = OptimalDiagramClassifier(objective="size", widths=(1, 2, 2, 2)).fit(X, y)
print(f"tree: {tree.tree_.n_splits} tests; diagram: {diagram.diagram_.n_splits} tests")

fig, (left, right) = plt.subplots(1, 2, figsize=(12, 5))
plot_tree(tree.tree_, left, counts=False)
plot_tree(diagram.diagram_, right, counts=False)
left.set_title("the smallest tree")
right.set_title("the smallest diagram")
plt.show()
