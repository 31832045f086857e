"""Misclassification costs (``cost_matrix``) as an exact reduction to class weights.

A cost matrix ``C`` gives ``C[a, b] >= 0``, the cost of predicting class ``b`` for a row of
class ``a`` (zero diagonal). The error objective then minimises ``sum_i w_i C[y_i, pred_i]``
(plus the leaf penalty), and a leaf predicts the class of least cost for its rows.

Every error search of satdt minimises a weighted error, ``sum_c g_c - max_c g_c`` per leaf,
where ``g_c`` is the weight of class ``c`` in the leaf. :func:`reduce_costs` rewrites each row
``i`` into up to ``K`` rows with the same features, one per class ``c``, of weight
``v_ic = w_i (A_i - C[y_i, c])`` (zero entries dropped), with ``A_i >= max_c C[y_i, c]`` a
per-row constant. In a leaf, ``g_c = sum_i v_ic`` and

    sum_c g_c - max_c g_c = min_c sum_i w_i C[y_i, c] + sum_i (sum_c v_ic - w_i A_i),

that is, the leaf's least cost plus a constant per row: every tree's weighted error on the
rewritten rows is its cost plus one constant (:attr:`CostReduction.offset`), so the argmin is
the same tree, a leaf's heaviest class is its least-cost class, and every bound that holds
for weighted errors (the searches' lower bounds, irreducible errors, similarity bounds)
holds unchanged. No search, bound or kernel changes.

``A_i = max_c C[y_i, c]`` makes at least one entry zero, so a row becomes at most ``K - 1``
rows; on two classes exactly one, of weight ``w_i C[y_i, other]``: the cost matrix is then the
class weights it stands for, and the searches see the same rows. A minimum support counts
the user's rows, so every row must become the same number ``k`` of rows (then a leaf holds
``s`` rows exactly when it holds ``k s`` rewritten ones): when the rows would become different
numbers of rows and ``min_support > 1``, or a row would vanish (every prediction costs it
nothing), ``A_i = max_c C[y_i, c] + max C`` makes every entry positive, ``k = K``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..core.errors import ParameterError
from ..core.params import label_value


def is_cost_matrix_like(value: Any) -> bool:
    """Whether ``value`` has a cost matrix's form: a mapping, or a square 2-D array of numbers
    (its values are checked against the classes when a fit sees them, :func:`cost_matrix`)."""
    if isinstance(value, Mapping):
        return True
    if isinstance(value, str | bytes):
        return False
    try:
        array = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        return False
    return array.ndim == 2


def read_cost_matrix(text: str) -> Any:
    """A command-line cost matrix: rows separated by ``;`` and costs by ``,`` (``0,1;5,0``),
    JSON text (a list of rows or ``{true label: {predicted label: cost}}``), or the name of a
    JSON file holding either. None when ``text`` is none of these (the parameter's check then
    says what it takes)."""
    source = text
    if not text.lstrip().startswith(("[", "{")) and ";" not in text and Path(text).is_file():
        source = Path(text).read_text(encoding="utf-8")
    if source.lstrip().startswith(("[", "{")):
        try:
            value = json.loads(source)
        except json.JSONDecodeError:
            return None
        if isinstance(value, dict):  # JSON keys are strings: labels as the data read them
            return {
                label_value(str(true)): {label_value(str(p)): c for p, c in row.items()}
                if isinstance(row, dict)
                else row
                for true, row in value.items()
            }
        return value
    try:
        return [
            [float(cell) for cell in row.split(",")] for row in source.split(";") if row.strip()
        ]
    except ValueError:
        return None


def _label_key(label: Any) -> Any:
    """A label as a dict key that matches NumPy scalars and Python values alike."""
    value = label.item() if isinstance(label, np.generic) else label
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def _from_mapping(value: Mapping, classes: np.ndarray) -> np.ndarray:
    """``{true label: {predicted label: cost}}`` as a matrix; pairs not named cost 1."""
    known = {_label_key(label): i for i, label in enumerate(classes)}
    K = len(classes)
    C = 1.0 - np.eye(K)
    shown = ", ".join(map(str, classes[:10])) + (", ..." if K > 10 else "")
    for true, row in value.items():
        if not isinstance(row, Mapping):
            raise ParameterError(
                f"cost_matrix as a dict maps each true label to a dict {{predicted label: "
                f"cost}}; cost_matrix[{true!r}] is {row!r}: write e.g. "
                "{'sick': {'healthy': 5}, 'healthy': {'sick': 1}}"
            )
        for predicted, cost in row.items():
            unknown = [lab for lab in (true, predicted) if _label_key(lab) not in known]
            if unknown:
                raise ParameterError(
                    f"cost_matrix names label {unknown[0]!r}, which the training labels "
                    f"({shown}) do not have: name only labels of the data"
                )
            try:
                C[known[_label_key(true)], known[_label_key(predicted)]] = float(cost)
            except (TypeError, ValueError):
                raise ParameterError(
                    f"cost_matrix[{true!r}][{predicted!r}] must be a number >= 0, got {cost!r}"
                ) from None
    return C


def cost_matrix(value: Any, classes: np.ndarray) -> np.ndarray:
    """The ``K x K`` float matrix of costs that ``value`` gives for these classes (the fitted
    ``classes_``, rows the true class, columns the predicted one), checked.

    ``value`` is an array-like (rows and columns in ``classes_`` order) or a dict
    ``{true label: {predicted label: cost}}`` (pairs not named cost 1, the plain error).
    Raises :class:`~satdt.core.errors.ParameterError` naming the rule broken: not square, a class
    count other than the data's, a label the data lack, a negative or non-finite cost, a
    nonzero diagonal, or no positive cost at all.
    """
    classes = np.asarray(classes)
    K = len(classes)
    shown = ", ".join(map(str, classes[:10])) + (", ..." if K > 10 else "")
    if isinstance(value, Mapping):
        C = _from_mapping(value, classes)
    else:
        try:
            C = np.array(value, dtype=np.float64)
        except (TypeError, ValueError):
            raise ParameterError(
                f"cost_matrix must be a square array of numbers or a dict, got {value!r}"
            ) from None
        if C.ndim != 2 or C.shape[0] != C.shape[1]:
            raise ParameterError(
                f"cost_matrix must be square (n_classes x n_classes), got shape {C.shape}: "
                "row a, column b is the cost of predicting b for a row of class a"
            )
        if C.shape[0] != K:
            raise ParameterError(
                f"cost_matrix is {C.shape[0]} x {C.shape[0]} but the training labels have "
                f"{K} classes ({shown}): give a {K} x {K} matrix, rows and columns in that "
                "order (classes_), or a dict keyed by labels"
            )
    if not np.isfinite(C).all() or (C < 0).any():
        bad = C[~(np.isfinite(C) & (C >= 0))][0]
        raise ParameterError(
            f"cost_matrix entries must be finite numbers >= 0, found {bad:g}: a cost is what "
            "a wrong prediction loses"
        )
    diagonal = np.diag(C)
    if (diagonal != 0).any():
        i = int(np.flatnonzero(diagonal)[0])
        raise ParameterError(
            f"cost_matrix must have a zero diagonal (a right prediction costs nothing), found "
            f"{diagonal[i]:g} for class {_label_key(classes[i])!r}: set it to 0"
        )
    if K > 1 and not (C > 0).any():
        raise ParameterError(
            "cost_matrix has no positive cost, so every tree costs 0: give the wrong "
            "predictions that matter a cost > 0"
        )
    return C


@dataclass(frozen=True)
class CostReduction:
    """Rows rewritten for a cost matrix (:func:`reduce_costs`).

    ``rows[j]`` is the user's row behind rewritten row ``j``, ``y[j]`` its class and
    ``weight[j]`` its weight; every user row becomes ``factor`` rows when ``factor`` is not
    0 (0: different numbers, only with ``min_support == 1``). A tree's weighted error on the
    rewritten rows is its cost on the user's rows plus ``offset``.
    """

    matrix: np.ndarray
    rows: np.ndarray
    y: np.ndarray
    weight: np.ndarray
    factor: int
    offset: float


def reduce_costs(
    y: np.ndarray, weight: np.ndarray, C: np.ndarray, min_support: int = 1
) -> CostReduction:
    """Rewrite rows of classes ``y`` and weights ``weight`` (all > 0) for the cost matrix
    ``C`` so that weighted error = cost + a constant (the module's reduction).

    With ``A_i = max_c C[y_i, c]`` each row keeps the classes it does not cost the most to
    predict; when that leaves a row with none, or ``min_support > 1`` and rows with
    different numbers, every row keeps every class (``A_i`` raised by ``max C``, or by 1 for
    the ``1 x 1`` matrix of a single class).
    """
    y = np.asarray(y, dtype=np.int64)
    w = np.asarray(weight, dtype=np.float64)
    R = C[y]  # the cost of each prediction for each row
    A = R.max(axis=1)
    V = w[:, None] * (A[:, None] - R)
    kept = (V > 0).sum(axis=1)
    factor = int(kept[0]) if len(kept) and (kept == kept[0]).all() else 0
    if len(kept) and (kept.min() == 0 or (min_support > 1 and factor == 0)):
        A = A + (float(C.max()) or 1.0)  # 1 when no cost is positive: a single class
        V = w[:, None] * (A[:, None] - R)
        factor = C.shape[0]
    rows, classes = np.nonzero(V > 0)
    offset = float(V.sum() - (w * A).sum())
    return CostReduction(C, rows, classes.astype(np.int64), V[rows, classes], factor, offset)


def tree_cost(predicted: np.ndarray, y: np.ndarray, weight: np.ndarray, C: np.ndarray) -> float:
    """The weighted cost ``sum_i w_i C[y_i, predicted_i]`` of predictions (class indices)."""
    return float(np.dot(np.asarray(weight, dtype=np.float64), C[y, predicted]))


def leaf_cost(counts: np.ndarray, value: np.ndarray, C: np.ndarray) -> float:
    """The cost recorded in leaves' class weights ``counts`` ``(L, K)`` predicting ``value``."""
    return float((counts * C[:, value].T).sum())


def model_cost(model: Any, C: np.ndarray) -> float:
    """The weighted cost recorded in a model's training counts: a tree's leaves (``counts``,
    ``value``) or a diagram's terminals (``terminal_counts``, terminal k predicting class k)."""
    terminal_counts = getattr(model, "terminal_counts", None)
    if terminal_counts is not None:
        return leaf_cost(terminal_counts, np.arange(len(terminal_counts)), C)
    leaves = model.left < 0
    return leaf_cost(model.counts[leaves], model.value[leaves], C)
