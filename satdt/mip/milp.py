"""Solve the MILP of Florio et al., "Optimal Decision Diagrams for Classification" (AAAI 2023).

:func:`solve_diagram` checks its input, builds the model (:mod:`satdt.mip.formulation`), encodes
a start diagram (:mod:`satdt.mip.solution`), runs HiGHS or SCIP (:mod:`satdt.mip.solvers`) within
the deadline and decodes the best solution into a :class:`~satdt.Diagram`.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..core.errors import SatdtError, TimeUp
from ..models.diagram import Diagram
from ..models.diagram_checks import FAIRNESS_KINDS, SPLITS, Fairness, check_widths
from ..models.diagram_checks import objective as objective_18
from . import solvers
from .formulation import MilpOptions, _build, _merge_rows, _Problem, _Skeleton
from .solution import _decode, _encode_start, _to_diagram, _Unrepresentable

__all__ = ["Fairness", "IncumbentHook", "MilpOptions", "MipOutcome", "solve_diagram"]

_DEFAULT_OPTIONS = MilpOptions()
_CUTOFF_SLACK = 1e-7  # a start at exactly the cutoff stays acceptable to the solver

#: ``on_incumbent(diagram, objective, bound, elapsed)`` is called on every improving solution.
IncumbentHook = Callable[[Diagram, float, float, float], None]


@dataclass
class MipOutcome:
    """The result of :func:`solve_diagram`.

    ``diagram`` is the best diagram found (in scaled units), or None when none was found;
    ``objective`` its value of (18) (``inf`` without a diagram), ``bound`` the best lower bound,
    ``gap`` = ``(objective - bound) / max(objective, 1e-10)``; ``status`` is ``"optimal"``,
    ``"time_limit"``, ``"infeasible"`` (no diagram satisfies the constraints and the cutoff) or
    ``"interrupted"`` (the solver stopped for another reason).
    """

    diagram: Diagram | None
    objective: float
    bound: float
    gap: float
    status: str
    proven_optimal: bool
    runtime: float
    solver: str
    nodes: int


# --------------------------------------------------------------------------------------------
# entry point


def _check(
    X: np.ndarray,
    y: np.ndarray,
    n_classes: int,
    widths: tuple[int, ...],
    sample_weight: np.ndarray | None,
    options: MilpOptions,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, tuple[int, ...]]:
    """Validated (X, y, weights, widths); raises SatdtError naming the parameter."""
    X = np.asarray(X, dtype=np.float64)
    y = np.asarray(y)
    if X.ndim != 2 or len(X) == 0 or len(y) != len(X):
        raise SatdtError(
            f"X must be a non-empty 2-D array with one label per row; got shapes {X.shape} and {y.shape}"
        )
    if not np.all(np.isfinite(X)) or X.min() < 0.0 or X.max() > 1.0:
        raise SatdtError(
            "X must be min-max scaled into [0, 1] (the MILP's big-M values rely on it); scale the features first"
        )
    if (
        n_classes < 2
        or not np.issubdtype(y.dtype, np.integer)
        or y.min() < 0
        or y.max() >= n_classes
    ):
        raise SatdtError(
            f"y must hold class indices in 0..n_classes-1 with n_classes >= 2; got n_classes={n_classes}"
        )
    widths = check_widths(widths)
    if options.split not in SPLITS:
        raise SatdtError(f"split must be one of {SPLITS}; got {options.split!r}")
    if options.solver not in solvers.MILP_SOLVERS:
        raise SatdtError(f"solver must be one of {solvers.MILP_SOLVERS}; got {options.solver!r}")
    if options.alpha < 0 or options.epsilon <= 0:
        raise SatdtError(
            f"alpha must be >= 0 and epsilon > 0; got alpha={options.alpha}, epsilon={options.epsilon}"
        )
    weight = (
        np.ones(len(y)) if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
    )
    if weight.shape != y.shape or np.any(weight < 0) or weight.sum() <= 0:
        raise SatdtError("sample_weight must hold one non-negative weight per row, not all zero")
    if options.max_splits is not None and options.max_splits < 1:
        raise SatdtError(
            f"max_splits counts active internal nodes including the root, so it must be >= 1; got {options.max_splits}"
        )
    if options.min_flow is not None and options.min_flow < 0:
        raise SatdtError(f"min_flow must be >= 0; got {options.min_flow}")
    fairness = options.fairness
    if fairness is not None:
        if fairness.kind not in FAIRNESS_KINDS:
            raise SatdtError(
                f"fairness kind must be one of {FAIRNESS_KINDS}; got {fairness.kind!r}"
            )
        for mask in (fairness.group1, fairness.group2):
            if np.asarray(mask).shape != y.shape or np.asarray(mask).dtype != bool:
                raise SatdtError("fairness groups must be boolean masks with one entry per row")
        if not 0 < fairness.ratio <= 1 or not 0 <= fairness.positive < n_classes:
            raise SatdtError(
                f"fairness ratio must lie in (0, 1] and positive in 0..n_classes-1; got {fairness.ratio}, {fairness.positive}"
            )
    return X, y.astype(np.int64), weight, widths


def _decode_reserve(prob: _Problem) -> float:
    """Seconds kept, after the solver's deadline, to decode its solution into a diagram.

    Decoding routes the (merged) rows through the diagram and reads a few blocks of the solution
    vector: linear in rows times nodes; measured well under 0.05 s for 1,600 rows and 15 nodes.
    """
    return 0.02 + 2e-8 * len(prob.rows.X) * (prob.sk.n_nodes + prob.rows.X.shape[1])


def solve_diagram(
    X: np.ndarray,
    y: np.ndarray,
    n_classes: int,
    widths: tuple[int, ...],
    options: MilpOptions = _DEFAULT_OPTIONS,
    *,
    sample_weight: np.ndarray | None = None,
    deadline: float | None = None,
    start: Diagram | None = None,
    on_incumbent: IncumbentHook | None = None,
) -> MipOutcome:
    """An optimal decision diagram of skeleton ``widths`` by the MILP (1)-(18) of Florio et al.

    Parameters
    ----------
    X : array of shape (n_samples, n_features)
        Features min-max scaled into [0, 1].
    y : array of int, shape (n_samples,)
        Class indices in ``0..n_classes-1``.
    n_classes : int
        Number of terminals (>= 2).
    widths : tuple of int
        The skeleton: width of each internal layer, the first being 1 (the root).
    options : MilpOptions
        The objective's ``alpha``, the split kind, the solver, the extensions and the solver's
        settings (see :class:`MilpOptions`).
    sample_weight : array, optional
        Non-negative row weights (errors, group rates and ``min_flow`` count weights).
    deadline : float, optional
        A ``time.perf_counter()`` value (None: no limit). It covers building the model, passing it to the solver, solving, reading and decoding
        the solution: the solver is stopped early enough (by an estimate from the model's size)
        for the call to return in time.
    start : Diagram, optional
        A diagram on the same scaled data: a MIP start, and its objective a cutoff. A start
        the MILP cannot represent (too many nodes per layer, skipped layers, values closer
        than ``epsilon`` split apart, violated extensions) is ignored with a warning.
    on_incumbent : callable, optional
        ``on_incumbent(diagram, objective, bound, elapsed)`` on the accepted start (bound 0), then
        on every improving solution (HiGHS ``cbMipImprovingSolution``, SCIP's BESTSOLFOUND event).

    Returns
    -------
    MipOutcome
        The diagram in scaled units (classes ``0..n_classes-1``), its objective recomputed on the data,
        the bound, gap, status, runtime, solver name and branch-and-bound nodes.

    Notes
    -----
    The big-M values of (13)-(14): with ``x`` in [0, 1]^d, ``a`` in [-1, 1]^d and ``b`` in [-1, 1],
    ``|a x_i| <= s_i`` where ``s_i = max_j x_ij`` for univariate splits ((15)-(16) leave one
    non-zero ``|a_j| <= 1``) and ``s_i = sum_j x_ij`` for multivariate ones; hence
    ``M_i = s_i + 1 + epsilon`` for (13) and ``M_i = s_i + 1`` for (14) (at most 2 + epsilon and
    d + 1 + epsilon). The flows ``w`` stay continuous as in the paper: they are integral at every
    integral ``lambda`` and ``y`` (Theorem 1), so big-M rows on a continuous ``w`` are exact.
    """
    began = time.perf_counter()
    X, y, weight, widths = _check(X, y, n_classes, widths, sample_weight, options)
    solver = options.solver
    solvers.require(solver)
    end = np.inf if deadline is None else deadline
    rows = _merge_rows(X, y, n_classes, weight, options.fairness)
    sk = _Skeleton(widths, n_classes)

    def out_of_time(diagram: Diagram | None, value: float) -> MipOutcome:
        """The deadline passed before the solver ran: the start (if usable), against the bound 0."""
        gap = np.inf if diagram is None else value / max(abs(value), 1e-10)
        status = "optimal" if value <= 0 else "time_limit"  # a start of objective 0 is optimal
        elapsed = time.perf_counter() - began
        return MipOutcome(diagram, value, 0.0, gap, status, value <= 0, elapsed, solver, 0)

    try:
        prob = _build(rows, sk, options, end)
    except TimeUp:
        # the start is unchecked against the model: usable only without extra constraints
        plain = options.max_splits is None and options.min_flow is None and options.fairness is None
        if start is None or not plain:
            return out_of_time(None, np.inf)
        return out_of_time(start, objective_18(start, X, y, options.alpha, widths, weight))
    x_start, start_objective = None, np.inf
    if start is not None:
        try:
            x_start = _encode_start(prob, start)
            start_objective = float(prob.model.cost @ x_start)
        except _Unrepresentable as reason:
            warnings.warn(f"the start diagram is ignored: {reason}", stacklevel=2)
    cutoff = options.cutoff
    limit = min(np.inf if cutoff is None else cutoff, start_objective) + _CUTOFF_SLACK
    best = [min(limit, start_objective)]  # report only solutions better than these
    if on_incumbent is not None and x_start is not None:
        on_incumbent(start, start_objective, 0.0, time.perf_counter() - began)

    def report(x: np.ndarray, objective: float, bound: float) -> None:
        if objective >= best[0] - 1e-12:
            return
        try:
            arrays, value = _decode(prob, x)
        except (RuntimeError, IndexError):
            return  # an intermediate solution off by tolerances; the final one is checked strictly
        best[0] = objective
        on_incumbent(
            _to_diagram(arrays, X, y, weight, n_classes), value, bound, time.perf_counter() - began
        )

    try:
        raw = solvers.solve(
            prob.model,
            solver,
            deadline=end - _decode_reserve(prob),
            start=x_start,
            cutoff=None if np.isinf(limit) else limit,
            threads=options.threads,
            on_solution=None if on_incumbent is None else report,
            log=options.log,
            indicators=options.indicators,
        )
    except TimeUp:  # passing the model to the solver took the time that was left
        return out_of_time(start if x_start is not None else None, start_objective)
    accepted = (start, start_objective) if x_start is not None else None
    return _outcome(prob, raw, (X, y, weight), accepted, solver, began)


def _outcome(
    prob: _Problem,
    raw: solvers.RawResult,
    data: tuple[np.ndarray, np.ndarray, np.ndarray],
    start: tuple[Diagram, float] | None,
    solver: str,
    began: float,
) -> MipOutcome:
    """The outcome of a solver run: its solution decoded (checked against its objective), or
    the accepted ``start`` (and its objective) when the solver found nothing better."""
    X, y, weight = data
    status = raw.status
    if raw.x is not None:
        arrays, objective = _decode(prob, raw.x)
        if abs(objective - raw.objective) > 1e-5:
            raise RuntimeError(
                f"internal error: the decoded diagram scores {objective}, the MILP {raw.objective}"
            )
        diagram = _to_diagram(arrays, X, y, weight, prob.sk.n_classes)
    elif start is not None:
        diagram, objective = start
        if status == "infeasible":
            status = "optimal"  # nothing beats the start's cutoff
    else:
        diagram, objective = None, np.inf
    # objective (18) is never negative: 0 bounds it when the solver has no dual bound (-1e20)
    bound = objective if status == "optimal" else min(max(raw.bound, 0.0), objective)
    if diagram is None:
        gap = np.inf
    else:
        gap = 0.0 if status == "optimal" else (objective - bound) / max(abs(objective), 1e-10)
    return MipOutcome(
        diagram,
        objective,
        bound,
        gap,
        status,
        status == "optimal",
        time.perf_counter() - began,
        solver,
        raw.nodes,
    )
