"""The models satdt learns and what they do on their own: predict, explain, save, export.

:class:`Tree` (:mod:`satdt.models.tree`, its arrays' rules in :mod:`satdt.models.tree_arrays`)
and :class:`Diagram` (:mod:`satdt.models.diagram`, held to the rules of
:mod:`satdt.models.diagram_checks`) share one base, :class:`Model` (:mod:`satdt.models.base`:
predictions, paths, JSON read as untrusted input through :mod:`satdt.models.fields`);
:mod:`satdt.models.files` reads and writes model files; :mod:`satdt.models.export` turns
models into scikit-learn's and ONNX's. The models import no search code and no plotting code: the
searches build them, :mod:`satdt.plot` draws them (a notebook's picture through the hook of
:mod:`satdt.models.display`). Names are imported on first use, so importing this package is
cheap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..core.lazy import lazy_exports

if TYPE_CHECKING:
    from .base import Model
    from .diagram import Diagram
    from .diagram_checks import DiagramError
    from .export import to_onnx, to_sklearn
    from .files import MODEL_KINDS, load_model, save_model
    from .tree import Tree

_PUBLIC = {
    "Tree": "tree",
    "Diagram": "diagram",
    "DiagramError": "diagram_checks",
    "Model": "base",
    "MODEL_KINDS": "files",
    "load_model": "files",
    "save_model": "files",
    "to_sklearn": "export",
    "to_onnx": "export",
}


__getattr__, __dir__ = lazy_exports(__name__, _PUBLIC)


__all__ = [
    "MODEL_KINDS",
    "Diagram",
    "DiagramError",
    "Model",
    "Tree",
    "load_model",
    "save_model",
    "to_onnx",
    "to_sklearn",
]
