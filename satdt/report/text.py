"""The text a report shows, read back from its HTML with the standard library's parser: what
a test compares with what a browser renders."""

from __future__ import annotations

from html.parser import HTMLParser

_HIDDEN = {"script", "style", "head", "title"}
_BLOCKS = {
    "p", "div", "section", "header", "footer", "main", "nav", "h1", "h2", "h3", "h4", "li",
    "tr", "table", "details", "summary", "pre", "svg", "text", "br",
}  # fmt: skip


class _Text(HTMLParser):
    """Collects the text outside ``script``, ``style`` and ``head``, a line break at each block."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.hidden = 0
        self.parts: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _HIDDEN:
            self.hidden += 1
        elif tag in _BLOCKS:
            self.parts.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in _HIDDEN:
            self.hidden = max(0, self.hidden - 1)
        elif tag in _BLOCKS or tag in ("td", "th"):
            self.parts.append("\n" if tag in _BLOCKS else " ")

    def handle_data(self, data: str) -> None:
        if not self.hidden:
            self.parts.append(data)


def visible_text(page: str) -> str:
    """The text of a report as a reader sees it with every step opened.

    Text inside ``<script>``, ``<style>`` and ``<head>`` (and a tooltip's ``<title>``) is
    left out; each block (a paragraph, a table row, a box of a drawing) is one line, a box's
    lines run together as a browser's text of them does, spaces inside a line collapsed,
    blank lines dropped. It is Chromium's ``document.body.innerText`` of the page once every
    ``<details>`` element is open, normalised by :func:`normalised`: what a browser test
    compares.

    Parameters
    ----------
    page : str
        The HTML of a report (:func:`satdt.report.report_html`).

    Returns
    -------
    str
        The lines of visible text, joined by newlines.
    """
    parser = _Text()
    parser.feed(page)
    parser.close()
    return normalised("".join(parser.parts))


def normalised(text: str) -> str:
    """Text with spaces inside each line collapsed and blank lines dropped."""
    lines = (" ".join(line.split()) for line in text.splitlines())
    return "\n".join(line for line in lines if line)
