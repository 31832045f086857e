"""
Missing values
==============

With ``missing="split"`` (the default) a cell may be missing: every split on a column with
missing values also learns, optimally, the side its missing rows take. No imputation.
"""

import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import load_iris

from satdt import OptimalTreeClassifier
from satdt.plot import plot_tree

X, y = load_iris(return_X_y=True)
X = X.copy()
X[np.random.default_rng(0).random(X.shape) < 0.15] = np.nan  # 15 % of the cells go missing
model = OptimalTreeClassifier(objective="error", max_depth=2).fit(X, y)
print(model.tree_.export_text())
print(f"training errors: {model.result_.objective_value:g} of {len(y)} rows")

fig, ax = plt.subplots(figsize=(8, 4))
plot_tree(model.tree_, ax)
plt.show()
