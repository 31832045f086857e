"""The whole diagram formula as DIMACS with a legend (``satdt encode --diagram``)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from pysat.formula import IDPool

from ...core.errors import DataError
from ...data import Dataset
from ...models.diagram_checks import check_widths
from ...prepare.prepared import prepare
from ...prepare.rows import group_rows
from ...task.result import Recorder
from ..counter import SequentialCounter
from .formula import Clauses, DiagramFormula, Skeleton, _binary


# ---------------------------------------------------------------------------- CNF with a legend
@dataclass
class DiagramCNF:
    """The whole formula of a skeleton and distinct rows: named sections, variable counts, legend.

    ``legend[v]`` says what variable v means; ``sections`` hold (D1)-(D8) (all rows) and, with
    a node limit, (D9): the sequential counter of ``encodings/node-counter.md`` over the
    active-node variables, with the bound as a unit clause.
    """

    formula: DiagramFormula
    sections: list[tuple[str, Clauses]]
    var_counts: list[tuple[str, int]]
    legend: dict[int, str]

    @property
    def n_vars(self) -> int:
        return self.formula.pool.top

    @property
    def n_clauses(self) -> int:
        return sum(len(c) for _, c in self.sections)

    def clauses(self) -> Clauses:
        return [c for _, cs in self.sections for c in cs]


def _quote(value: Any) -> str:
    return '"' + str(value).replace('"', "'") + '"'


def diagram_cnf(
    B: np.ndarray,
    y: np.ndarray,
    n_classes: int,
    widths: Sequence[int],
    *,
    max_splits: int | None = None,
    feature_names: Sequence[str] | None = None,
    classes: Sequence[Any] | None = None,
    row_names: Sequence[str] | None = None,
) -> DiagramCNF:
    """The CNF of the consistent diagrams of a skeleton with at most ``max_splits`` internal nodes.

    ``B``, ``y``: distinct binary rows and their classes, all encoded. Variables are created
    in the order F, A, Lo, Hi, R, then V and G row by row (and the counter's H); clauses
    come in the order (D1)-(D5), then (D6), (D7), (D8) each over all rows, then (D9).
    """
    B, y = _binary(B, y, n_classes)
    if B.shape[1] == 0:
        raise DataError("every binary feature is constant: no node can test anything")
    pool = IDPool()
    f = DiagramFormula(pool, Skeleton(widths, n_classes), B.shape[1])
    sk, m = f.sk, f.m
    names = [f"x[{a}]" for a in range(m)] if feature_names is None else list(feature_names)
    labels = list(range(n_classes)) if classes is None else list(classes)
    rows = [f"row {i}" for i in range(len(B))] if row_names is None else list(row_names)
    sections = f.structure_sections()
    per_row: dict[str, Clauses] = {"(D6)": [], "(D7)": [], "(D8)": []}
    for i in range(len(B)):
        relax = {k: 0 for k in range(n_classes) if k != y[i]}
        for name, clauses in f.example_sections(i, B[i], relax):
            per_row[name].extend(clauses)
    sections += list(per_row.items())
    S = sk.n_nodes
    var_counts = [
        ("F", f.F.size),
        ("A", S - 1),
        ("Lo", len(f.arc_lo)),
        ("Hi", len(f.arc_hi)),
        ("R", sum(len(r) for r in f.R.values())),
        ("V", len(B) * (S - 1)),
        ("G", len(B) * S),
    ]
    legend = _legend(f, names, labels, rows)
    if max_splits is not None and max_splits - 1 < S - 1:
        if max_splits < 1:
            raise DataError(f"max_splits must be at least 1 (the root), got {max_splits}")
        counter = SequentialCounter(pool, f.A[1:], max_splits - 1)
        legend.update(_counter_legend(counter.H))
        bound = [[lit] for lit in counter.at_most(max_splits - 1)]
        sections.append(("(D9)", counter.clauses + bound))
        var_counts.append(("H", counter.n_vars))
    return DiagramCNF(f, sections, var_counts, legend)


def _legend(
    f: DiagramFormula, names: list[str], labels: list[Any], rows: list[str]
) -> dict[int, str]:
    """One comment per variable of (D1)-(D8): what it means for the diagram or the row."""
    sk, m, S = f.sk, f.m, f.sk.n_nodes
    legend: dict[int, str] = {}

    def where(s: int) -> str:
        return f"node {s}" if s >= 0 else f"class {_quote(labels[-1 - s])}"

    for u in range(S):
        for a in range(m):
            legend[int(f.F[u, a])] = f"F node={u} feature={a} : node {u} tests {_quote(names[a])}"
    for u in range(1, S):
        legend[int(f.A[u])] = f"A node={u} : node {u} is active"
    for side, arcs in (("Lo", f.arc_lo), ("Hi", f.arc_hi)):
        word = "low (feature false)" if side == "Lo" else "high (feature true)"
        for u, s, v in zip(f.arc_u, f.arc_s, arcs, strict=True):
            legend[int(v)] = (
                f"{side} node={u} to={s} : the {word} side of node {u} goes to {where(s)}"
            )
    for v, R in f.R.items():
        above = int(sk.first[sk.layer[v] - 1])
        for t, r in enumerate(R):
            p, side = divmod(t, 2)
            legend[int(r)] = (
                f"R node={v} arc={t} : node {v} is entered by an arc up to the "
                f"{('low', 'high')[side]} side of node {above + p}"
            )
    for i in range(len(rows)):
        V, G = f.example_vars(i)
        for u in range(1, S):
            legend[int(V[u])] = f"V example={i} node={u} : {rows[i]} visits node {u}"
        for u in range(S):
            legend[int(G[u])] = f"G example={i} node={u} : {rows[i]} goes high at node {u}"
    return legend


def _counter_legend(H: np.ndarray) -> dict[int, str]:
    """One comment per variable of the node counter (D9)."""
    legend: dict[int, str] = {}
    for v in range(H.shape[0]):
        for j in range(H.shape[1]):
            if H[v, j]:
                legend[int(H[v, j])] = (
                    f"H prefix={v} count={j} : at least {j} of the nodes 1..{v} are active"
                )
    return legend


def encode_diagram_dimacs(
    dataset: Dataset, widths: Sequence[int], *, max_splits: int | None = None
) -> str:
    """The DIMACS CNF whose models are the diagrams of skeleton ``widths`` consistent with the data.

    The data are binarised as for the trees (:func:`satdt.sat.dimacs.encode_dimacs`); every
    distinct row is encoded. ``max_splits`` also bounds the internal nodes, root included.
    The text: a header (data, skeleton, counts per variable kind and per formula), one
    comment per variable, ``p cnf V C`` and the clauses (see ``encodings/diagram.md``).

    Raises
    ------
    DataError
        No labels, contradictory rows, a bad skeleton or node limit, or no usable feature.
    """
    widths = check_widths(widths)
    if dataset.y is None:
        raise DataError("the data has no label column: encoding needs the class of every row")
    data = prepare(
        dataset,
        None,
        consistency=True,
        resolve=None,
        recorder=Recorder("size"),
        deadline=None,
        max_thresholds=None,
        max_memory_mb=1024,
    )
    view = data.binary()
    first = np.sort(group_rows(view.B)[0])
    lines = data.line_numbers[first]
    cnf = diagram_cnf(
        view.B[first],
        data.y[first],
        len(data.classes),
        widths,
        max_splits=max_splits,
        feature_names=view.names,
        classes=[str(c) for c in data.classes],
        row_names=[f"the row on line {line}" for line in lines],
    )
    f = cnf.formula
    source = "the data" if dataset.source is None else Path(dataset.source).name
    limit = "" if max_splits is None else f" with at most {max_splits} internal nodes"
    out = [
        f"c satdt encode --diagram: decision diagrams of skeleton {list(widths)}{limit}",
        f"c that classify every row of {source} correctly; formulas (D1)-(D9) and counts:",
        "c encodings/diagram.md",
        f"c data: {len(data.y)} rows ({len(first)} distinct), {f.m} binary features, "
        f"{len(data.classes)} classes",
        f"c skeleton: {f.sk.n_nodes} internal nodes in {len(widths)} layers; node 0 is the root",
        f"c variables: {cnf.n_vars} = " + " + ".join(f"{k} {n}" for k, n in cnf.var_counts),
        f"c clauses: {cnf.n_clauses} = " + " + ".join(f"{k} {len(c)}" for k, c in cnf.sections),
        "c",
        "c Nodes are numbered 0.. layer by layer. A node tests one binary feature; a row for",
        "c which it is false takes the low side, otherwise the high side. A side goes to a",
        "c node of the next layer or to the terminal of a class.",
        "c binary features:",
        *(f"c   feature {a}: {_quote(name)}" for a, name in enumerate(view.names)),
        "c classes:",
        *(f"c   class {k}: {_quote(label)}" for k, label in enumerate(data.classes)),
        "c",
        "c variables:",
        *(f"c {v} {text}" for v, text in sorted(cnf.legend.items())),
        f"p cnf {cnf.n_vars} {cnf.n_clauses}",
    ]
    out.extend(" ".join(map(str, clause)) + " 0" for clause in cnf.clauses())
    return "\n".join(out) + "\n"
