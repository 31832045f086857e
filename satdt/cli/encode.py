"""``satdt encode`` (a dataset's SAT formula as commented DIMACS CNF) and ``satdt decode``
(a solver's answer to it back into a tree)."""

from __future__ import annotations

import argparse
from pathlib import Path

from ..core.errors import SatdtError
from .files import read_training, write_output
from .messages import EXIT_OK
from .render import leaves_phrase


def encode_command(args: argparse.Namespace) -> int:
    """Write the formula of a perfect tree (``--depth``) or of a diagram skeleton (``--diagram``)."""
    if args.diagram is not None:
        from ..sat.diagram import encode_diagram_dimacs

        if args.depth is not None:
            raise SatdtError("--depth is for trees; a diagram's layers are given by --diagram")
        try:
            widths = [int(w) for w in args.diagram.split(",")]
        except ValueError:
            raise SatdtError(
                f"--diagram takes integers separated by commas, got {args.diagram!r}"
            ) from None
        if args.max_nodes is not None:
            raise SatdtError(
                "--max-nodes counts a tree's nodes, leaves included; a diagram's decision "
                "nodes are capped by --max-splits"
            )
        text = encode_diagram_dimacs(read_training(args), widths, max_splits=args.max_splits)
        write_output(text, args.output)
        return EXIT_OK
    from ..sat.dimacs import encode_dimacs

    if args.depth is None:
        raise SatdtError("give --depth K (a tree) or --diagram W0,W1,... (a diagram)")
    if args.max_splits is not None:
        raise SatdtError("--max-splits caps a diagram (--diagram); a tree's size is --max-nodes")
    write_output(
        encode_dimacs(read_training(args), args.depth, max_nodes=args.max_nodes), args.output
    )
    return EXIT_OK


def decode_command(args: argparse.Namespace) -> int:
    """Print the tree a solver's answer describes; write it as JSON with ``-o``."""
    from ..sat.dimacs import decode_dimacs

    tree = decode_dimacs(
        _read_text(args.formula, "a CNF file"), _read_text(args.solution, "a solver output")
    )
    print(tree.export_text())
    print(f"depth: {tree.depth}\nnodes: {tree.n_nodes} ({leaves_phrase(tree)})")
    if args.output:
        write_output(tree.to_json(indent=1) + "\n", args.output)
    return EXIT_OK


def _read_text(path: str, what: str) -> str:
    try:
        return Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise SatdtError(f"file not found: {path} (expected {what}); check the path") from None
    except IsADirectoryError:
        raise SatdtError(f"{path} is a directory, not {what}") from None
    except UnicodeDecodeError:
        raise SatdtError(f"{path} is not a text file (not UTF-8): expected {what}") from None
