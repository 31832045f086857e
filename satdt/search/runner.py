"""One tree search of the table, run on prepared data: what a fit does around a method.

:class:`TreeSearch` takes a method of :data:`satdt.search.registry.METHODS` and its
:class:`~satdt.task.spec.Task` and runs the steps every fit shares, each a method a variant
may override (PySAT's RC2 is the model: ``compute`` the answer, ``finish`` it):

* :meth:`~TreeSearch.begin` tells the recorder how the method's trees map to the user's
  columns and in what units its values come;
* :meth:`~TreeSearch.compute`: one class is one leaf; on a large table a greedy tree grown on
  the numeric data is the first incumbent (:meth:`~TreeSearch.start_greedy`); the method's
  Numba kernels are awaited (:meth:`~TreeSearch.await_kernels`: on a first run they compile
  in a background process while a greedy tree is the incumbent, so that the time limit
  holds); then the method runs (without a depth limit, :func:`satdt.search.sparse.run_without_depth`);
  a time limit that passes gives the best tree found, not proven;
* :meth:`~TreeSearch.finish` marks a stopped search and re-checks its tree against the data
  (:func:`satdt.search.checks.check_tree`), on the user's rows under a cost matrix.

:meth:`~TreeSearch.run` is the whole fit (a Ctrl-C gives the best tree found, not proven),
:meth:`~TreeSearch.pareto` the depth/size front. :func:`min_error_tree` is a whole
minimum-error fit on arrays (validation, preparation, ``auto``'s choice, the search, the
check) for a search that needs a tree of its own: the best tree of a diagram skeleton
(:mod:`satdt.search.diagrams`). This module imports no estimator.
"""

from __future__ import annotations

import contextlib
import time
from dataclasses import replace

import numpy as np

from ..core.errors import (
    InfeasibleError,
    TimeUp,
    honour_interrupt,
    interrupt_handled,
    interrupt_pending,
)
from ..models.tree import Tree
from ..prepare.prepared import prepare
from ..prepare.validate import validate
from ..task.objectives import OBJECTIVES
from ..task.result import Recorder, SearchResult
from ..task.spec import Task
from .auto import choose_method
from .checks import check_tree
from .registry import METHODS, Method, method_params, resolve_method
from .runs import run_front
from .sparse import run_without_depth

# From this many rows on, a greedy tree grown on the numeric data (every threshold, Numba)
# is the first incumbent, so that a time limit or a memory budget never leaves the user
# with less than one greedy pass; below, the methods' own first trees come at once.
LARGE_ROWS = 20_000
# The memory budget of the binary features (megabytes), the estimators' default.
MAX_MEMORY_MB = 1024.0


class TreeSearch:
    """One search of the table on a task, with the steps a fit takes around it.

    Parameters
    ----------
    method : Method
        The method of the table to run.
    task : Task
        The prepared data, the objective, its bounds and the method's options.
    interruptible : bool, default=True
        Whether a Ctrl-C during the search gives the best tree found so far, not proven (the
        estimators' fit), or goes on up (a tree a larger search needs, which stops with it).
    """

    def __init__(self, method: Method, task: Task, *, interruptible: bool = True) -> None:
        self.method = method
        self.task = task
        self.interruptible = interruptible

    @property
    def to_user(self):
        """How the method's trees map to the user's columns: over binary features, through
        the features' columns and thresholds; over the numeric columns, names and counts."""
        data = self.task.data
        return data.user_tree if self.method.input == "binary" else data.finish

    # ------------------------------------------------------------------ the fit
    def run(self) -> SearchResult:
        """The whole search: :meth:`begin`, :meth:`compute`, :meth:`finish`.

        A time limit that passes gives the best tree found, not proven; without one,
        :class:`~satdt.core.errors.InfeasibleError`. With ``interruptible``, a Ctrl-C gives
        the best tree found, not proven (raised on when there is none).
        """
        self.begin()
        try:
            if self.interruptible:
                honour_interrupt()  # a Ctrl-C dropped while the data was read and prepared
            result = self.compute()
        except (KeyboardInterrupt, Exception) as stopped:
            if not self.interruptible:
                raise
            result = self._interrupted(stopped)
        return self.finish(result)

    def _interrupted(self, stopped: BaseException) -> SearchResult:
        """The best tree found when a Ctrl-C stopped the search (also one that a library
        turned into an error of its own: NumPy reports a KeyboardInterrupt raised while it
        compares structured arrays as a TypeError); any other error goes on up."""
        recorder = self.task.recorder
        if not isinstance(stopped, KeyboardInterrupt):
            if not interrupt_pending():
                raise stopped
            if recorder.best is None:
                raise KeyboardInterrupt from stopped
        elif recorder.best is None:
            raise stopped
        interrupt_handled()
        recorder.stats.interrupted = True
        return recorder.snapshot(proven_optimal=False, stop_reason="interrupted")

    def begin(self) -> None:
        """Tell the recorder how trees map to the user's columns and in what units values
        come (:meth:`satdt.task.result.Recorder.begin`)."""
        task = self.task
        costs = task.data.costs
        task.recorder.begin(
            self.to_user,
            value_scale(task),
            value_offset=0.0 if costs is None else costs.offset,
            cost_matrix=None if costs is None else costs.matrix,
        )

    def compute(self) -> SearchResult:
        """Run the method, after the shared first steps: one class, a greedy start on a large
        table, the kernels awaited; a time limit that passes gives the best tree found."""
        task, method = self.task, self.method
        data, recorder = task.data, task.recorder
        if data.n_classes == 1:
            if task.max_nodes is not None and task.max_nodes < 1:
                raise InfeasibleError("no tree has fewer than 1 node: raise max_nodes")
            leaf = data.finish(Tree.single_leaf(0, data.classes))
            value = OBJECTIVES[task.objective].value_of(leaf, 0.0, task.leaf_penalty)
            recorder.improve(leaf, value, mapped=True)
            return recorder.snapshot(proven_optimal=True)
        if len(data.y) >= LARGE_ROWS:
            self.start_greedy()
        try:
            waited = self.await_kernels()
            if waited:
                if recorder.best is None:  # no admissible greedy tree: as any time-out
                    raise TimeUp
                return recorder.snapshot(proven_optimal=False, stop_reason=waited)
            if (
                task.max_depth is None
                and task.max_nodes is None  # a node budget bounds the depth
                and not OBJECTIVES[task.objective].consistency
            ):
                return run_without_depth(method, task)
            return method.run(task)
        except TimeUp:
            if recorder.best is None:
                self.start_greedy(hurry=True)
            if recorder.best is None:
                raise InfeasibleError(
                    "the time limit passed before any model satisfying the constraints was "
                    "found; raise time_limit"
                ) from None
            return recorder.snapshot(proven_optimal=False)

    def finish(self, result: SearchResult) -> SearchResult:
        """The result of a search that ran: marked stopped by the time limit when it was (and
        not proven), its tree re-checked against the data unless it was when recorded; on a
        first run, with the kernel groups it had compiled in the background."""
        from ..dp import kernels  # the standard library only, until a group was asked for

        task = self.task
        data = task.data
        left = data.time_left()
        if not (result.proven_optimal or result.stop_reason) and left is not None and left <= 0:
            result = replace(result, stop_reason="time limit")
        compiled = kernels.background(since=task.recorder.start)
        if compiled:
            result = replace(result, compiled_in_background=compiled)
        if result.model is not task.checked:  # a greedy first tree was checked when recorded
            self._check(result.model, task.recorder.best.value)
        if data.original is not None:
            self._check_costs(result)
        return result

    def _check(self, model: Tree, value: float) -> None:
        task = self.task
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

    def _check_costs(self, result: SearchResult) -> None:
        """A search on rows rewritten for a cost matrix (:mod:`satdt.prepare.costs`), its tree
        re-checked on the user's rows: its true cost (the recorder's value less the reduction's
        offset), the minimum support the user asked for, and the user's rows' class counts."""
        task = self.task
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

    # ------------------------------------------------------------------ the front
    def pareto(self) -> tuple[list[tuple[int, int, Tree, bool]], str]:
        """The depth/size Pareto front by the method (:func:`satdt.search.runs.run_front`):
        ``(points, stop reason)``, each point ``(depth, nodes, tree, proven)`` with its tree
        over the user's columns and re-checked against the data (its size)."""
        task = self.task
        data = task.data
        if data.n_classes == 1:
            return [(0, 1, data.finish(Tree.single_leaf(0, data.classes)), True)], (
                "a single class: one leaf"
            )
        to_user = self.to_user
        task.recorder.begin(to_user)
        front, reason = run_front(task, self.method.name)
        points = [(p.depth, p.n_nodes, to_user(p.tree), p.proven) for p in front]
        for _, n_nodes, tree, _ in points:
            check_tree(tree, data, n_nodes, task.objective)
        return points, reason

    # ------------------------------------------------------------------ the steps
    def await_kernels(self) -> str:
        """Make sure the method's Numba kernels are ready before it runs: ``""`` when they are
        (or the method compiles them itself), else why the time limit came first.

        On a first run they compile in a background process (:mod:`satdt.dp.kernels`) while
        a greedy tree grown in NumPy becomes the incumbent, so that a time limit that passes
        first still returns a real tree, not proven, saying why. Once compiled they load
        from Numba's cache in a fraction of a second.
        """
        from ..dp import kernels

        task = self.task
        options = kernels.kernels_of(self.method.name)(
            {**task.options, "min_support": task.min_support}
        )
        if not options:
            return ""
        background = kernels.request([group for option in options for group in option])
        recorder = task.recorder
        if not any(kernels.ready(option) for option in options):
            if not background:
                return ""  # no background compilation here: the method compiles them itself
            if recorder.best is None:
                self.start_greedy()
            step = "compiling the search kernels (first run only)"
            recorder.progress(step)

            def tell(seconds: float) -> None:
                if seconds >= 1:
                    recorder.progress(f"{step}: {seconds:.0f} s")

            if not kernels.wait(options, task.deadline, tell):
                left = task.data.time_left()
                if left is None or left > 0:
                    return ""  # the background compilation failed: the method compiles here
                return (
                    "time limit while the search kernels were compiling (a first run), so "
                    "this is the greedy tree; later runs load the kernels from the cache"
                )
        # the most the method can use (the others, if any, compile in the background meanwhile)
        chosen = max((option for option in options if kernels.ready(option)), key=len)
        if task.deadline is None or all(kernels.loaded(g) for g in chosen):
            return ""
        # in the cache but not in this process: loading takes about a second, so the greedy
        # tree first, and the time limit holds while they load
        if recorder.best is None:
            self.start_greedy()
        if kernels.load_in_background(chosen).done(max(task.deadline - time.perf_counter(), 0.0)):
            return ""
        return (
            "time limit while the search kernels were loading from the cache, so this is the "
            "greedy tree"
        )

    def start_greedy(self, hurry: bool = False) -> None:
        """Record a greedy tree grown on the numeric data as the first incumbent.

        For the consistency objectives it is grown until every leaf is pure (a consistent
        tree), each split leaving a quarter of the rows on each side (``balanced``: a shallow
        tree within ``O(n p log n)`` work); for the error objective, by Gini to
        ``max_depth``. Its value becomes the bound the method must beat. ``hurry``: the
        deadline has passed, grow it at once anyway.
        """
        from ..dp.greedy import greedy_numeric_tree

        task = self.task
        data = task.data
        if data.has_missing:
            return  # the numeric greedy tree takes no missing values: the method starts alone
        consistency = OBJECTIVES[task.objective].consistency
        data.recorder.progress("growing a greedy tree on the numeric data")
        tree = greedy_numeric_tree(
            data.X,
            data.y,
            data.n_classes,
            sample_weight=data.weight,
            max_depth=None if consistency else task.max_depth,
            deadline=None if hurry else data.deadline,
            balanced=consistency,  # shallower and sooner: the depth's first bound
        )
        # grown on these rows and weights, it carries their class weights (the searched rows',
        # also with a cost matrix: pruning and the value are the search's); a tree grown until
        # every leaf is pure has no leaf to merge, so only a depth-capped one is simplified
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
            consistency
            and (error > 0 or (task.max_depth is not None and tree.depth > task.max_depth))
        ):
            return  # not admissible: the method must find its own first tree
        value = OBJECTIVES[task.objective].value_of(tree, error, task.leaf_penalty)
        if data.recorder.improve(tree, value, mapped=True) is not None:
            # now, within the time limit: not again at the end
            self._check(tree, value)
            task.checked = tree


def value_scale(task: Task) -> float:
    """What the task's values are multiplied by to read in the user's units: a leaf penalty is
    searched in units of the weights (``leaf_penalty * total weight`` per leaf, the user's rows'
    weight with a cost matrix) and shown per unit weight (errors / total + leaf_penalty *
    leaves); any other value as it is."""
    if task.leaf_penalty <= 0 or OBJECTIVES[task.objective].consistency:
        return 1.0
    data = task.data if task.data.original is None else task.data.original  # the user's rows
    return 1.0 / float(data.weight.sum())


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
    defaults = {name: param.default for name, param in method_params().items()}
    method, options = resolve_method("error", "auto", defaults)
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
                method = METHODS[choose_method("error", data)]
        task = Task(data, "error", max_depth, None, options)
        if not (data.weight > 0).any():
            return None  # no leaf can hold a row
        return TreeSearch(method, task, interruptible=False).run()
    except (TimeUp, InfeasibleError):  # the time limit passed before any tree
        return None
