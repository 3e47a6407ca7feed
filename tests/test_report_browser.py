"""``index.html`` in a real headless browser: it fits the page and holds every report section.

Layout cannot be checked by reading HTML: whether a 10-column table or a wide figure pushes the
page sideways is decided by the browser. This test opens a report in headless Chromium at a
laptop's width and a narrow one, with a small script injected into a copy of the page that
measures, after load, whether the page scrolls sideways, whether every image loaded and fits, and
which section headings are there; ``--dump-dom`` hands the measurements back.

Chromium is a system package (Debian's ``chromium``): ``.ci/run`` installs it and sets
``OPT_SUITE_CI=1``, under which a missing browser fails the test. Elsewhere, without a browser, the
test is skipped with a reason.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess

import pytest
from report_fakes import linear_table, write_store

from opt_suite.report import write_reports
from opt_suite.spec.schema import ReportSpec

BROWSER = shutil.which("chromium") or shutil.which("chromium-browser")

if BROWSER is None and os.environ.get("OPT_SUITE_CI") == "1":
    pytest.fail("CI must run the browser test: install Debian's chromium", pytrace=False)
pytestmark = pytest.mark.skipif(BROWSER is None, reason="no chromium on PATH (CI installs it)")

PROBE = """
<script>
window.addEventListener("load", () => {
  const root = document.documentElement;
  const images = [...document.images].map(i => ({
    src: i.getAttribute("src"), loaded: i.complete && i.naturalWidth > 0,
    fits: i.getBoundingClientRect().right <= root.clientWidth + 1}));
  const found = {
    overflow: root.scrollWidth - root.clientWidth,
    headings: [...document.querySelectorAll("h1, h2, h3, strong")].map(h => h.textContent.trim()),
    tables: document.querySelectorAll(".wide > table").length,
    images: images,
  };
  document.body.setAttribute("data-probe", JSON.stringify(found));
});
</script>
"""


def measure(page, width: int) -> dict:
    probe = page.with_name("probe.html")
    probe.write_text(page.read_text().replace("</body>", PROBE + "</body>"))
    result = subprocess.run(
        [
            str(BROWSER),
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            f"--user-data-dir={page.parent / 'profile'}",
            f"--window-size={width},900",
            "--virtual-time-budget=5000",
            "--dump-dom",
            probe.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    found = re.search(r'data-probe="([^"]*)"', result.stdout)
    assert found, f"the page did not report its measurements: {result.stderr[-2000:]}"
    return json.loads(found.group(1).replace("&quot;", '"').replace("&amp;", "&"))


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    # Ten method entries with long names: the widest leaderboard a user is likely to make.
    shifts = {f"a-rather-long-method-entry-name-{i}": float(i) for i in range(10)}
    shifts = {"primitives": 0.0, **shifts}
    run = write_store(
        tmp_path_factory.mktemp("browser") / "run",
        linear_table(shifts, seeds=3, tasks=3, noise=1.0),
        report=ReportSpec(threshold=0.0, bootstrap=100),
    )
    write_reports(run)
    return run / "index.html"


@pytest.mark.parametrize("width", [1280, 800])
def test_the_page_never_scrolls_sideways_and_every_image_fits(page, width):
    found = measure(page, width)
    assert found["overflow"] <= 0, f"the page is {found['overflow']} px wider than the window"
    assert found["images"], "no figure on the page"
    for image in found["images"]:
        assert image["loaded"], f"{image['src']} did not load"
        assert image["fits"], f"{image['src']} is wider than the window"
    assert found["tables"] >= 2, "every table sits in its own scrolling box"


def test_every_section_of_the_markdown_is_on_the_page(page):
    found = measure(page, 1280)
    markdown = (page.parent / "leaderboard.md").read_text()
    sections = re.findall(r"^#+ (.+)$", markdown, re.M) + re.findall(
        r"^\*\*([^*]+)\*\*$", markdown, re.M
    )
    assert sections
    missing = [s for s in sections if s.strip() not in found["headings"]]
    assert not missing, f"sections of leaderboard.md missing from index.html: {missing}"
    text = page.read_text()
    for name in ("runs.json", "leaderboard.md", "returns.csv", "curves.png"):
        assert f'href="{name}"' in text, name
