"""Formal explanations of a model's predictions: abductive (AXp) and contrastive (CXp).

:func:`explain` (:mod:`satdt.explanations.explainer`) explains rows of a tree or a diagram,
each :class:`Explanation` (:mod:`satdt.explanations.explanation`) stated on the user's columns
and checked against the model; :mod:`satdt.explanations.hitting` holds the minimal hitting
sets behind the AXps; :func:`redundancy` measures how many of a path's tests a prediction
does not need. Names are imported on first use, so importing this package is cheap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..core.lazy import lazy_exports

if TYPE_CHECKING:
    from .explainer import Explainer, explain, redundancy
    from .explanation import Condition, Contrast, Explanation

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "explain": "explainer",
        "redundancy": "explainer",
        "Explainer": "explainer",
        "Explanation": "explanation",
        "Contrast": "explanation",
        "Condition": "explanation",
    },
)

__all__ = ["Condition", "Contrast", "Explainer", "Explanation", "explain", "redundancy"]
