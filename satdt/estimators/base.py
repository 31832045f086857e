"""SatdtEstimator: what satdt's estimators share, scikit-learn compatible.

The signature, the docstring's Parameters section and the checks come from the estimator's
table of parameters (:mod:`satdt.core.params`); the data are validated and prepared once
(:mod:`satdt.prepare.prepared`); predictions, probabilities, leaves and paths come from the fitted
model. scikit-learn is optional: the estimators implement the parts of its protocol they
need (``get_params``/``set_params``, tags, ``score``) themselves.
"""

from __future__ import annotations

import inspect
import os
import re
import textwrap
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from ..core.errors import (
    REMOVED_IN,
    ParameterError,
    not_fitted_error,
    renamed,
)
from ..core.params import Param
from ..data import Dataset, check_complete
from ..prepare.costs import cost_matrix
from ..prepare.prepared import Prepared, prepare
from ..prepare.validate import class_weights, design_for, sample_weights
from ..search.registry import METHODS, method_params
from ..task.events import Event
from ..task.objectives import OBJECTIVES
from ..task.result import Recorder


def resolve_n_jobs(n_jobs: Any) -> int:
    """The number of cores ``n_jobs`` asks for, scikit-learn's way (None: 1; -1: every core;
    -2: all but one), at most the machine's."""
    cores = os.cpu_count() or 1
    if n_jobs is None:
        return 1
    if isinstance(n_jobs, bool) or not isinstance(n_jobs, int | np.integer) or n_jobs == 0:
        raise ParameterError(f"n_jobs must be a non-zero integer or None, got {n_jobs!r}")
    wanted = int(n_jobs) if n_jobs > 0 else cores + 1 + int(n_jobs)
    return max(1, min(wanted, cores))


# The default of a renamed parameter's old name: not set.
DEPRECATED = "deprecated"


def _is_deprecated_default(value: Any) -> bool:
    return isinstance(value, str) and value == DEPRECATED


def _documented_type(param: Param) -> str:
    """The numpydoc type line of a parameter: its type and its default."""
    return f"{param.type_name()}, default={param.default!r}"


def _literal_names(text: str) -> str:
    """Help text for a docstring: fitted attributes (``method_``, ``result_.stats``) as
    literals, which reStructuredText would read as links."""
    return re.sub(r"(?<![`\w])(\w+_(?:\.\w+)*)(?![`\w])", r"``\1``", text)


class SatdtEstimator:
    """What every satdt estimator shares: parameters from a table, checks, data preparation.

    A subclass declares its parameters in ``_PARAMS`` (:class:`satdt.core.params.Param`: name,
    default, values, help); the method parameters of :mod:`satdt.search.registry` are added after
    them. ``__init__`` only stores keyword arguments, as scikit-learn requires; its signature,
    the docstring's parameter list and the checks of :meth:`_check_params` come from the same
    table.
    """

    _PARAMS: ClassVar[tuple[Param, ...]] = ()
    # parameters renamed: old name -> new name; the old one is still taken (its default is
    # DEPRECATED) with a FutureWarning until satdt errors.REMOVED_IN
    _RENAMED: ClassVar[dict[str, str]] = {}
    _fitted_attribute: ClassVar[str] = "model_"
    # what scikit-learn before 1.6 reads (is_classifier, its checks); 1.6 on: __sklearn_tags__
    _estimator_type: ClassVar[str] = "classifier"

    @classmethod
    def _method_params(cls) -> dict[str, Param]:
        """The parameters of the searches this estimator runs (the table's, for trees)."""
        return method_params()

    @classmethod
    def _table(cls) -> dict[str, Param]:
        """Every parameter of the table by name: the estimator's, then its methods'."""
        return {param.name: param for param in cls._PARAMS} | cls._method_params()

    @classmethod
    def _defaults(cls) -> dict[str, Any]:
        defaults = {name: param.default for name, param in cls._table().items()}
        defaults["on_improve"] = None
        for old in cls._RENAMED:
            defaults[old] = DEPRECATED
        return defaults

    def _param(self, name: str, warn: bool = False) -> Any:
        """The value of parameter ``name``, or of the old name it replaces when that was set
        (``warn``: with a FutureWarning, which :meth:`_check_params` gives once per fit)."""
        for old, new in self._RENAMED.items():
            if new == name and not _is_deprecated_default(getattr(self, old, DEPRECATED)):
                if warn:
                    renamed(old, new, type(self).__name__)
                return getattr(self, old)
        return getattr(self, name)

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "__init__" in cls.__dict__:
            return  # a subclass's own __init__ is kept (it stores its parameters itself)
        defaults = cls._defaults()

        def __init__(self: SatdtEstimator, **params: Any) -> None:
            for name in params:
                if name not in defaults:
                    raise TypeError(
                        f"{cls.__name__}.__init__() got an unexpected keyword argument {name!r}"
                    )
            for name, default in defaults.items():
                setattr(self, name, params.get(name, default))

        self_param = inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)
        __init__.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
            [self_param]
            + [
                inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default)
                for name, default in defaults.items()
            ]
        )
        __init__.__qualname__ = f"{cls.__name__}.__init__"
        cls.__init__ = __init__  # type: ignore[method-assign]
        documented = [
            (param.name, _documented_type(param), f"{param.help} Values: {param.describe()}.")
            for param in cls._PARAMS
        ]
        for name, param in cls._method_params().items():
            users = [m.name for m in METHODS.values() if param in m.params]
            documented.append(
                (
                    name,
                    _documented_type(param),
                    f"Method {', '.join(users)}: {param.help} ({param.describe()}).",
                )
            )
        documented.append(
            (
                "on_improve",
                "callable, default=None",
                "Called with the SearchResult on every new incumbent.",
            )
        )
        for old, new in cls._RENAMED.items():
            documented.append(
                (old, "deprecated", f"Renamed {new} (same meaning); removed in {REMOVED_IN}.")
            )
        lines = [
            f"    {name} : {kind}\n"
            + textwrap.fill(
                _literal_names(text), 92, initial_indent=" " * 8, subsequent_indent=" " * 8
            )
            for name, kind, text in documented
        ]
        cls.__doc__ = (cls.__doc__ or "") + "\n    Parameters\n    ----------\n" + "\n".join(lines)

    # ------------------------------------------------------------------ scikit-learn protocol
    @classmethod
    def _param_names(cls) -> list[str]:
        """The table's parameters, and those a subclass's own ``__init__`` adds."""
        names = list(cls._defaults())
        own = inspect.signature(cls.__init__).parameters.values()
        names += [
            p.name
            for p in own
            if p.name != "self"
            and p.name not in names
            and p.kind not in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
        ]
        return names

    def get_params(self, deep: bool = True) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self._param_names()}

    def set_params(self, **params: Any) -> SatdtEstimator:
        valid = self._param_names()
        for name, value in params.items():
            if name not in valid:
                raise ValueError(
                    f"invalid parameter {name!r} for {type(self).__name__}; valid: {valid}"
                )
            setattr(self, name, value)
        return self

    def __repr__(self) -> str:
        defaults = self._defaults()
        changed = [
            f"{k}={v!r}"
            for k, v in self.get_params().items()
            if defaults.get(k) is not v
            and (isinstance(v, np.ndarray) or bool(np.all(defaults.get(k) != v)))
        ]
        return f"{type(self).__name__}({', '.join(changed)})"

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        """What Jupyter shows: the repr above, and once fitted the model drawn as SVG
        (:func:`satdt.plot.model_svg`; text only without matplotlib)."""
        bundle = {"text/plain": repr(self)}
        fitted = getattr(self, self._fitted_attribute, None)
        if fitted is not None:
            from ..plot import model_svg

            svg = model_svg(fitted)
            if svg is not None:
                bundle["image/svg+xml"] = svg
        return bundle

    def _more_tags(self) -> dict[str, Any]:  # scikit-learn before 1.6
        return {"requires_y": True, "allow_nan": getattr(self, "missing", None) == "split"}

    def __sklearn_tags__(self):  # only scikit-learn calls this, so it may import it
        from sklearn.utils import ClassifierTags, InputTags, Tags, TargetTags

        return Tags(
            estimator_type="classifier",
            target_tags=TargetTags(required=True),
            classifier_tags=ClassifierTags(),
            input_tags=InputTags(allow_nan=getattr(self, "missing", None) == "split"),
        )

    # ------------------------------------------------------------------ checks
    def _check_params(self) -> None:
        """Check every parameter of the estimator's table against its rules
        (:class:`satdt.core.params.Param`); a renamed one under whichever name was set."""
        for param in self._PARAMS:
            param.check(self._param(param.name, warn=True))

    # ------------------------------------------------------------------ fitting

    def _check_missing(self, dataset: Dataset) -> None:
        """Refuse a table with missing cells when ``missing="error"``."""
        if self.missing == "error":
            check_complete(dataset)

    def _prepare(
        self,
        dataset: Dataset,
        sample_weight: Any,
        on_event: Callable[[Event], None] | None,
        started: float | None,
    ) -> Prepared:
        """Prepare the data of one fit and set the fitted schema attributes."""
        self._check_missing(dataset)
        recorder = Recorder(
            self.objective, on_improve=self.on_improve, on_event=on_event, start=started
        )
        deadline = None if self.time_limit is None else recorder.start + float(self.time_limit)
        if self.class_weight is not None:
            sample_weight = sample_weights(sample_weight, len(dataset.y)) * class_weights(
                self.class_weight, dataset.y
            )
        data = prepare(
            dataset,
            sample_weight,
            consistency=OBJECTIVES[self.objective].consistency,
            resolve=self.resolve,
            recorder=recorder,
            deadline=deadline,
            max_thresholds=self.max_thresholds,
            max_memory_mb=float(self.max_memory_mb),
        )
        self.schema_ = dataset.schema
        self.feature_names_in_ = np.asarray(dataset.schema.feature_names, dtype=object)
        self.n_features_in_ = data.X.shape[1]
        self.classes_ = data.classes
        if getattr(self, "cost_matrix", None) is not None:
            C = cost_matrix(self.cost_matrix, data.classes)
            data = data.with_costs(C, int(getattr(self, "min_support", 1)))
        return data

    # ------------------------------------------------------------------ prediction
    def _fitted_model(self) -> Any:
        model = getattr(self, self._fitted_attribute, None)
        if model is None:
            raise not_fitted_error(
                f"this {type(self).__name__} is not fitted yet; call fit(X, y) before using it"
            )
        return model

    def _design(self, X: Any) -> np.ndarray:
        """Rows to predict as the fitted design matrix, encoded with the fitted schema.

        Missing cells are kept (the tree routes them) only by an estimator with
        ``missing="split"``; the others refuse them, as they refused them when fitting.
        """
        self._fitted_model()
        design = design_for(X, self.schema_, self.n_features_in_, type(self).__name__)
        if getattr(self, "missing", "error") != "split" and np.isnan(design).any():
            raise ValueError(
                f"Input X contains NaN (a missing value), which this {type(self).__name__} "
                "refuses (fitted with missing='error', or a diagram): impute the missing values"
            )
        return design

    def predict(self, X: Any) -> np.ndarray:
        """The label predicted for each row of ``X``.

        Parameters
        ----------
        X : array-like or DataFrame
            Rows with the columns given to ``fit``.

        Returns
        -------
        numpy.ndarray
            One label per row.
        """
        return self._fitted_model().predict(self._design(X))

    def predict_proba(self, X: Any) -> np.ndarray:
        """Training class frequencies of the leaf (or terminal) each row reaches.

        Parameters
        ----------
        X : array-like or DataFrame
            Rows with the columns given to ``fit``.

        Returns
        -------
        numpy.ndarray
            ``(n_rows, n_classes)``, columns in ``classes_`` order.
        """
        return self._fitted_model().predict_proba(self._design(X))

    def apply(self, X: Any) -> np.ndarray:
        """Where each row ends.

        Parameters
        ----------
        X : array-like or DataFrame
            Rows with the columns given to ``fit``.

        Returns
        -------
        numpy.ndarray
            The node each row ends at: a tree's leaf (its node index, as scikit-learn's
            ``apply``), a diagram's terminal (:meth:`Diagram.apply`; ``Diagram.decision_path``
            gives the nodes a row visits).
        """
        return self._fitted_model().apply(self._design(X))

    def explain(
        self,
        X: Any,
        rows: Any = None,
        *,
        enumerate_axps: bool = False,
        limit: int = 100,
        time_limit: float | None = None,
    ) -> list[Any]:
        """Why the fitted model predicts what it does (:func:`satdt.explain`).

        Parameters
        ----------
        X : array-like or DataFrame
            Rows with the columns given to ``fit``.
        rows : sequence of int, optional
            The rows to explain (default: all).
        enumerate_axps : bool, default=False
            Also list every abductive explanation, smallest first.
        limit : int, default=100
            At most this many abductive explanations per row.
        time_limit : float, optional
            Seconds per row for the enumeration.

        Returns
        -------
        list of Explanation
            One per row: the path, abductive and contrastive explanations on the user's
            columns, each checked against the model.
        """
        from ..explanations.explainer import explain

        return explain(
            self, X, rows, enumerate_axps=enumerate_axps, limit=limit, time_limit=time_limit
        )

    def report(
        self, path: str | os.PathLike[str], *, X: Any = None, rows: int | Sequence[int] = 3
    ) -> Path:
        """Write the fit as one self-contained HTML page (``satdt.report.report_html``).

        The page, opened by double-click with no network, shows the data, the model drawn,
        the search's outcome and statistics, the bounds over time, the counterexample-guided
        loop step by step (SAT searches) and the explanations of a few rows.

        Parameters
        ----------
        path : str or path-like
            The ``.html`` file to write.
        X : array-like, DataFrame or Dataset, optional
            Rows with the columns given to ``fit``, some of which are explained: the training
            table, say (read by :func:`satdt.read_csv`, its rows and the loop's
            counterexamples are named by their lines in the file). Without it, no row is
            explained.
        rows : int or sequence of int, default=3
            The rows of ``X`` to explain: their indices, or how many (chosen to cover the
            classes predicted).

        Returns
        -------
        pathlib.Path
            The file written.

        Raises
        ------
        NotFittedError
            If the estimator is not fitted.
        SatdtError
            If ``path`` is not an ``.html`` file or cannot be written, or ``rows`` does not
            name rows of ``X``.
        """
        from ..report import save_report

        model = self._fitted_model()
        row_names, title = None, type(self).__name__
        if isinstance(X, Dataset):  # already the design matrix
            design, row_names = X.X, [f"line {n}" for n in X.line_numbers]
            title = Path(X.source).name if X.source else title
        else:
            design = None if X is None else self._design(X)
        return save_report(
            path,
            model,
            self.result_,
            method=self.method_,
            X=design,
            rows=rows,
            row_names=row_names,
            title=title,
        )

    def score(self, X: Any, y: Any, sample_weight: Any = None) -> float:
        """Mean (weighted) accuracy on ``(X, y)``.

        Parameters
        ----------
        X : array-like or DataFrame
            Rows with the columns given to ``fit``.
        y : array-like
            Their labels.
        sample_weight : array-like, optional
            Row weights.

        Returns
        -------
        float
            The share of the rows' weight predicted correctly.
        """
        correct = self.predict(X) == np.asarray(y)
        return float(np.average(correct, weights=sample_weights(sample_weight, len(correct))))
