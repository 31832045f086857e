"""
Minimum error and the anytime curve, against CART
=================================================

The tree of depth 3 with the fewest training errors on scikit-learn's breast-cancer table, with every
improvement the search made over time, beside CART's tree of the same depth.
"""

import matplotlib.pyplot as plt
from sklearn.datasets import load_breast_cancer
from sklearn.tree import DecisionTreeClassifier

from satdt import OptimalTreeClassifier

X, y = load_breast_cancer(return_X_y=True)
model = OptimalTreeClassifier(objective="error", max_depth=3, time_limit=60).fit(X, y)
cart = DecisionTreeClassifier(max_depth=3, random_state=0).fit(X, y)

optimal_errors = model.result_.objective_value
cart_errors = int((cart.predict(X) != y).sum())
print(
    f"satdt: {optimal_errors:g} errors (proven: {model.result_.proven_optimal}); CART: {cart_errors}"
)

times = [max(entry.elapsed, 1e-3) for entry in model.result_.history]
values = [entry.value for entry in model.result_.history]
fig, ax = plt.subplots(figsize=(6, 3.5))
ax.step(times, values, where="post", label="satdt incumbents")
ax.axhline(cart_errors, color="grey", linestyle="--", label="CART, depth 3")
ax.set(xscale="log", xlabel="seconds", ylabel="training errors", title="breast cancer, depth 3")
ax.legend()
plt.show()
