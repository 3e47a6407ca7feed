"""``index.html``: the leaderboard, the learning curves and the option pictures on one page.

The page has no scripts and no external resources; images are referenced relative to the run folder,
so the folder can be copied or served as it is.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from pathlib import Path

from opt_suite.report.leaderboard import Leaderboard
from opt_suite.report.metrics import HIGHER_IS_BETTER
from opt_suite.report.tables import fmt

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
"""


def _table(board: Leaderboard) -> str:
    pct = round(100 * board.confidence)
    head = ["method"]
    for k in board.metrics:
        arrow = "↑" if HIGHER_IS_BETTER[k] else "↓"
        head += [f"{k} {arrow}<br>mean ± s.e.", f"{k}<br>IQM [{pct}% CI]"]
    if board.baseline is not None:
        head.append(f"P({board.primary} &gt; {html.escape(board.baseline)})<br>[{pct}% CI]")
    rows = []
    for row in board.rows:
        cells = [f"<td>{html.escape(row.method)}</td>"]
        for k in board.metrics:
            e = row.estimates[k]
            d = 1 if k == "episodes_to_threshold" else 2
            cells.append(f'<td class="num">{fmt(e.mean, d)} ± {fmt(e.se, d)}</td>')
            cells.append(
                f'<td class="num">{fmt(e.iqm, d)} [{fmt(e.ci_low, d)}, {fmt(e.ci_high, d)}]</td>'
            )
        if board.baseline is not None:
            p = row.improvement.get(board.primary)
            text = "—" if p is None else f"{p.probability:.2f} [{p.ci_low:.2f}, {p.ci_high:.2f}]"
            cells.append(f'<td class="num">{text}</td>')
        rows.append("<tr>" + "".join(cells) + "</tr>")
    header = "<tr>" + "".join(f"<th>{h}</th>" for h in head) + "</tr>"
    return "<table>\n" + header + "\n" + "\n".join(rows) + "\n</table>"


def index_html(
    board: Leaderboard, pictures: Sequence[str], curves: str | None = "curves.png"
) -> str:
    """The page; ``pictures`` and ``curves`` are paths relative to the run folder."""
    name = html.escape(board.spec_name)
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>opt-suite: {name}</title><style>{_STYLE}</style></head><body>",
        f"<h1>{name}</h1>",
        f"<p>Spec hash <code>{html.escape(board.spec_hash)}</code> · {board.seeds} seeds ×"
        f" {board.tasks} test tasks × {board.episodes} episodes per method entry · CIs are"
        f" {round(100 * board.confidence)}% stratified-bootstrap intervals ({board.bootstrap}"
        " resamples).</p>",
        "<h2>Leaderboard</h2>",
        _table(board),
        '<p>Also as <a href="leaderboard.md">Markdown</a>, <a href="leaderboard.csv">CSV</a>,'
        ' <a href="leaderboard.json">JSON</a>; every episode in'
        ' <a href="returns.csv">returns.csv</a>.</p>',
    ]
    if curves is not None:
        parts += [
            "<h2>Learning curves on the test tasks</h2>",
            f'<img src="{html.escape(curves)}" alt="mean return vs episode, one line per method">',
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
    board: Leaderboard, path: Path, pictures: Sequence[str], curves: str | None = "curves.png"
) -> Path:
    """Write :func:`index_html` to ``path``."""
    path.write_text(index_html(board, pictures, curves), encoding="utf-8")
    return path
