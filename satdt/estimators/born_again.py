"""``satdt.born_again``: the born-again tree of a tree ensemble as a fitted estimator.

A random forest, extremely randomised trees or a two-class gradient boosting of
scikit-learn, a :class:`~satdt.models.forest.Forest`, or a file in BA-Trees' text format
becomes a forest (:mod:`satdt.models.forest_io`); :func:`satdt.search.born_again.
born_again_search` finds the smallest tree that decides like it everywhere (Vidal &
Schiffer, "Born-Again Tree Ensembles", ICML 2020); the tree comes back as a fitted
:class:`~satdt.estimators.tree.OptimalTreeClassifier`, so that ``predict``, ``explain``,
``report``, the exports and the pictures work as after a fit.
"""

from __future__ import annotations

import logging
import os
import sys
import time
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from ..core.errors import NotProvenWarning, ParameterError, user_stacklevel
from ..core.params import is_number
from ..data.schema import NUMERIC, ColumnSpec, Schema
from ..models.forest import Forest
from ..models.forest_io import from_sklearn, read_forest
from ..search.born_again import BORN_AGAIN_OBJECTIVES, SATDT_OBJECTIVE, born_again_search
from ..task.events import Event, Progress
from ..task.result import Recorder
from .tree import OptimalTreeClassifier

#: The name of the target column of a born-again tree's schema (a forest names none).
TARGET = "class"
#: The estimator's ``method_`` after :func:`born_again`.
METHOD = "born-again"
_LOG = logging.getLogger("satdt.born_again")


def load_ensemble(ensemble: Any, vote: str | None = None) -> Forest:
    """The forest a born-again tree reproduces.

    Parameters
    ----------
    ensemble : estimator, Forest, str or path-like
        A fitted ``RandomForestClassifier``, ``ExtraTreesClassifier`` or two-class
        ``GradientBoostingClassifier``; a :class:`~satdt.models.forest.Forest`; or the path of
        a forest in BA-Trees' text format (read and checked line by line).
    vote : {"hard", "soft"}, optional
        How a scikit-learn forest's trees decide together (default ``"soft"``, as its
        ``predict``; ``"hard"``: one vote per tree, as BA-Trees). A forest or a file keeps its
        own vote (BA-Trees' files vote hard); a different one is refused.

    Raises
    ------
    ParameterError
        Another kind of ensemble, or a vote that does not apply.
    DataError
        A file that cannot be read or breaks BA-Trees' format (the message names the line).
    """
    if vote not in (None, "hard", "soft"):
        raise ParameterError(f"vote must be 'hard', 'soft' or None, got {vote!r}")
    if isinstance(ensemble, str | os.PathLike):
        forest = read_forest(ensemble)
        what = f"the forest file {os.fspath(ensemble)!r}"
    elif isinstance(ensemble, Forest):
        forest, what = ensemble, "this Forest"
    elif type(ensemble).__module__.startswith("sklearn."):
        return from_sklearn(ensemble, vote)
    else:
        raise ParameterError(
            "ensemble must be a fitted RandomForestClassifier, ExtraTreesClassifier or "
            "two-class GradientBoostingClassifier, a satdt Forest, or the path of a forest in "
            f"BA-Trees' text format; got a {type(ensemble).__name__}"
        )
    if vote is not None and vote != forest.vote:
        raise ParameterError(
            f"{what} votes {forest.vote!r}, not {vote!r}: leave vote unset (BA-Trees' files vote "
            "hard, one vote per tree)"
        )
    return forest


def _check_time_limit(time_limit: Any) -> float | None:
    if time_limit is None:
        return None
    if isinstance(time_limit, bool) or not is_number(time_limit) or not time_limit > 0:
        raise ParameterError(
            f"time_limit must be a number of seconds > 0 or None, got {time_limit!r}"
        )
    return float(time_limit)


def born_again(
    ensemble: Any,
    *,
    objective: str = "depth",
    vote: str | None = None,
    time_limit: float | None = None,
    verbose: bool = False,
) -> OptimalTreeClassifier:
    """The born-again tree of a tree ensemble: the smallest single tree that decides like it
    on every point of the input space, as a fitted :class:`OptimalTreeClassifier`.

    Vidal & Schiffer, "Born-Again Tree Ensembles" (ICML 2020). The forest's thresholds cut
    the input space into cells on each of which the forest decides one class; the tree is
    built from those thresholds and is *faithful*: it decides the forest's class on every
    cell, so on every input (re-checked before it is returned). When the grid of cells is
    small enough (``satdt.dp.born_again.MAX_GRID_CELLS``) a dynamic programme over its
    regions proves the optimum; above, a greedy faithful tree, sub-box lower bounds and a
    counterexample-guided SAT search minimise the depth.

    Parameters
    ----------
    ensemble : estimator, Forest, str or path-like
        A fitted scikit-learn ``RandomForestClassifier``, ``ExtraTreesClassifier`` or
        two-class ``GradientBoostingClassifier``; a :class:`satdt.models.forest.Forest`; or the
        path of a forest in BA-Trees' text format (see :func:`satdt.read_forest`).
    objective : {"depth", "size", "depth_then_size"}, default "depth"
        Minimise the depth; the leaves (any depth); or the leaves among the trees of
        minimum depth.
    vote : {"hard", "soft"}, optional
        How a scikit-learn forest's trees decide together: ``"soft"`` (default) as its
        ``predict`` (mean probabilities), ``"hard"`` one vote per tree as BA-Trees. Leave it
        unset for gradient boosting (the sign of its decision function), a Forest or a file.
    time_limit : float, optional
        Seconds for the whole call, from its start: past them, the best faithful tree found
        (a greedy faithful tree at worst), not proven, with a true lower bound.
    verbose : bool, default False
        Log each step of the search (logger ``satdt.born_again``, to stderr unless logging
        is configured).

    Returns
    -------
    OptimalTreeClassifier
        Fitted: ``tree_`` (faithful to the ensemble), ``result_`` (the
        :class:`~satdt.task.result.SearchResult`: the depth, or the nodes for ``"size"`` and
        ``"depth_then_size"``; its lower bound; proven or not; the statistics
        ``BornAgainSearchStats``), ``classes_``,
        ``n_features_in_``, ``feature_names_in_`` (the ensemble's, else ``f0``, ``f1``, ...),
        ``forest_`` (the forest reproduced) and ``method_ = "born-again"``.

    Raises
    ------
    ParameterError
        An unknown objective, vote or ensemble, a vote that does not apply, a bad time limit.
    DataError
        A forest file that cannot be read or breaks BA-Trees' format.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.ensemble import RandomForestClassifier
    >>> import satdt
    >>> X, y = load_iris(return_X_y=True)
    >>> forest = RandomForestClassifier(n_estimators=3, max_depth=2, random_state=0).fit(X, y)
    >>> model = satdt.born_again(forest)
    >>> bool((model.predict(X) == forest.predict(X)).all())
    True
    """
    started = time.perf_counter()
    _check_options(objective, time_limit)
    forest = load_ensemble(ensemble, vote)
    on_event = _log_event if verbose else None
    with _logging(verbose):
        return born_again_forest(forest, objective, time_limit, started=started, on_event=on_event)


def _check_options(objective: Any, time_limit: Any) -> None:
    if objective not in BORN_AGAIN_OBJECTIVES:
        raise ParameterError(
            f"objective must be one of {list(BORN_AGAIN_OBJECTIVES)}, got {objective!r}"
        )
    _check_time_limit(time_limit)


def born_again_forest(
    forest: Forest,
    objective: str = "depth",
    time_limit: float | None = None,
    *,
    started: float | None = None,
    on_event: Callable[[Event], None] | None = None,
) -> OptimalTreeClassifier:
    """:func:`born_again` of a :class:`Forest`, the time limit counted from ``started`` (a
    ``time.perf_counter()`` value, default now; the command line passes its own start) and
    every event passed to ``on_event`` (the command line's live status line)."""
    _check_options(objective, time_limit)
    limit = _check_time_limit(time_limit)
    recorder = Recorder(SATDT_OBJECTIVE[objective], on_event=on_event, start=started)
    deadline = None if limit is None else recorder.start + limit
    result = born_again_search(forest, objective, deadline=deadline, recorder=recorder)
    tree = result.model
    model = OptimalTreeClassifier(
        objective=SATDT_OBJECTIVE[objective],
        # depth then size: the fewest nodes among the trees of the depth found
        max_depth=tree.depth if objective == "depth_then_size" else None,
        time_limit=limit,
        missing="error",  # faithful on the forest's inputs: numbers, never a missing cell
    )
    names = list(forest.feature_names)
    model.schema_ = Schema.from_columns([ColumnSpec(name, NUMERIC) for name in names], TARGET)
    model.feature_names_in_ = np.asarray(names, dtype=object)
    model.n_features_in_ = forest.n_features
    model.classes_ = np.asarray(forest.classes)
    model.tree_ = tree
    model.result_ = result
    model.method_ = METHOD
    model.forest_ = forest
    if not result.proven_optimal:
        why = f" ({result.stop_reason})" if result.stop_reason else ""
        warnings.warn(
            f"born-again search stopped early{why}: returning the best faithful tree found "
            f"({result.objective} {result.objective_value:g}, lower bound "
            f"{result.lower_bound:g}), not proven optimal",
            NotProvenWarning,
            stacklevel=user_stacklevel(),
        )
    return model


def _log_event(event: Event) -> None:
    if isinstance(event, Progress):
        _LOG.info("%s", event.step)


class _logging:
    """With ``verbose``, the logger's INFO lines on stderr for the call, unless logging is
    configured already (a handler on the logger or the root)."""

    def __init__(self, verbose: bool) -> None:
        self.verbose = verbose
        self.handler: logging.Handler | None = None
        self.level = _LOG.level

    def __enter__(self) -> None:
        if not self.verbose:
            return
        if _LOG.level == logging.NOTSET or _LOG.level > logging.INFO:
            _LOG.setLevel(logging.INFO)
        if not (_LOG.handlers or logging.getLogger().handlers):
            self.handler = logging.StreamHandler(sys.stderr)
            self.handler.setFormatter(logging.Formatter("satdt: %(message)s"))
            _LOG.addHandler(self.handler)

    def __exit__(self, *exc: object) -> None:
        if self.handler is not None:
            _LOG.removeHandler(self.handler)
        _LOG.setLevel(self.level)
