"""The depth/size trade-off of consistent trees (a Pareto front), drawn or printed.

What it teaches: depth and size are two objectives, and a deeper tree may be smaller than the
shallowest one (on the default data, monk1, it is not: the front is one point). For each depth
from the minimum up, ``satdt.pareto_front`` finds the fewest nodes of a tree of at most that
depth that classifies every row correctly (the labelled-leaf counter of
encodings/node-counter.md under assumptions), and stops when a deeper tree cannot be smaller.
With matplotlib installed the front is saved as a PNG; otherwise it is printed as a table.

Run: ``python examples/depth_vs_size.py [DATA.csv] [OUT.png]`` (defaults:
``examples/data/monk1.csv`` and ``depth_vs_size.png`` in the current directory).
"""

from __future__ import annotations

import sys
from pathlib import Path

from satdt import pareto_front, read_csv

DEFAULT_DATA = Path(__file__).resolve().parent / "data" / "monk1.csv"


def main(argv: list[str]) -> None:
    path = Path(argv[0]) if argv else DEFAULT_DATA
    out = Path(argv[1]) if len(argv) > 1 else Path("depth_vs_size.png")
    data = read_csv(path)
    front = pareto_front(data.X, data.y, max_depth=None, feature_names=data.feature_names)

    print(f"{path.name}: {len(data.y)} rows")
    print(f"{'depth':>5} {'nodes':>5} {'leaves':>6}  proven")
    for depth, n_nodes, tree, proven in front:
        print(f"{depth:>5} {n_nodes:>5} {tree.n_leaves:>6}  {'yes' if proven else 'no'}")
    print(f"stopped: {front.stop_reason}")
    smallest = front[-1][2]
    print(f"\nthe smallest tree (depth {smallest.depth}, {smallest.n_nodes} nodes):")
    print(smallest.export_text())

    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("\nmatplotlib is not installed: the table above is the front")
        return
    fig, ax = plt.subplots(figsize=(5, 3.5))
    ax.step([p[0] for p in front], [p[1] for p in front], where="post", marker="o")
    ax.set_xlabel("maximum depth")
    ax.set_ylabel("fewest nodes of a consistent tree")
    ax.set_title(f"{path.name}: depth vs size")
    fig.tight_layout()
    fig.savefig(out)
    print(f"\nwrote {out}")


if __name__ == "__main__":
    main(sys.argv[1:])
