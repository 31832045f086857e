"""One tree search of the table, run on prepared data without an estimator.

:func:`run_search` takes a method of :data:`satdt.search.registry.METHODS` and its :class:`Task` and
does what a fit does around the method: one class is one leaf; on a large table a greedy
tree grown on the numeric data is the first incumbent; the method's Numba kernels are
awaited (on a first run they compile in a background process while a greedy tree is the
incumbent, so that the time limit holds); a time limit that passes returns the best tree
found, not proven. :func:`check_tree` re-checks a tree against the data. :func:`min_error_tree`
is a whole minimum-error fit on arrays (validation, preparation, ``auto``'s choice of method,
the search, the check) for a search that needs a tree of its own: the best tree of a diagram
skeleton (:mod:`satdt.search.diagrams`).

These are the steps of :class:`~satdt.estimators.tree.OptimalTreeClassifier`'s fit, as functions of
the task; this module imports no estimator.
"""

from __future__ import annotations

import contextlib
import time
from dataclasses import replace

import numpy as np

from ..core.errors import InfeasibleError, TimeUp
from ..models.tree import LEAF, Tree
from ..prepare.costs import tree_cost
from ..prepare.prepared import Prepared, prepare, validate
from ..task.result import Progress, Recorder, SearchResult
from . import registry as methods
from .registry import CONSISTENCY, OBJECTIVES, Method, Task

# From this many rows on, a greedy tree grown on the numeric data (every threshold, Numba)
# is the first incumbent, so that a time limit or a memory budget never leaves the user
# with less than one greedy pass; below, the methods' own first trees come at once.
LARGE_ROWS = 20_000
# The memory budget of the binary features (megabytes), the estimators' default.
MAX_MEMORY_MB = 1024.0


def min_error_tree(
    X: np.ndarray,
    y: np.ndarray,
    sample_weight: np.ndarray | None,
    max_depth: int,
    time_limit: float | None,
) -> SearchResult | None:
    """The tree of depth at most ``max_depth`` with the fewest (weighted) errors on ``(X, y)``:
    ``method='auto'`` on every threshold, at most ``time_limit`` seconds from now (data
    preparation included), as ``OptimalTreeClassifier(objective='error')`` fits it; the
    result's tree is in ``y``'s labels. None when no tree came: the time limit passed before
    the first one, or no row has positive weight."""
    started = time.perf_counter()
    defaults = {name: param.default for name, param in methods.method_params().items()}
    method, options = methods.resolve_method("error", "auto", defaults)
    dataset = validate(X, y, estimator="min_error_tree")
    recorder = Recorder("error", start=started)
    deadline = None if time_limit is None else recorder.start + float(time_limit)
    try:
        data = prepare(
            dataset,
            sample_weight,
            consistency=False,
            resolve=None,
            recorder=recorder,
            deadline=deadline,
            max_thresholds=None,
            max_memory_mb=MAX_MEMORY_MB,
        )
        if not options:
            with contextlib.suppress(TimeUp):  # past the limit: the choice without the data
                method = methods.METHODS[methods.choose_method("error", data)]
        task = Task(data, "error", max_depth, None, options)
        if not (data.weight > 0).any():
            return None  # no leaf can hold a row
        return finish(run_search(method, task), task)
    except (TimeUp, InfeasibleError):  # the time limit passed before any tree
        return None


def finish(result: SearchResult, task: Task) -> SearchResult:
    """The result of a search that ran: marked stopped by the time limit when it was (and not
    proven), its tree re-checked against the data unless it was when recorded."""
    data = task.data
    left = data.time_left()
    if not (result.proven_optimal or result.stop_reason) and left is not None and left <= 0:
        result = replace(result, stop_reason="time limit")
    if result.model is not task.checked:  # a greedy first tree was checked when recorded
        _check(result.model, task.recorder.best.value, task)
    if data.original is not None:
        result = _with_costs(result, task)
    return result


def _with_costs(result: SearchResult, task: Task) -> SearchResult:
    """A search on rows rewritten for a cost matrix (:mod:`satdt.prepare.costs`), its tree re-checked
    on the user's rows: its true cost (the recorder's value less the reduction's offset), the
    minimum support the user asked for, and the class counts of the user's rows."""
    data, costs = task.data, task.data.costs
    original, model = data.original, result.model
    support = task.min_support // max(costs.factor, 1)
    value = task.recorder.best.value - costs.offset
    check_tree(
        model,
        original,
        value,
        task.objective,
        task.leaf_penalty,
        support,
        costs.matrix,
        max_nodes=task.max_nodes,
        max_depth=task.max_depth,
    )
    counted = model.with_counts(original.X, original.y, original.weight)
    if not np.allclose(counted.counts, model.counts):
        raise RuntimeError("internal error: the tree's class counts are not the training rows'")
    return result


def run_search(method: Method, task: Task) -> SearchResult:
    """Run the method, after the shared first steps: one class, a greedy start, time-outs.

    A time limit that passes returns the best tree found, not proven; without one,
    :class:`~satdt.core.errors.InfeasibleError`.
    """
    data, recorder = task.data, task.recorder
    costs = data.costs
    recorder.begin(
        data.user_tree if method.input == "binary" else data.finish,
        value_scale(task),
        value_offset=0.0 if costs is None else costs.offset,
        cost_matrix=None if costs is None else costs.matrix,
    )
    if data.n_classes == 1:
        if task.max_nodes is not None and task.max_nodes < 1:
            raise InfeasibleError("no tree has fewer than 1 node: raise max_nodes")
        leaf = data.finish(Tree.single_leaf(0, data.classes))
        value = OBJECTIVES[task.objective].value_of(leaf, 0.0, task.leaf_penalty)
        recorder.improve(leaf, value, mapped=True)
        return recorder.snapshot(proven_optimal=True)
    if len(data.y) >= LARGE_ROWS:
        greedy_start(task)
    try:
        waited = await_kernels(method, task)
        if waited:
            if recorder.best is None:  # no admissible greedy tree: as any time-out
                raise TimeUp
            return recorder.snapshot(proven_optimal=False, stop_reason=waited)
        if (
            task.max_depth is None
            and task.max_nodes is None  # a node budget bounds the depth
            and OBJECTIVES[task.objective].kind != CONSISTENCY
        ):
            return methods.run_without_depth(method, task)
        return method.run(task)
    except TimeUp:
        if recorder.best is None:
            greedy_start(task, hurry=True)
        if recorder.best is None:
            raise InfeasibleError(
                "the time limit passed before any model satisfying the constraints was "
                "found; raise time_limit"
            ) from None
        return recorder.snapshot(proven_optimal=False)


def value_scale(task: Task) -> float:
    """What the task's values are multiplied by to read in the user's units: a leaf penalty is
    searched in units of the weights (``leaf_penalty * total weight`` per leaf, the user's rows'
    weight with a cost matrix) and shown per unit weight (errors / total + leaf_penalty *
    leaves); any other value as it is."""
    if task.leaf_penalty <= 0 or OBJECTIVES[task.objective].kind == CONSISTENCY:
        return 1.0
    data = task.data if task.data.original is None else task.data.original  # the user's rows
    return 1.0 / float(data.weight.sum())


def run_pareto(method: Method, task: Task) -> tuple[list, str]:
    """The depth/size Pareto front by the method (:func:`satdt.search.registry.run_pareto`): the
    ``(points, stop reason)`` with every point's tree over the user's columns and re-checked
    against the data (its size)."""
    data = task.data
    to_user = data.user_tree if method.input == "binary" else data.finish
    task.recorder.begin(to_user)
    front, reason = methods.run_pareto(task, method.name)
    points = [(p.depth, p.n_nodes, to_user(p.tree), p.proven) for p in front]
    for _, n_nodes, tree, _ in points:
        check_tree(tree, data, n_nodes, task.objective)
    return points, reason


def await_kernels(method: Method, task: Task) -> str:
    """Make sure the method's Numba kernels are ready before it runs: ``""`` when they are
    (or the method compiles them itself), else why the time limit came first.

    On a first run they compile in a background process (:mod:`satdt.dp.kernels`) while
    a greedy tree grown in NumPy becomes the incumbent, so that a time limit that passes
    first still returns a real tree, not proven, saying why. Once compiled they load
    from Numba's cache in a fraction of a second.
    """
    from ..dp import kernels

    options = kernels.kernels_of(method.name)({**task.options, "min_support": task.min_support})
    if not options:
        return ""
    background = kernels.request([group for option in options for group in option])
    recorder = task.recorder
    if not any(kernels.ready(option) for option in options):
        if not background:
            return ""  # no background compilation here: the method compiles them itself
        if recorder.best is None:
            greedy_start(task)
        step = "compiling the search kernels (first run only)"
        recorder.event(Progress(step))

        def tell(seconds: float) -> None:
            if seconds >= 1:
                recorder.event(Progress(f"{step}: {seconds:.0f} s"))

        if not kernels.wait(options, task.deadline, tell):
            left = task.data.time_left()
            if left is None or left > 0:
                return ""  # the background compilation failed: the method compiles here
            return (
                "time limit while the search kernels were compiling (a first run), so this "
                "is the greedy tree; later runs load the kernels from the cache"
            )
    # the most the method can use (the others, if any, compile in the background meanwhile)
    chosen = max((option for option in options if kernels.ready(option)), key=len)
    if task.deadline is None or all(kernels.loaded(g) for g in chosen):
        return ""
    # in the cache but not in this process: loading takes about a second, so the greedy
    # tree first, and the time limit holds while they load
    if recorder.best is None:
        greedy_start(task)
    if kernels.load_in_background(chosen).done(max(task.deadline - time.perf_counter(), 0.0)):
        return ""
    return (
        "time limit while the search kernels were loading from the cache, so this is the "
        "greedy tree"
    )


def greedy_start(task: Task, hurry: bool = False) -> None:
    """Record a greedy tree grown on the numeric data as the first incumbent.

    For the consistency objectives it is grown until every leaf is pure (a consistent
    tree); for the error objective, to ``max_depth``. Its value becomes the bound the
    method must beat. ``hurry``: the deadline has passed, grow it at once anyway.
    """
    from ..dp.greedy import greedy_numeric_tree

    data = task.data
    if data.has_missing:
        return  # the numeric greedy tree takes no missing values: the method starts alone
    consistency = OBJECTIVES[task.objective].kind == CONSISTENCY
    data.recorder.event(Progress("growing a greedy tree on the numeric data"))
    tree = greedy_numeric_tree(
        data.X,
        data.y,
        data.n_classes,
        sample_weight=data.weight,
        max_depth=None if consistency else task.max_depth,
        deadline=None if hurry else data.deadline,
    )
    # grown on these rows and weights, it carries their class weights (the searched rows', also
    # with a cost matrix: pruning and the value are the search's); a tree grown until every leaf
    # is pure has no leaf to merge, so only a depth-capped one is simplified
    if consistency:
        tree = data.named(tree)
    else:
        tree = data.named(tree).simplify(data.X).with_counts(data.X, data.y, data.weight)
    if not consistency and (task.leaf_penalty > 0 or task.min_support > 1):
        tree = tree.pruned(task.leaf_penalty, task.min_support, data.X, data.y, data.weight)
    error = tree.count_error()
    if data.original is not None:  # the user's rows' class counts (predict_proba)
        tree = data.finish(tree)
    if (task.max_nodes is not None and tree.n_nodes > task.max_nodes) or (
        consistency and (error > 0 or (task.max_depth is not None and tree.depth > task.max_depth))
    ):
        return  # not admissible: the method must find its own first tree
    value = OBJECTIVES[task.objective].value_of(tree, error, task.leaf_penalty)
    if data.recorder.improve(tree, value, mapped=True) is not None:
        # now, within the time limit: not again at the end
        _check(tree, value, task)
        task.checked = tree


def _check(model: Tree, value: float, task: Task) -> None:
    check_tree(
        model,
        task.data,
        value,
        task.objective,
        task.leaf_penalty,
        task.min_support,
        max_nodes=task.max_nodes,
        max_depth=task.max_depth,
    )


def check_tree(
    model: Tree,
    data: Prepared,
    value: float,
    objective: str,
    leaf_penalty: float = 0.0,
    min_support: int = 1,
    cost_matrix: np.ndarray | None = None,
    *,
    max_nodes: int | None = None,
    max_depth: int | None = None,
) -> None:
    """Re-check a tree against the data before anyone sees it (correct before fast).

    ``value`` is in the search's units: for the error objective, the weighted error (with a
    ``cost_matrix``, the weighted cost of the predictions) plus ``leaf_penalty`` (in units
    of the weights) per leaf; every leaf must hold ``min_support`` rows. The tree has at most
    ``max_nodes`` nodes and depth at most ``max_depth`` (when given).
    """
    if (max_nodes is not None and model.n_nodes > max_nodes) or (
        max_depth is not None and model.depth > max_depth
    ):
        raise RuntimeError(
            f"internal error: the returned model has {model.n_nodes} nodes and depth "
            f"{model.depth}, over max_nodes={max_nodes} or max_depth={max_depth}"
        )
    predicted = model.predict_index(data.X)
    wrong = predicted != data.y
    kind = OBJECTIVES[objective]
    if kind.kind == CONSISTENCY:
        if wrong.any():
            raise RuntimeError("internal error: the returned model misclassifies training rows")
        expected = kind.value_of(model, 0.0)
        if expected != value:
            raise RuntimeError(
                f"internal error: reported {objective} {value} but the model has {expected}"
            )
        return
    if cost_matrix is None:
        error = float(data.weight[wrong].sum())
        what = "error"
    else:
        error = tree_cost(predicted, data.y, data.weight, cost_matrix)
        what = "cost"
    cost = error + leaf_penalty * model.n_leaves
    scale = float(data.weight.sum()) * (1.0 if cost_matrix is None else float(cost_matrix.max()))
    if not np.isclose(cost, value, rtol=1e-9, atol=1e-9 * max(1.0, scale)):
        what = what if leaf_penalty == 0 else f"penalised {what}"
        raise RuntimeError(f"internal error: model {what} {cost} != reported {value}")
    if min_support > 1 and model.n_leaves > 1:
        support = np.bincount(model.apply(data.X)[data.weight > 0], minlength=model.n_nodes)
        leaves = np.flatnonzero(model.feature == LEAF)
        if support[leaves].min() < min_support:
            raise RuntimeError(
                f"internal error: a leaf holds {support[leaves].min()} rows, fewer than "
                f"min_support={min_support}"
            )
