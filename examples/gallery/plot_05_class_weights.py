"""
Class weights on imbalanced data
================================

When one class is rare, the fewest errors may ignore it. ``class_weight="balanced"`` weighs each
class by the inverse of its frequency, as in scikit-learn: the optimal tree then finds the rare
class.
"""

import matplotlib.pyplot as plt
import numpy as np
from sklearn.metrics import recall_score

from satdt import OptimalTreeClassifier

rng = np.random.default_rng(0)
X = rng.normal(size=(600, 4))
y = ((X[:, 0] > 1.5) & (X[:, 1] > 0.0)).astype(int)  # about 3 % positives
noise = rng.random(len(y)) < 0.03
y[noise] = 1 - y[noise]  # labels flipped at random: the rare class hides in the noise

recalls = {}
for weight in (None, "balanced"):
    model = OptimalTreeClassifier(objective="error", max_depth=2, class_weight=weight).fit(X, y)
    recalls[str(weight)] = recall_score(y, model.predict(X))
    print(f"class_weight={weight!s:9}: recall of the rare class {recalls[str(weight)]:.2f}")

fig, ax = plt.subplots(figsize=(5, 3))
ax.bar(list(recalls), list(recalls.values()))
ax.set(ylabel="recall of the rare class", ylim=(0, 1))
plt.show()
