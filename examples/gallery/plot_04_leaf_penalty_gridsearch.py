"""
Tuning the leaf penalty with GridSearchCV
=========================================

``leaf_penalty`` trades training errors for leaves: a leaf is split only where that saves more
than ``leaf_penalty`` of the weight. satdt's estimator is a scikit-learn estimator, so the
penalty is tuned by cross-validation like any hyperparameter.
"""

import matplotlib.pyplot as plt
from sklearn.datasets import load_breast_cancer
from sklearn.model_selection import GridSearchCV

from satdt import OptimalTreeClassifier

X, y = load_breast_cancer(return_X_y=True)
penalties = [0.0, 0.002, 0.005, 0.01, 0.02, 0.05]
search = GridSearchCV(
    OptimalTreeClassifier(objective="error", max_depth=3, max_thresholds=8),
    {"leaf_penalty": penalties},
    cv=3,
).fit(X, y)
print("best leaf_penalty:", search.best_params_["leaf_penalty"])
print(f"cross-validated accuracy: {search.best_score_:.3f}")
print(f"leaves of the refitted tree: {search.best_estimator_.tree_.n_leaves}")

fig, ax = plt.subplots(figsize=(6, 3.5))
ax.plot(penalties, search.cv_results_["mean_test_score"], marker="o")
ax.set(xlabel="leaf_penalty", ylabel="mean accuracy (3 folds)", title="breast cancer, depth 3")
plt.show()
