"""The one exception type of satdt: every user mistake raises a subclass of :class:`SatdtError`."""

from __future__ import annotations

import os
import sys


class SatdtError(Exception):
    """Base class for errors caused by input or options; the message says the rule, the value and the fix."""


class DataError(SatdtError, ValueError):
    """The data cannot be read or used as given (missing file, ragged rows, missing values, ...)."""


class ParameterError(SatdtError, ValueError, TypeError):
    """A parameter of an estimator or a search is outside its rule (a value or a type):
    like scikit-learn's ``InvalidParameterError``, both a ``ValueError`` and a
    ``TypeError``, so that code written for scikit-learn's estimators catches it."""


class ModelError(DataError):
    """A model breaks a rule of its kind (a tree's node with two parents, a NaN threshold, a
    class index beyond the classes), or a model's file or dictionary is damaged."""


class ContradictionError(DataError):
    """Rows with identical features carry different labels, so no consistent tree exists.

    Parameters
    ----------
    message : str
        The message: the groups of rows, their lines and labels, and how to go on.
    groups : list of list of int
        Each group of contradicting rows, as the 1-based lines of its rows in the source
        file; kept as the attribute ``groups``.
    """

    def __init__(self, message: str, groups: list[list[int]]) -> None:
        super().__init__(message)
        self.groups = groups


class InfeasibleError(SatdtError):
    """No tree satisfies the requested constraints (e.g. a depth cap below the proven minimum)."""


class TooLargeForSat(SatdtError):
    """A SAT formula too large for its memory or counter limits: a problem for the MILP."""


class NotFittedError(SatdtError, ValueError, AttributeError):
    """A fitted attribute was used before ``fit``."""


def not_fitted_error(message: str) -> NotFittedError:
    """A :class:`NotFittedError`, also an instance of scikit-learn's when scikit-learn is in use.

    satdt never imports scikit-learn itself; when the caller has, its error type is honoured.
    """
    sklearn_exceptions = sys.modules.get("sklearn.exceptions")
    if sklearn_exceptions is None:
        return NotFittedError(message)
    both = type("NotFittedError", (NotFittedError, sklearn_exceptions.NotFittedError), {})
    return both(message)


def data_conversion_warning() -> type[Warning]:
    """scikit-learn's DataConversionWarning when scikit-learn is in use, else UserWarning."""
    sklearn_exceptions = sys.modules.get("sklearn.exceptions")
    return UserWarning if sklearn_exceptions is None else sklearn_exceptions.DataConversionWarning


def user_stacklevel() -> int:
    """The ``stacklevel`` for ``warnings.warn`` that names the caller's first frame outside
    satdt: the user's line, whether they called ``fit`` or ``fit_dataset`` (a fixed level
    would point into the library from one of them)."""
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep  # satdt/
    frame, level = sys._getframe(1), 1
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(package):
        frame, level = frame.f_back, level + 1
    return level


class TimeUp(Exception):
    """The time limit passed while preparing data, building a formula or a model, or inside a
    search (never reaches the user: the estimator returns the best model found so far)."""


# A Ctrl-C noted by the command line's SIGINT handler and not yet seen by a handler of ours.
_interrupt_pending = False


def on_sigint(signum: int, frame: object) -> None:
    """The command line's SIGINT handler: raises KeyboardInterrupt as Python's own does, and
    notes it, because Python drops an exception raised where it cannot propagate (inside an
    import's lock callback it prints "Exception ignored" and goes on): a noted Ctrl-C that
    nobody handled is raised again at the next checkpoint (:func:`honour_interrupt`)."""
    global _interrupt_pending
    _interrupt_pending = True
    raise KeyboardInterrupt


def honour_interrupt() -> None:
    """A checkpoint: raise KeyboardInterrupt for a Ctrl-C that was noted but never handled."""
    global _interrupt_pending
    if _interrupt_pending:
        _interrupt_pending = False
        raise KeyboardInterrupt


def interrupt_pending() -> bool:
    """Whether a noted Ctrl-C has not been raised at a checkpoint nor handled yet."""
    return _interrupt_pending


def interrupt_handled() -> None:
    """Called where a KeyboardInterrupt is handled (the best model returned, the command
    ended): the noted Ctrl-C is dealt with."""
    global _interrupt_pending
    _interrupt_pending = False


# The release that removes what is deprecated now (renamed parameters and attributes).
REMOVED_IN = "0.3"


def renamed(old: str, new: str, owner: str) -> None:
    """Warn that ``owner``'s ``old`` is now ``new`` (a FutureWarning, shown to users)."""
    import warnings

    warnings.warn(
        f"{owner}'s {old!r} is renamed {new!r} (same meaning) and stops working in satdt "
        f"{REMOVED_IN}: use {new}=...",
        FutureWarning,
        stacklevel=user_stacklevel(),
    )


class NotProvenWarning(UserWarning):
    """A search stopped (time limit, interruption) before proving its tree optimal."""


def no_consistent_tree(
    max_depth: int | None, max_leaves: int | None, lower_bound: float, timed_out: bool
) -> InfeasibleError:
    """The error of a consistency search that ends without a tree: proven infeasible
    within ``max_depth`` and ``max_leaves`` (leaves), or ``timed_out`` first."""
    limits = [f"depth at most {max_depth}"] if max_depth is not None else []
    if max_leaves is not None:
        limits.append(f"at most {2 * max_leaves - 1} nodes")
    wanted = "consistent tree of " + " and ".join(limits) if limits else "consistent tree"
    if timed_out:
        return InfeasibleError(
            f"no {wanted} was found before the time limit (no consistent tree has depth below "
            f"{lower_bound:g}); raise time_limit"
        )
    if max_leaves is not None:
        return InfeasibleError(f"no {wanted} exists (proven); relax max_nodes or max_depth")
    return InfeasibleError(
        f"no {wanted} exists: every consistent tree has depth at least {lower_bound:g} (proven); "
        "raise max_depth"
    )
