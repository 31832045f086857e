"""
Depth against size: the Pareto front
====================================

For each depth from the minimum on, the fewest nodes of a tree that classifies every row of
``mouse.csv`` correctly: a deeper tree may be smaller. The front stops where no deeper tree can
be smaller.
"""

from pathlib import Path

import matplotlib.pyplot as plt

from satdt import pareto_front, read_csv
from satdt.plot import plot_pareto

# the shipped data, beside this folder (the site builder runs the example from its folder)
HERE = Path(__file__).parent if "__file__" in globals() else Path.cwd()
DATA = HERE.resolve().parent / "data" / "mouse.csv"
data = read_csv(DATA)
front = pareto_front(data.X, data.y, max_depth=6, feature_names=data.feature_names)
for depth, n_nodes, _tree, proven in front:
    print(f"depth <= {depth}: {n_nodes} nodes ({'proven' if proven else 'not proven'})")
print("stopped:", front.stop_reason)

plot_pareto(front)
plt.show()
