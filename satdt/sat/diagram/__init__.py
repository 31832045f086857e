"""Decision diagrams with logic: the smallest consistent diagram by SAT, the best one by MaxSAT.

See ``encodings/diagram.md`` for the formulas (D1)-(D9). :mod:`.formula` holds the skeleton,
its variables and clause generators; :mod:`.size` the counterexample-guided loop for the
smallest consistent diagram; :mod:`.maxsat` objective (18) by MaxSAT with the paper's
extensions; :mod:`.cnf` the DIMACS export.
"""

from .cnf import DiagramCNF, diagram_cnf, encode_diagram_dimacs
from .formula import (
    DiagramFormula,
    DiagramResult,
    Names,
    Skeleton,
    build_diagram,
    in_design_units,
    layer_caps,
    tree_skeleton,
)
from .maxsat import (
    MaxSatRun,
    estimated_clauses,
    integer_weights,
    maxsat_formula,
    minimum_error_diagram,
)
from .size import (
    DIAGRAM_COUNTEREXAMPLE_POLICIES,
    DiagramLoop,
    SizeRun,
    compact,
    minimum_size_diagram,
)

__all__ = [
    "DIAGRAM_COUNTEREXAMPLE_POLICIES",
    "DiagramCNF",
    "DiagramFormula",
    "DiagramLoop",
    "DiagramResult",
    "MaxSatRun",
    "Names",
    "SizeRun",
    "Skeleton",
    "build_diagram",
    "compact",
    "diagram_cnf",
    "encode_diagram_dimacs",
    "estimated_clauses",
    "in_design_units",
    "integer_weights",
    "layer_caps",
    "maxsat_formula",
    "minimum_error_diagram",
    "minimum_size_diagram",
    "tree_skeleton",
]
