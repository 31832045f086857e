"""The diagram of least objective (18) within a skeleton, by MaxSAT (PySAT's RC2), anytime.

Hard clauses (D1)-(D8) of ``encodings/diagram.md`` with every row's cost as soft units; the
extensions of Florio et al. are hard constraints on top: parsimony (a node bound: the
sequential counter (D9)), stability (20) (a minimum weight through every active node: a
sequential weight counter per node over exact visit variables) and fairness (19) (two rate
counters per direction over exact terminal variables). Anytime: every model RC2's SAT oracle
returns satisfies the hard clauses, so it is a diagram; each one better than the incumbent is
reported (``on_improve``), and the incumbent starts as the best of the ``starts`` given (the
Step-1 heuristic, the best tree of the skeleton) that meets the constraints.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
from pysat.examples.rc2 import RC2Stratified
from pysat.formula import WCNF, IDPool

from ...core.errors import DataError, InfeasibleError, TimeUp, TooLargeForSat
from ...models.diagram import Diagram
from ...models.diagram_checks import (
    ErrorObjective,
    Extensions,
    Fairness,
    check_widths,
    violation,
)
from ...models.diagram_checks import objective as objective_18
from ...prepare.rows import group_rows
from ..counter import SequentialCounter, weighted_counter
from .formula import (
    Clauses,
    DiagramFormula,
    DiagramResult,
    Names,
    Skeleton,
    _binary,
)

DEFAULT_MAXSAT_SOLVER = "glucose3"
#: Seconds before the deadline at which RC2 is interrupted.
STOP_RESERVE = 0.25
#: Largest integer sum a weight counter of (20) or (19) may count to, per counter.
MAX_COUNT = 20_000


@dataclass(frozen=True)
class MaxSatRun:
    """How :func:`minimum_error_diagram` runs: its starts, its reports, its clock, its oracle.

    Parameters
    ----------
    starts : sequence of Diagram
        Diagrams over the binary features of ``B``: the best one meeting the constraints is
        the first incumbent (else the majority terminal, when it meets them).
    on_improve : callable, optional
        ``on_improve(diagram, objective)`` for every better diagram, starts included.
    deadline : float, optional
        A ``time.perf_counter()`` value (None: no limit). Past it RC2 is interrupted and the
        best diagram known is returned with ``proven=False`` and RC2's cost so far as lower
        bound.
    solver : str
        The SAT oracle of RC2 (a PySAT solver name).
    """

    starts: Sequence[Diagram] = ()
    on_improve: Callable[[Diagram, float], None] | None = None
    deadline: float | None = None
    solver: str = DEFAULT_MAXSAT_SOLVER


_DEFAULT_OBJECTIVE = ErrorObjective()
_NO_EXTENSIONS = Extensions()
_DEFAULT_RUN = MaxSatRun()
_NO_NAMES = Names()


def _fraction(value: float) -> Fraction:
    """A float as the fraction its shortest decimal form states (0.1 -> 1/10)."""
    return Fraction(repr(float(value)))


def integer_weights(
    class_weight: np.ndarray, alpha: float, n_skeleton: int
) -> tuple[list[dict[int, int]], int, int]:
    """Objective (18) times a common denominator D, as integers.

    Row i reaching the terminal of class k costs ``(W_i - w_ik) / W`` (``W_i`` its weight,
    ``w_ik`` that of its class-k copies, ``W`` the total); an active non-root node costs
    ``alpha / (S - 1)``. Every weight and alpha are read as exact fractions of their
    decimal forms and D is the least common multiple of the denominators of all these costs,
    so ``D * objective(18)`` is an integer sum. Returns, per row, ``{cost: classes}`` as
    ``{integer cost: bitmask of classes}``, the integer node cost, and D.
    """
    W = [[_fraction(w) for w in row] for row in class_weight]
    total = sum(sum(row) for row in W)
    costs = [[(sum(row) - w) / total for w in row] for row in W]
    node = _fraction(alpha) / (n_skeleton - 1) if n_skeleton > 1 else Fraction(0)
    D = 1
    for value in [node, *(c for row in costs for c in row)]:
        D = D * value.denominator // math.gcd(D, value.denominator)
    groups = []
    for row in costs:
        mine: dict[int, int] = {}
        for k, c in enumerate(row):
            if c > 0:
                key = int(c * D)
                mine[key] = mine.get(key, 0) | (1 << k)
        groups.append(mine)
    return groups, int(node * D), D


def estimated_clauses(n_rows: int, widths: Sequence[int], n_features: int, n_classes: int) -> int:
    """About how many clauses the formula of these sizes has: (D6) dominates (rows x nodes x
    features), then (D7)-(D8) (rows x arcs)."""
    S = sum(widths)
    arcs = sum(
        w * ((widths[l + 1] if l + 1 < len(widths) else 0) + n_classes)
        for l, w in enumerate(widths)
    )
    return n_rows * (S * n_features + 4 * arcs) + S * n_features


def _integers(values: Sequence[float], *more: float) -> tuple[list[int], list[int]]:
    """Values (and ``more``) times the least common denominator of their decimal forms."""
    fractions = [_fraction(v) for v in values]
    extra = [_fraction(v) for v in more]
    D = 1
    for f in fractions + extra:
        D = D * f.denominator // math.gcd(D, f.denominator)
    return [int(f * D) for f in fractions], [int(f * D) for f in extra]


def _check_count(cap: int, what: str) -> None:
    if cap > MAX_COUNT:
        raise TooLargeForSat(
            f"{what} needs a counter up to {cap} (integer weights), more than the SAT routes "
            f"encode ({MAX_COUNT}); use method='milp' for it"
        )


def flow_clauses(
    formula: DiagramFormula, V: np.ndarray, row_weight: np.ndarray, min_flow: float
) -> Clauses:
    """Stability (20): every active non-root node is visited by a weight of at least ``min_flow``.

    ``A[u] -> sum_i w_i V[i][u] >= min_flow`` with a sequential weight counter per node (weights
    and bound scaled to integers); ``V`` (rows x nodes) must be exact (:meth:`path_clauses`).
    """
    weights, (bound,) = _integers(list(row_weight), min_flow)
    if sum(weights) < bound:
        raise InfeasibleError(
            f"min_flow={min_flow:g} is above the total weight {float(sum(row_weight)):g}: "
            "not even the root carries it"
        )
    _check_count(bound, f"min_flow={min_flow:g}")
    clauses: Clauses = []
    keep = [i for i, w in enumerate(weights) if w > 0]
    for u in range(1, formula.sk.n_nodes):
        out, counter = weighted_counter(
            formula.pool,
            ("flow", u),
            [int(V[i, u]) for i in keep],
            [weights[i] for i in keep],
            bound,
            up=False,
        )
        clauses += counter
        clauses.append([-int(formula.A[u]), out[bound]] if out[bound] else [-int(formula.A[u])])
    return clauses


def fairness_clauses(
    pool: IDPool,
    T: np.ndarray,
    class_weight: np.ndarray,
    g1: np.ndarray,
    g2: np.ndarray,
    rule: Fairness,
) -> Clauses:
    """Fairness (19) on rates (as :class:`~satdt.models.diagram_checks.Fairness` defines them), exactly.

    Per group a weighted count ``k`` of rows predicted positive (parity), of rows of another
    class predicted positive (false positives) or of positive rows predicted otherwise (false
    negatives), over the exact terminal variables ``T`` (rows x classes); ``rate = k / base``.
    ``k1 / b1 >= ratio * k2 / b2`` becomes, for every j: ``k2 >= j -> k1 >= ceil(ratio b1 j /
    b2)``, with an upward counter on k2 and a downward one on k1 (and the reverse direction
    likewise when ``both_ways``).
    """
    P = rule.positive
    total = class_weight.sum(axis=1)
    if rule.kind == "parity":
        lits, weight = T[:, P], total
    elif rule.kind == "false_positive":
        lits, weight = T[:, P], total - class_weight[:, P]
    else:
        lits, weight = -T[:, P], class_weight[:, P]
    scaled, _ = _integers(list(weight))
    scaled = np.asarray(scaled, dtype=np.int64)
    ratio = _fraction(rule.ratio)
    clauses: Clauses = []
    directions = [(g1, g2), (g2, g1)] if rule.both_ways else [(g1, g2)]
    for n, (a, b) in enumerate(directions):
        base_a, base_b = int(scaled[a].sum()), int(scaled[b].sum())
        if base_b == 0:
            continue  # rate(b) = 0: nothing to keep up with
        count_b = [i for i in np.flatnonzero(b) if scaled[i] > 0]
        if base_a == 0:  # rate(a) = 0, so rate(b) must be 0
            clauses += [[-int(lits[i])] for i in count_b]
            continue
        _check_count(base_a + base_b, f"fairness ({rule.kind})")
        up, cb = weighted_counter(
            pool,
            ("fair", n, "b"),
            [int(lits[i]) for i in count_b],
            [int(scaled[i]) for i in count_b],
            base_b,
            True,
        )
        count_a = [i for i in np.flatnonzero(a) if scaled[i] > 0]
        down, ca = weighted_counter(
            pool,
            ("fair", n, "a"),
            [int(lits[i]) for i in count_a],
            [int(scaled[i]) for i in count_a],
            base_a,
            False,
        )
        clauses += cb + ca
        for j in range(1, base_b + 1):
            need = math.ceil(ratio * base_a * j / base_b)
            if need <= 0:
                continue
            if need > base_a:
                clauses.append([-up[j]])
            else:
                clauses.append([-up[j], down[need]])
    return clauses


def maxsat_formula(
    B: np.ndarray,
    class_weight: np.ndarray,
    widths: Sequence[int],
    alpha: float,
    *,
    max_splits: int | None = None,
    min_flow: float | None = None,
    fairness: Fairness | None = None,
    deadline: float | None = None,
) -> tuple[WCNF, DiagramFormula, int]:
    """The weighted formula of objective (18): hard (D1)-(D8) and the extensions, soft costs; D.

    Each distinct row i gets one variable ``E[i][g]`` per distinct positive cost g of its
    terminals (one for a row with a single label); (D8) allows the terminals of that cost
    when ``E[i][g]`` holds, and the soft unit ``NOT E[i][g]`` weighs the cost. An active
    non-root node weighs ``alpha / (S - 1)`` (soft ``NOT A[u]``). Both scaled by D, see
    :func:`integer_weights`. ``fairness`` groups are masks over the rows of ``B``. Raises
    :class:`TimeUp` past ``deadline``.
    """
    n_classes = class_weight.shape[1]
    pool = IDPool()
    formula = DiagramFormula(pool, Skeleton(widths, n_classes), B.shape[1])
    S = formula.sk.n_nodes
    groups, node_cost, D = integer_weights(class_weight, alpha, S)
    exact = min_flow is not None or fairness is not None
    wcnf = WCNF()
    hard = wcnf.hard  # filled directly: WCNF.extend appends clause by clause (measured 5x slower)
    for _, clauses in formula.structure_sections():
        hard.extend(clauses)
    if exact:
        hard.extend(formula.single_successor_clauses())
    Vs, Ts = [], []
    for i in range(len(B)):
        if deadline is not None and time.perf_counter() > deadline:
            raise TimeUp("building the MaxSAT formula")
        relax: dict[int, int] = {}
        soft = []
        for g, (cost, mask) in enumerate(sorted(groups[i].items())):
            E = pool.id(("E", i, g))
            soft.append(([-E], cost))
            relax.update({k: E for k in range(n_classes) if mask >> k & 1})
        V, G = formula.example_vars(i)
        for _, clauses in formula.example_sections(i, B[i], relax):
            hard.extend(clauses)
        if exact:
            hard.extend(formula.path_clauses(i, V, G))
            Vs.append(V)
        if fairness is not None:
            T, clauses = formula.terminal_var_clauses(i, V, G)
            hard.extend(clauses)
            Ts.append(T)
        for clause, weight in soft:
            wcnf.append(clause, weight=weight)
    if node_cost:
        for a in formula.A[1:]:
            wcnf.append([-int(a)], weight=node_cost)
    hard.extend(_extension_clauses(formula, class_weight, Vs, Ts, max_splits, min_flow, fairness))
    wcnf.nv = max(wcnf.nv, pool.top)
    return wcnf, formula, D


def _extension_clauses(
    formula: DiagramFormula,
    class_weight: np.ndarray,
    Vs: list,
    Ts: list,
    max_splits: int | None,
    min_flow: float | None,
    fairness: Fairness | None,
) -> Clauses:
    """The hard clauses of parsimony (D9), stability (20) and fairness (19), over the rows'
    exact visit variables ``Vs`` and terminal variables ``Ts``."""
    S = formula.sk.n_nodes
    clauses: Clauses = []
    if max_splits is not None and max_splits - 1 < S - 1:
        if max_splits < 1:
            raise DataError(f"max_splits must be at least 1 (the root), got {max_splits}")
        counter = SequentialCounter(formula.pool, formula.A[1:], max_splits - 1)
        clauses += counter.clauses + [[lit] for lit in counter.at_most(max_splits - 1)]
    if min_flow is not None:
        clauses += flow_clauses(formula, np.array(Vs), class_weight.sum(axis=1), min_flow)
    if fairness is not None:
        g1, g2 = np.asarray(fairness.group1, bool), np.asarray(fairness.group2, bool)
        clauses += fairness_clauses(formula.pool, np.array(Ts), class_weight, g1, g2, fairness)
    return clauses


def minimum_error_diagram(
    B: np.ndarray,
    y: np.ndarray,
    n_classes: int,
    widths: Sequence[int],
    objective: ErrorObjective = _DEFAULT_OBJECTIVE,
    extensions: Extensions = _NO_EXTENSIONS,
    run: MaxSatRun = _DEFAULT_RUN,
    names: Names = _NO_NAMES,
) -> DiagramResult:
    """The diagram of least objective (18) within a skeleton, by MaxSAT (PySAT's RC2), anytime.

    Parameters
    ----------
    B, y, n_classes, widths
        As for :func:`~satdt.sat.diagram.size.minimum_size_diagram`.
    objective
        Objective (18): ``alpha >= 0``, the weight of the node share, and the non-negative row
        weights (default 1); identical rows are merged, their weights added per class.
    extensions
        The paper's extensions (parsimony, stability (20), fairness (19)), as hard constraints
        (see the module docstring); ``fairness`` groups are masks over the rows of ``B``.
    run
        The starts, the incumbent hook, the deadline and RC2's oracle (:class:`MaxSatRun`).
    names
        Labels and feature names stored in the diagram (default: class indices, no names).

    Returns
    -------
    DiagramResult
        ``objective`` is objective (18) recomputed on the rows (checked against RC2's cost).

    Raises
    ------
    InfeasibleError
        No diagram of the skeleton meets the constraints (proven), or none was found in time.
    """
    began = time.perf_counter()
    B, y = _binary(B, y, n_classes)
    widths = check_widths(widths)
    alpha, sample_weight = objective.alpha, objective.sample_weight
    if not alpha >= 0:
        raise DataError(f"alpha must be a number >= 0, got {alpha!r}")
    weight = np.ones(len(y)) if sample_weight is None else np.asarray(sample_weight, float)
    if weight.shape != y.shape or (weight < 0).any() or weight.sum() <= 0:
        raise DataError("sample_weight must hold one non-negative weight per row, not all zero")
    fairness = extensions.fairness
    Bd, class_weight, merged_fairness = _merged_rows(B, y, weight, n_classes, fairness)

    def value_of(diagram: Diagram) -> float | None:
        """Objective (18) on the rows, None when the diagram breaks an extension."""
        if violation(diagram, B, y, weight, **extensions.as_dict()) is not None:
            return None
        return objective_18(diagram, B, y, alpha, widths, weight)

    incumbent = _Incumbent(value_of, run.on_improve)
    majority = int(np.argmax(class_weight.sum(axis=0)))
    incumbent.offer(
        Diagram.single_terminal(majority, n_features=B.shape[1], classes=np.arange(n_classes))
    )
    for candidate in run.starts:
        incumbent.offer(candidate)
    lower, proven, calls = 0.0, False, 0
    try:
        wcnf, formula, D = maxsat_formula(
            Bd,
            class_weight,
            widths,
            alpha,
            max_splits=extensions.max_splits,
            min_flow=extensions.min_flow,
            fairness=merged_fairness,
            deadline=run.deadline,
        )
    except TimeUp:
        wcnf = None
    if wcnf is not None:
        lower, proven, calls = _run_rc2(wcnf, formula, D, run.solver, run.deadline, incumbent)
    best, best_value = incumbent.diagram, incumbent.value
    if best is None:
        why = "none exists (proven)" if proven else "none was found before the time limit"
        raise InfeasibleError(
            f"no diagram of the skeleton {widths} meets the constraints "
            f"({', '.join(extensions.used())}): {why}"
        )
    lower = min(lower, best_value)
    return DiagramResult(
        best.replace(classes=names.labels(n_classes), feature_names=names.feature_names),
        best_value,
        lower,
        proven,
        calls,
        time.perf_counter() - began,
        widths,
        len(Bd),
    )


def _merged_rows(
    B: np.ndarray, y: np.ndarray, weight: np.ndarray, n_classes: int, fairness: Fairness | None
) -> tuple[np.ndarray, np.ndarray, Fairness | None]:
    """Identical rows merged (within the same fairness groups), their weights added per class;
    rows of no weight dropped. Returns the rows, their class weights and the merged groups."""
    key = B
    if fairness is not None:  # rows merge only within the same groups
        key = np.column_stack([B, fairness.group1, fairness.group2]).astype(np.uint8)
    first, group = group_rows(key)
    class_weight = np.zeros((len(first), n_classes))
    np.add.at(class_weight, (group, y), weight)
    keep = class_weight.sum(axis=1) > 0
    merged_fairness = None
    if fairness is not None:
        merged_fairness = Fairness(
            fairness.kind,
            np.asarray(fairness.group1, bool)[first][keep],
            np.asarray(fairness.group2, bool)[first][keep],
            fairness.positive,
            fairness.ratio,
            fairness.both_ways,
        )
    return B[first][keep], class_weight[keep], merged_fairness


class _Incumbent:
    """The best diagram meeting the constraints so far; ``on_improve`` hears of each better one."""

    def __init__(
        self,
        value_of: Callable[[Diagram], float | None],
        on_improve: Callable[[Diagram, float], None] | None,
    ) -> None:
        self.value_of = value_of
        self.on_improve = on_improve
        self.diagram: Diagram | None = None
        self.value = math.inf

    def offer(self, diagram: Diagram) -> None:
        """Keep ``diagram`` if it meets the constraints and beats the incumbent."""
        value = self.value_of(diagram)
        if value is not None and value < self.value - 1e-12:
            self.diagram, self.value = diagram, value
            if self.on_improve is not None:
                self.on_improve(diagram, value)


def _run_rc2(
    wcnf: WCNF,
    formula: DiagramFormula,
    D: int,
    solver: str,
    end: float | None,
    incumbent: _Incumbent,
) -> tuple[float, bool, int]:
    """RC2 on the formula until it finishes or ``end``, its models offered to the incumbent.

    Returns the lower bound on objective (18), whether the incumbent is proven optimal (or
    proven that none exists) and the number of oracle calls.
    """
    lower, proven = 0.0, False
    timed_out = threading.Event()
    with _CountingRC2(wcnf, solver=solver, adapt=True, exhaust=True, minz=True) as rc2:
        rc2.stop = timed_out
        rc2.on_model = lambda model: incumbent.offer(formula.decode(model))
        timer = None
        if end is not None:
            # stopped a little early: the last oracle call and freeing it take time too
            timer = threading.Timer(
                max(end - time.perf_counter() - STOP_RESERVE, 0.0), _stop, (rc2, timed_out)
            )
            timer.start()
        try:
            model = None if timed_out.is_set() else rc2.compute(expect_interrupt=True)
            if model is None and not timed_out.is_set():
                proven = True  # the hard clauses have no model
        except _Stopped as stopped:
            model, lower = None, stopped.cost / D
        finally:
            if timer is not None:
                timer.cancel()
        if model is not None:  # RC2 finished: its model is optimal
            diagram = formula.decode(model)
            value = incumbent.value_of(diagram)
            if value is None or abs(value - rc2.cost / D) > 1e-9 * max(1.0, value):
                raise RuntimeError(
                    f"internal error: the decoded diagram scores {value}, MaxSAT {rc2.cost / D}"
                )
            if value < incumbent.value - 1e-12 and incumbent.on_improve is not None:
                incumbent.on_improve(diagram, value)
            if value < incumbent.value - 1e-12 or incumbent.diagram is None:
                incumbent.diagram, incumbent.value = diagram, value
            lower, proven = incumbent.value, True
        return lower, proven, rc2.calls


def _stop(rc2: RC2Stratified, flag: threading.Event) -> None:
    flag.set()
    rc2.interrupt()


# Not errors.TimeUp: raised from inside RC2's oracle calls, it unwinds RC2 itself and carries
# the cost of the cores processed in full (the lower bound); only minimum_error_diagram catches
# it, so a TimeUp from elsewhere (building the formula) is never mistaken for it, nor it for one.
class _Stopped(Exception):
    """The clock stopped RC2; ``cost`` is the cost of the cores it had fully processed."""

    def __init__(self, cost: int) -> None:
        super().__init__(cost)
        self.cost = cost


class _CountingRC2(RC2Stratified):
    """RC2 (stratified) that counts its oracle calls, reports its models and stops at the clock.

    Every model of the SAT oracle satisfies the hard clauses, so it is a diagram: ``on_model``
    sees each one (the anytime incumbents). Once ``stop`` is set, an interrupted call (or the
    next call) raises :class:`_Stopped` instead of returning: RC2 itself would go on
    "processing the last found core" of the interrupted call — a core the solver never
    proved, which inflated the lower bound — and trim, minimise and exhaust it with more
    oracle calls past the time limit. The cost before the call counts only cores processed
    in full, so it is a valid lower bound. With ``stop`` every oracle call can be interrupted.
    """

    calls = 0
    stop: threading.Event | None = None
    on_model: Callable[[list[int]], None] | None = None

    def _call_oracle(self, assumptions: list[int] = (), expect_interrupt: bool = False) -> bool:
        if self.stop is not None and self.stop.is_set():
            raise _Stopped(self.cost)
        self.calls += 1
        cost = self.cost
        # every call interruptible: RC2 asks for that only in its main loop, not when it
        # trims, minimises or exhausts a core (one such call ran 4.4 s past a 5 s limit)
        result = super()._call_oracle(list(assumptions), self.stop is not None)
        if result is None and self.stop is not None and self.stop.is_set():
            raise _Stopped(cost)
        if result and self.on_model is not None:
            self.on_model(self.oracle.get_model())
        return result
