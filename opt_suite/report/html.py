"""``index.html``: the leaderboard, the learning curves and the option pictures on one page.

The page has no scripts and no external resources; images are referenced relative to the run folder,
so the folder can be copied or served as it is.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from pathlib import Path

from opt_suite.report.leaderboard import Leaderboard
from opt_suite.report.tables import budget_text, extra_tables, intervals_text, table_cells

__all__ = ["index_html", "write_index_html"]

_STYLE = """
body { font-family: sans-serif; margin: 2em auto; max-width: 72em; color: #222; }
table { border-collapse: collapse; font-size: 0.9em; }
th, td { border: 1px solid #ccc; padding: 0.3em 0.6em; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
th { background: #f3f3f3; }
figure { display: inline-block; margin: 0.5em; vertical-align: top; }
figure img { max-width: 32em; }
figcaption { font-size: 0.8em; color: #555; }
.warning { background: #fff3cd; border-left: 4px solid #c90; padding: 0.4em 0.8em; }
"""


def _table(header: list[str], rows: list[list[str]]) -> str:
    head = "<tr>" + "".join(f"<th>{html.escape(h)}</th>" for h in header) + "</tr>"
    body = [
        f"<tr><td>{html.escape(cells[0])}</td>"
        + "".join(f'<td class="num">{html.escape(c)}</td>' for c in cells[1:])
        + "</tr>"
        for cells in rows
    ]
    return "<table>\n" + head + "\n" + "\n".join(body) + "\n</table>"


def index_html(
    board: Leaderboard,
    pictures: Sequence[str],
    curves: str | None = "curves.png",
    fig1a: str | None = None,
    discovery: str | None = None,
) -> str:
    """The page; ``pictures``, ``curves``, ``fig1a``, ``discovery``: paths relative to the run."""
    name = html.escape(board.spec_name)
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>opt-suite: {name}</title><style>{_STYLE}</style></head><body>",
        f"<h1>{name}</h1>",
        f"<p>Spec hash <code>{html.escape(board.spec_hash)}</code> · {board.seeds} seeds ×"
        f" {board.tasks} test tasks × {budget_text(board)} per method entry ·"
        f" {html.escape(intervals_text(board))}</p>",
        "<h2>Leaderboard</h2>",
        *(
            f'<p class="warning"><strong>Warning:</strong> {html.escape(w)}</p>'
            for w in board.warnings
        ),
        _table(*table_cells(board)),
        *(
            f"<h3>{html.escape(title)}</h3>\n{_table(header, rows)}"
            for title, header, rows in extra_tables(board)
        ),
        '<p>Also as <a href="leaderboard.md">Markdown</a>, <a href="leaderboard.csv">CSV</a>,'
        ' <a href="leaderboard.json">JSON</a>; every episode in'
        ' <a href="returns.csv">returns.csv</a>.</p>',
    ]
    if curves is not None:
        parts += [
            "<h2>Learning curves on the test tasks</h2>",
            f'<img src="{html.escape(curves)}" alt="mean return vs episode, one line per method">',
        ]
    if fig1a is not None:
        parts += [
            "<h2>Option learning: Algorithm 1's training curves (the paper's Fig. 1a)</h2>",
            f'<img src="{html.escape(fig1a)}" alt="J-hat, its likelihood and termination parts'
            ' per training epoch, across rounds">',
        ]
    if discovery is not None:
        parts += [
            "<h2>Option discovery by interaction: steps per training episode</h2>",
            f'<img src="{html.escape(discovery)}" alt="steps per episode and mean option duration'
            ' while options are discovered by interacting">',
        ]
    if pictures:
        parts.append("<h2>Options</h2>")
        for p in pictures:
            src = html.escape(p)
            parts.append(
                f'<figure><a href="{src}"><img src="{src}" alt="{src}"></a>'
                f"<figcaption>{src}</figcaption></figure>"
            )
    parts.append("</body></html>\n")
    return "\n".join(parts)


def write_index_html(
    board: Leaderboard,
    path: Path,
    pictures: Sequence[str],
    curves: str | None = "curves.png",
    fig1a: str | None = None,
    discovery: str | None = None,
) -> Path:
    """Write :func:`index_html` to ``path``."""
    path.write_text(index_html(board, pictures, curves, fig1a, discovery), encoding="utf-8")
    return path
