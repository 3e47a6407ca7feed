"""``index.html``: the whole leaderboard, the learning curves and the option pictures on one page.

The page is rendered from ``leaderboard.md`` itself (Python-Markdown, the ``tables`` extension), so
every section of the Markdown -- warnings, metric definitions, normalised scores, discovery cost,
demonstrations, whatever a report section adds later -- is on the page by construction, never a
second rendering kept in step by hand. It has no scripts and no external resources; images and
links are relative to the run folder, so the folder can be copied or served as it is. Wide tables
scroll inside their own box and figures shrink to the page, so the page itself never scrolls
sideways (``tests/test_report_browser.py`` checks it in headless Chromium).
"""

from __future__ import annotations

import html
import re
from collections.abc import Sequence
from pathlib import Path

import markdown

__all__ = ["index_html", "write_index_html"]

_STYLE = """
body { font-family: sans-serif; margin: 2em auto; max-width: 72em; padding: 0 1em; color: #222;
       line-height: 1.4; }
.wide { overflow-x: auto; max-width: 100%; margin: 0.5em 0 1em; }
table { border-collapse: collapse; font-size: 0.85em; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.5em; white-space: nowrap; }
td { text-align: right; font-variant-numeric: tabular-nums; }
td:first-child { text-align: left; }
th { background: #f3f3f3; position: sticky; top: 0; }
img { max-width: 100%; height: auto; }
figure { display: inline-block; margin: 0.5em; vertical-align: top; max-width: 100%; }
figure img { max-width: min(32em, 100%); }
figcaption { font-size: 0.8em; color: #555; }
blockquote { background: #fff3cd; border-left: 4px solid #c90; margin: 0.5em 0;
             padding: 0.2em 0.8em; }
code { overflow-wrap: anywhere; }
"""


def _leaderboard_html(text: str) -> str:
    """``leaderboard.md`` as HTML: raw HTML in it shown as text, tables in scrolling boxes."""
    # Names are validated (spec/rules.py), but the page must not trust text it did not write:
    # '<' and '&' become text; '>' stays, it is Markdown's quote (the report's warnings).
    escaped = text.replace("&", "&amp;").replace("<", "&lt;")
    body = markdown.markdown(escaped, extensions=["tables"], output_format="html")
    return re.sub(
        r"<table>(.*?)</table>", r'<div class="wide"><table>\1</table></div>', body, flags=re.S
    )


def _figure(title: str, src: str, alt: str) -> list[str]:
    source = html.escape(src)
    return [
        f"<h2>{html.escape(title)}</h2>",
        f'<a href="{source}"><img src="{source}" alt="{html.escape(alt)}"></a>',
    ]


def index_html(
    leaderboard_md: str,
    spec_name: str,
    pictures: Sequence[str],
    curves: str | None = "curves.png",
    fig1a: str | None = None,
    discovery: str | None = None,
    curves_with_discovery: str | None = None,
) -> str:
    """The page; ``leaderboard_md``: the text of ``leaderboard.md``; the rest: paths in the run."""
    name = html.escape(spec_name)
    files = ["leaderboard.md", "leaderboard.csv", "leaderboard.json", "returns.csv", "runs.json"]
    figures = [f for f in (curves, fig1a, discovery, curves_with_discovery) if f is not None]
    links = ", ".join(f'<a href="{html.escape(f)}">{html.escape(f)}</a>' for f in files + figures)
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>opt-suite: {name}</title><style>{_STYLE}</style></head><body>",
        _leaderboard_html(leaderboard_md),
        f"<p>Files of this run: {links}.</p>",
    ]
    if curves is not None:
        parts += _figure(
            "Learning curves on the test tasks",
            curves,
            "mean return vs episode, one line per method",
        )
    if curves_with_discovery is not None:
        parts += _figure(
            "Learning curves with discovery's frames on the x-axis",
            curves_with_discovery,
            "mean return vs frames, discovery frames included",
        )
    if fig1a is not None:
        parts += _figure(
            "Option learning: Algorithm 1's training curves (the paper's Fig. 1a)",
            fig1a,
            "J-hat, its likelihood and termination parts per training epoch, across rounds",
        )
    if discovery is not None:
        parts += _figure(
            "Option discovery by interaction: steps per training episode",
            discovery,
            "steps per episode and mean option duration while options are discovered by"
            " interacting",
        )
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
    leaderboard_md: str,
    spec_name: str,
    path: Path,
    pictures: Sequence[str],
    curves: str | None = "curves.png",
    fig1a: str | None = None,
    discovery: str | None = None,
    curves_with_discovery: str | None = None,
) -> Path:
    """Write :func:`index_html` to ``path``."""
    page = index_html(
        leaderboard_md, spec_name, pictures, curves, fig1a, discovery, curves_with_discovery
    )
    path.write_text(page, encoding="utf-8")
    return path
