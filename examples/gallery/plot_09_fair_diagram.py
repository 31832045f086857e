"""
Fairness in a decision diagram
==============================

The diagrams of Florio et al. can hold the rate of positive predictions of two groups within
a ratio of each other (demographic parity, constraint (19)). Here the groups are the two values
of a binary column; the MaxSAT route proves the optimum under the constraint.
"""

import matplotlib.pyplot as plt
import numpy as np

from satdt import OptimalDiagramClassifier

rng = np.random.default_rng(1)
n = 120
group = rng.integers(0, 2, size=n).astype(float)
score = rng.normal(size=n) + 0.8 * group
X = np.column_stack([group, score, rng.normal(size=n)])
y = (score + 0.3 * rng.normal(size=n) > 0.4).astype(int)
names = ["group", "score", "noise"]

rates = {}
for fairness in (None, {"column": "group", "ratio": 0.8}):
    model = OptimalDiagramClassifier(
        widths=(1, 2), method="maxsat", time_limit=30, fairness=fairness
    ).fit(X, y, feature_names=names)
    predicted = model.predict(X)
    low, high = predicted[group == 0].mean(), predicted[group == 1].mean()
    label = "with parity (0.8)" if fairness else "no constraint"
    rates[label] = (low, high)
    print(f"{label}: positive rate {low:.2f} vs {high:.2f}, accuracy {model.score(X, y):.2f}")

fig, ax = plt.subplots(figsize=(6, 3))
for offset, (low, high) in enumerate(rates.values()):
    ax.bar([offset - 0.15, offset + 0.15], [low, high], width=0.3, color=["C0", "C1"])
ax.set_xticks(range(len(rates)), list(rates))
ax.set(ylabel="positive rate (group 0, group 1)")
plt.show()
