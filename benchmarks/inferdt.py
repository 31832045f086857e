"""What the inferdt benchmarks share: where the data is, the common options, the file list."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "inferdt"


def parser_with_files(description: str, files: list[str]) -> argparse.ArgumentParser:
    """An argument parser with --files, --no-splits and --cap (120 s per run)."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--files", nargs="*", default=files, help="dataset names (without .csv)")
    parser.add_argument("--no-splits", action="store_true", help="skip the 5-fold training splits")
    parser.add_argument("--cap", type=float, default=120.0, help="time limit per run, seconds")
    return parser


def dataset_names(files: list[str], split_files: tuple[str, ...], splits: bool) -> list[str]:
    """The full files, then the training splits of those that have them; exits if no data."""
    if not DATA.is_dir():
        sys.exit(f"benchmark data not found: expected {DATA.name}/ under ../shared/data")
    names = list(files)
    if splits:
        names += [f"{name}.csv.train{k}" for name in split_files if name in files for k in range(5)]
    return names
