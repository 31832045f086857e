"""The canary: a five-minute look at the promises a search change can break, beside the peers.

Run it before closing any change that touches a search, and put what it prints in the note:

1. **the first fit on a fresh install**: ``satdt fit`` cold (empty Numba cache) and warm,
   whole process, beside pystreed and pycontree (``cold_start.py`` on iris and anneal);
2. **the anytime error on the widest shared files at 10 s**: ``auto`` beside pytrees-rs's
   CA-DL8.5 (discrepancy and top-k), one core each (``anytime.py`` on ionosphere, vehicle and
   segment at depth 6);
3. **depth-5 proofs with a leaf penalty** beside pystreed's cost-complexity task
   (``penalty.py --parts prove`` on hypothyroid and segment, lambda 0.01 and 0.005).

Each part is one of the benchmarks of this folder, run with a small grid in its own process;
the tables are theirs. Targets (issue tracker): cold first fit <= 8 s; auto's error at 10 s
no higher than the best pytrees-rs variant; proofs no slower than pystreed on at least two
thirds of the instances either proves.

    python benchmarks/canary.py
    python benchmarks/canary.py --parts cold,anytime

Run from the repository root with the ``bench`` extra installed (peers that are missing are
skipped by each part, saying why). Never collected by pytest; results never become assertions.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
PARTS = {
    "cold": "cold_start.py --files iris,anneal --runs 3 --limits 5",
    "anytime": "anytime.py --files ionosphere,vehicle,segment --depths 6 --budgets 10 "
    "--methods auto,pytrees-discrepancy,pytrees-topk --jobs 2",
    "penalty": "penalty.py --parts prove --files hypothyroid,segment --depths 5 "
    "--penalties 0.005,0.01 --methods satdt,pystreed --cap 20",
}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--parts", default=",".join(PARTS), help="comma-separated subset")
    args = parser.parse_args()
    failed = []
    for part in args.parts.split(","):
        script, *options = PARTS[part].split()
        print(f"\n# {part}: python benchmarks/{script} {' '.join(options)}\n", flush=True)
        tic = time.perf_counter()
        done = subprocess.run([sys.executable, str(HERE / script), *options], cwd=HERE.parent)
        print(f"\n({part}: {time.perf_counter() - tic:.0f} s)", flush=True)
        if done.returncode != 0:
            failed.append(part)
    if failed:
        print(f"\nparts that failed: {', '.join(failed)}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
