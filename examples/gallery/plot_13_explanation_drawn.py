"""
An explanation drawn
====================

Why does the optimal depth-3 tree of iris predict class 1 for row 70? Its path tests three
columns; the smallest abductive explanation (AXp) says which of those tests the prediction
needs, and each contrastive explanation (CXp) which columns, changed, give another class.
The drawing marks them on the tree: the AXp's tests in red, the row's path and leaf in blue;
for a CXp the tests to change in red and the path the change follows in purple.
"""

import matplotlib.pyplot as plt
from sklearn.datasets import load_iris

import satdt
from satdt.plot import plot_explanation

iris = load_iris()
names = ["sepal length", "sepal width", "petal length", "petal width"]
model = satdt.OptimalTreeClassifier(objective="error", max_depth=3)
model.fit(iris.data, iris.target, feature_names=names)
(why,) = satdt.explain(model, iris.data, rows=[70])
print(why)

figure, (left, right) = plt.subplots(2, 1, figsize=(11, 9))
plot_explanation(model, why, left, show="smallest_axp")
left.set_title(f"smallest AXp: {' and '.join(map(str, why.smallest_axp))}")
plot_explanation(model, why, right, show="cxp")
right.set_title(f"a CXp: {why.cxp}")
plt.show()
