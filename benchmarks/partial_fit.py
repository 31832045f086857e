"""partial_fit against refitting after every batch: a stream of labelled rows, in batches.

The stream is a scikit-learn table of 500 rows and 6 classes (``make_blobs``, four numeric
columns, two decimals; ``--std`` sets how much the classes overlap), cut into batches of 25.
``partial_fit`` keeps the minimum-depth tree of the rows seen after each batch; the baseline
fits a fresh ``OptimalTreeClassifier`` (the SAT search, ``--refit-method`` for another) on all
rows seen after each batch. Both give the same proven depth after every batch (checked);
the table reports the total seconds, the SAT calls, and partial_fit's share of each.

    python benchmarks/partial_fit.py                      # 500 rows, 6 classes, batches of 25
    python benchmarks/partial_fit.py --objective size --batch 50
    python benchmarks/partial_fit.py --per-batch          # also a line per batch
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np

from satdt import OptimalTreeClassifier


def stream(rows: int, classes: int, std: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """The rows of the stream, in the order they arrive."""
    from sklearn.datasets import make_blobs

    X, y = make_blobs(
        n_samples=rows, centers=classes, n_features=4, cluster_std=std, random_state=seed
    )
    return np.round(X, 2), y


def value(model: OptimalTreeClassifier, objective: str) -> int:
    return model.tree_.depth if objective == "depth" else model.tree_.n_nodes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=500)
    parser.add_argument("--classes", type=int, default=6)
    parser.add_argument("--batch", type=int, default=25)
    parser.add_argument("--std", type=float, default=2.0, help="make_blobs' cluster_std")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--objective", choices=("depth", "size"), default="depth")
    parser.add_argument("--refit-method", default="sat", help="the method of the refits")
    parser.add_argument("--per-batch", action="store_true", help="a line per batch")
    args = parser.parse_args()
    X, y = stream(args.rows, args.classes, args.std, args.seed)
    ends = list(range(args.batch, args.rows + 1, args.batch))
    streaming = OptimalTreeClassifier(objective=args.objective)
    lines = []
    totals = {"stream s": 0.0, "refit s": 0.0, "stream calls": 0, "refit calls": 0}
    for end in ends:
        started = time.perf_counter()
        streaming.partial_fit(X[end - args.batch : end], y[end - args.batch : end])
        stream_s = time.perf_counter() - started
        started = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the kernels of method='auto' on a first run
            refit = OptimalTreeClassifier(objective=args.objective, method=args.refit_method)
            refit.fit(X[:end], y[:end])
        refit_s = time.perf_counter() - started
        if not (streaming.result_.proven_optimal and refit.result_.proven_optimal):
            raise SystemExit(f"after {end} rows a search stopped unproven")
        if value(streaming, args.objective) != value(refit, args.objective):
            raise SystemExit(f"after {end} rows: partial_fit and fit disagree")
        calls = (len(streaming.result_.trace), len(refit.result_.trace))
        totals["stream s"] += stream_s
        totals["refit s"] += refit_s
        totals["stream calls"] += calls[0]
        totals["refit calls"] += calls[1]
        lines.append(
            f"| {end} | {value(streaming, args.objective)} | {stream_s:.2f} | {calls[0]} "
            f"| {'yes' if streaming.result_.stats.tree_kept else 'no'} | {refit_s:.2f} "
            f"| {calls[1]} |"
        )
    if args.per_batch:
        print(
            f"| rows seen | {args.objective} | partial_fit s | SAT calls | tree kept "
            "| refit s | SAT calls |"
        )
        print("|---|---|---|---|---|---|---|")
        print("\n".join(lines), end="\n\n")
    what = (
        f"make_blobs {args.rows}x4, {args.classes} classes, std {args.std:g}, seed {args.seed}, "
        f"batches of {args.batch}"
    )
    print(
        f"| stream | {args.objective} after the last batch | partial_fit s | refit s "
        "| time ratio | partial_fit SAT calls | refit SAT calls | calls ratio |"
    )
    print("|---|---|---|---|---|---|---|---|")
    print(
        f"| {what} | {value(streaming, args.objective)} | {totals['stream s']:.2f} "
        f"| {totals['refit s']:.2f} | {totals['stream s'] / totals['refit s']:.3f} "
        f"| {totals['stream calls']} | {totals['refit calls']} "
        f"| {totals['stream calls'] / max(totals['refit calls'], 1):.3f} |"
    )


if __name__ == "__main__":
    main()
