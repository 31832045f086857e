"""The sections of a report that describe the fit: the data, the model drawn, the search's
outcome and its statistics."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterator
from typing import Any

from ..models.diagram import Diagram
from ..plot.layout import model_picture
from ._fit import Fit
from ._html import Html, capped, esc, more, not_applicable, number, pairs, seconds, section, table
from .svg import picture_svg

MAX_COLUMNS = 60  # design columns listed by name in the data section


def data_section(fit: Fit) -> Html:
    """The table: its rows, its columns, its classes and what preparation made of them."""
    result, names = fit.result, fit.column_names
    classes = list(fit.model.classes)
    weights = fit.class_weights
    facts: list[tuple[str, Any]] = [
        ("training rows", result.preparation.rows or "not known"),
        ("columns (design matrix)", len(names)),
        ("classes", len(classes)),
    ]
    if fit.X is not None:
        facts.append(("rows given to the report", len(fit.X)))
    preparation = result.preparation
    if preparation.binary_features_total:
        facts.append(("binary features x > t possible", preparation.binary_features_total))
        facts.append(("binary features the search saw", preparation.binary_features))
    if preparation.binarization:
        facts.append(("binarization", preparation.binarization))
    if preparation.relabelled_rows:
        facts.append(("rows relabelled (contradictions resolved)", preparation.relabelled_rows))
    if weights is None:
        class_rows = [(label, "not known") for label in classes]
    else:
        class_rows = [(label, number(float(w))) for label, w in zip(classes, weights, strict=True)]
    shown, left_out = capped(names, MAX_COLUMNS)
    body = [
        pairs(facts),
        "<h3>Classes</h3>",
        table(("class", "training weight"), class_rows),
        "<h3>Columns</h3>",
        f'<p class="columns">{", ".join(f"<code>{esc(name)}</code>" for name in shown)}</p>',
        more(left_out, "columns"),
    ]
    body += [not_applicable(note) for note in preparation.notes]
    return section(
        "data",
        "The data",
        "The table the model was fitted on: each row is an example with its class; a "
        "categorical column became one 0/1 column per category, named like 'colour == red'.",
        body,
    )


def model_section(fit: Fit) -> Html:
    """The model drawn (scrollable and zoomable), and as indented text."""
    model = fit.model
    kind = "diagram" if isinstance(model, Diagram) else "tree"
    picture = model_picture(model, None, None, None, True)
    shape = f"depth {model.depth}, {model.n_nodes} nodes ({model.n_leaves} leaves)"
    if kind == "diagram":
        intro = (
            "The diagram drawn layer by layer: each box tests one column; rows for which the "
            "test holds follow the solid 'yes' arc, the others the dashed 'no' arc. A node "
            "may be shared by several paths; the class terminals are in the bottom row."
        )
    else:
        intro = (
            "The tree drawn from the root down: each box tests one column; rows for which the "
            "test holds follow the solid 'yes' arc, the others the dashed 'no' arc. Each leaf "
            "gives its class and the training rows reaching it; a red frame marks a leaf that "
            "holds rows of another class."
        )
    body = [
        f"<p>The {kind}: {esc(shape)}.</p>",
        '<p class="zoom-buttons"><button type="button" data-zoom="1.25">zoom in</button> '
        '<button type="button" data-zoom="0.8">zoom out</button> '
        '<button type="button" data-zoom="fit">fit the width</button> '
        '<button type="button" data-zoom="actual">actual size</button></p>',
        f'<div class="figure" id="model-figure">{picture_svg(picture, label=f"the {kind}")}</div>',
        f"<details><summary>the {kind} as text</summary>"
        f"<pre>{esc(model.export_text())}</pre></details>",
    ]
    return section("model", f"The {kind}", intro, body)


def _proof_line(fit: Fit) -> str:
    result = fit.result
    if result.proven_optimal:
        return "proven optimal: the lower bound meets the value"
    if result.gap > 0:
        return f"within the permitted gap {number(result.gap)} of the optimum"
    return f"not proven: {result.stop_reason or 'stopped before a proof'}"


def search_section(fit: Fit) -> Html:
    """What the search minimised, the value reached, the bound proven and why it stopped."""
    result, model = fit.result, fit.model
    facts: list[tuple[str, Any]] = [
        ("method", fit.method or "not given"),
        ("objective", result.objective),
        ("objective value", result.objective_value),
        ("lower bound", result.lower_bound),
        ("proven optimal", "yes" if result.proven_optimal else "no"),
        ("why it stopped", _proof_line(fit)),
        ("time", seconds(result.runtime)),
        ("depth", model.depth),
        ("nodes", model.n_nodes),
        ("leaves", model.n_leaves),
        ("training error (weight misclassified)", result.training_error),
        ("incumbents (better models found in turn)", len(result.history)),
    ]
    for name, what in (("found_by", "model found by"), ("lower_bound_by", "lower bound by")):
        by = getattr(result.stats, name, "")
        if by:
            facts.append((what, by))
    return section(
        "search",
        "The search",
        "What the search set out to minimise, the best value it reached and the lower bound it "
        "proved: when the two meet, no better model exists.",
        [pairs(facts)],
    )


def _counters(value: Any, prefix: str = "") -> Iterator[tuple[str, Any]]:
    """The counters of a statistics object, nested ones as ``sat.sat_calls``; a list by its
    length."""
    for item in dataclasses.fields(value):
        name, field_value = prefix + item.name, getattr(value, item.name)
        if dataclasses.is_dataclass(field_value):
            yield from _counters(field_value, name + ".")
        elif isinstance(field_value, list | tuple):
            yield name, f"{len(field_value)} items" if field_value else "none"
        elif field_value is not None:
            yield name, field_value


def _plain(doc: str) -> str:
    """A docstring's paragraph as plain words: roles (``:mod:`a.b```) and literals unmarked."""
    return " ".join(re.sub(r":\w+:`~?([^`]+)`|``([^`]+)``", lambda m: m[1] or m[2], doc).split())


def stats_section(fit: Fit) -> Html:
    """The method's typed statistics as a table, with their class's description."""
    stats = fit.result.stats
    rows = list(_counters(stats)) if dataclasses.is_dataclass(stats) else []
    doc = _plain((type(stats).__doc__ or "").strip().split("\n\n")[0])
    body: list[str] = [f"<p><code>{esc(type(stats).__name__)}</code>: {esc(doc)}</p>"]
    if len(rows) > 1:
        body.append(pairs(rows))
    else:
        body.append(
            not_applicable("This search kept no counters beyond whether it was interrupted.")
        )
    return section(
        "stats",
        "Statistics",
        "The counters the search kept while it ran (result_.stats): how much work each part did.",
        body,
    )
