"""The docs site in a real browser: Debian's headless Chromium loads every page of the built
site at 1366 and 1920 px and measures it (code blocks never cut, the rule table readable:
headings in view while reading a row, whole rule ids, every column on screen), and takes
screenshots of the rule table and of a long code block, saved in build/docs-screenshots/.

The browser is driven by its own command line (``--dump-dom`` of a page that measures the
site's pages in same-size frames, ``--screenshot`` of one that shows a page), the site served
on 127.0.0.1 with every other host unresolvable. Without ``chromium`` the tests skip on a
developer's machine and fail in CI (``CI`` set), whose ``.ci/run`` installs it.
"""

from __future__ import annotations

import functools
import html
import http.server
import json
import os
import re
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import ROOT

pytestmark = pytest.mark.deep(
    why="the site built again and measured in Chromium (about 12 s of CPU and two minutes); "
    "in make test tests/test_docs_site.py checks the built site's pages, tables and links"
)

WIDTHS = (1366, 1920)
HEIGHT = 900
RULE_ANCHOR = "hp-min-above-count"
"""A rule deep in the table (as an error's link opens it): its headings must still show."""
CODE_ANCHOR = "hyperpod_constructs.HyperPodClusterBase"
"""An API entry whose example has lines longer than the content column is wide."""
SCREENSHOTS = ROOT / "build" / "docs-screenshots"
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
    # The site only: its fonts' host (fonts.googleapis.com) fails at once, as offline.
    "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
]


def chromium() -> str:
    found = shutil.which("chromium")
    if found is None:
        message = "chromium is not installed (apt-get install -y chromium)"
        if os.environ.get("CI"):
            pytest.fail(f"{message}: CI must run the browser tests (.ci/run installs it)")
        pytest.skip(message)
    return found


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """The site as ``make docs`` builds it, with the measuring pages, on 127.0.0.1."""
    chromium()
    out = tmp_path_factory.mktemp("browser-site")
    build = [sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet", "-d", str(out)]
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    result = subprocess.run(build, cwd=ROOT, capture_output=True, text=True, env=env)
    assert result.returncode == 0, result.stdout + result.stderr
    (out / "_measure.html").write_text(MEASURE_PAGE)
    (out / "_show.html").write_text(SHOW_PAGE)
    handler = functools.partial(_QuietHandler, directory=str(out))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", out
    finally:
        server.shutdown()
        server.server_close()


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


def run_chromium(profile: Path, width: int, *args: str, budget_ms: int = 5000) -> str:
    """Chromium's stdout; ``budget_ms`` of virtual time lets the pages load and settle."""
    command = [
        chromium(),
        *CHROMIUM_FLAGS,
        f"--user-data-dir={profile}",
        f"--window-size={width},{HEIGHT}",
        f"--virtual-time-budget={budget_ms}",
        *args,
    ]
    result = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-2000:]
    return result.stdout


def site_pages(site: Path) -> list[str]:
    """Every page a reader opens: all of the site's HTML but the repository files it
    publishes, the 404 page and the measuring pages."""
    return sorted(
        page.relative_to(site).as_posix()
        for page in site.rglob("*.html")
        if "files" not in page.relative_to(site).parts
        and page.name != "404.html"
        and not page.name.startswith("_")
    )


def measure(served: tuple[str, Path], tmp_path: Path, width: int) -> dict[str, list[str]]:
    """Page -> the problems the measuring page found on it at ``width`` px."""
    base, site = served
    pages = [*site_pages(site), f"validation.html#{RULE_ANCHOR}"]
    query = "&".join(f"page={page.replace('#', '%23')}" for page in pages)
    url = f"{base}/_measure.html?width={width}&height={HEIGHT}&{query}"
    dom = run_chromium(tmp_path / f"profile-{width}", width, "--dump-dom", url, budget_ms=600000)
    match = re.search(r'<pre id="result">(?P<json>.*?)</pre>', dom, re.DOTALL)
    assert match is not None, dom[-2000:]
    results: dict[str, list[str]] = json.loads(html.unescape(match["json"]))
    assert sorted(results) == sorted(pages), "every page measured"
    return results


@pytest.mark.parametrize("width", WIDTHS)
def test_every_page_is_readable_in_a_real_browser(
    served: tuple[str, Path], tmp_path: Path, width: int
) -> None:
    """No code block cut at the right edge (they wrap) or under its copy button; on the
    rule table (validation.html,
    opened at a rule deep in it as an error's link opens it): the column headings in view
    and not covered, every rule id on one line, every cell within the table and the table
    on screen, the linked row's cells (the explanation too) visible."""
    problems = {page: found for page, found in measure(served, tmp_path, width).items() if found}
    assert problems == {}


@pytest.mark.parametrize("width", WIDTHS)
def test_screenshots_of_the_rule_table_and_a_code_block(
    served: tuple[str, Path], tmp_path: Path, width: int
) -> None:
    """What a reader sees, saved to look at: the rule table opened at a rule, and an API page
    whose example's lines are longer than the content column is wide."""
    base, _ = served
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    shots = {
        f"rule-table-{width}.png": f"validation.html%23{RULE_ANCHOR}",
        f"code-block-{width}.png": f"api/HyperPodClusterBase.html%23{CODE_ANCHOR}",
    }
    for name, page in shots.items():
        target = SCREENSHOTS / name
        target.unlink(missing_ok=True)
        url = f"{base}/_show.html?width={width}&height={HEIGHT}&page={page}"
        run_chromium(tmp_path / f"profile-{name}", width, f"--screenshot={target}", url)
        assert target.stat().st_size > 20_000, f"{target}: a blank page"


MEASURE_PAGE = """<!doctype html>
<html><head><meta charset="utf-8"><title>measure</title></head>
<body style="margin:0">
<pre id="result"></pre>
<script>
const params = new URLSearchParams(location.search);
const W = Number(params.get("width")), H = Number(params.get("height"));

function shown(element) {
  const rect = element.getBoundingClientRect();
  return rect.width > 0 && rect.height > 0;
}

// The element a reader sees at (x, y) of the frame is `element` or inside it.
function onTop(doc, element, x, y) {
  const hit = doc.elementFromPoint(x, y);
  return hit !== null && (hit === element || element.contains(hit));
}

function name(element) {
  return element.textContent.trim().replace(/\\s+/g, " ").slice(0, 60);
}

function codeProblems(doc) {
  const problems = [];
  for (const code of doc.querySelectorAll("pre > code")) {
    if (!shown(code)) continue;
    const rect = code.getBoundingClientRect();
    if (code.scrollWidth > code.clientWidth + 1) {
      problems.push(`code block cut (${code.scrollWidth} > ${code.clientWidth} px): ${name(code)}`);
    }
    const button = code.parentElement.querySelector(".md-code__nav, .md-clipboard");
    if (button !== null && shown(button)) {
      const textRight = rect.right - parseFloat(getComputedStyle(code).paddingRight);
      if (textRight > button.getBoundingClientRect().left + 0.5) {
        problems.push(`code block's text runs under its copy button: ${name(code)}`);
      }
    }
    const scroller = code.closest(".md-typeset__scrollwrap, .md-content__inner");
    const visible = scroller === null ? W : scroller.getBoundingClientRect().right;
    if (rect.right > Math.min(W, visible) + 0.5) {
      problems.push(`code block past the right edge (${rect.right} px): ${name(code)}`);
    }
  }
  return problems;
}

function ruleTableProblems(doc, win, anchorId) {
  const anchor = doc.getElementById(anchorId);
  if (anchor === null) return [`no #${anchorId}`];
  const table = anchor.closest("table");
  const problems = [];
  const header = doc.querySelector(".md-header");
  const headerBottom = header === null ? 0 : header.getBoundingClientRect().bottom;
  if (table.scrollWidth > table.clientWidth + 1) {
    problems.push(`the table scrolls sideways (${table.scrollWidth} > ${table.clientWidth} px)`);
  }
  for (const th of table.querySelectorAll("thead th")) {
    const rect = th.getBoundingClientRect();
    const x = (rect.left + rect.right) / 2, y = (rect.top + rect.bottom) / 2;
    if (!(rect.top >= headerBottom - 0.5 && rect.bottom <= H && rect.right <= W + 0.5)) {
      problems.push(`heading '${name(th)}' not in view at the linked rule (${rect.top} px)`);
    } else if (!onTop(doc, th, x, y)) {
      problems.push(`heading '${name(th)}' covered at the linked rule`);
    }
  }
  for (const id of table.querySelectorAll(".rule-id")) {
    const code = id.querySelector("code");
    if (id.getClientRects().length !== 1 || code.getClientRects().length !== 1) {
      problems.push(`rule id ${name(id)} broken across lines`);
    }
  }
  const column = doc.querySelector(".md-content__inner").getBoundingClientRect();
  for (const cell of table.querySelectorAll("td, th")) {
    const rect = cell.getBoundingClientRect();
    if (rect.right > column.right + 0.5) {
      problems.push(`cell past the content column (${rect.right} px): ${name(cell)}`);
    }
    if (cell.scrollWidth > cell.clientWidth + 1) {
      problems.push(`cell overflows (${cell.scrollWidth} > ${cell.clientWidth} px): ${name(cell)}`);
    }
    if (rect.right > W + 0.5) {
      problems.push(`cell past the window's right edge (${rect.right} px): ${name(cell)}`);
    }
  }
  const anchorRect = anchor.getBoundingClientRect();
  if (!onTop(doc, anchor, anchorRect.left + 2, anchorRect.top + 2)) {
    problems.push(`the linked rule ${anchorId} is not in view`);
  }
  for (const cell of anchor.closest("tr").children) {
    const rect = cell.getBoundingClientRect();
    if (!onTop(doc, cell, rect.left + 4, rect.top + 4)) {
      problems.push(`the linked rule's cell '${name(cell)}' is not visible`);
    }
  }
  return problems;
}

async function measure(page) {
  const frame = document.createElement("iframe");
  frame.style.cssText = `width:${W}px;height:${H}px;border:0;display:block`;
  document.body.append(frame);
  await new Promise((resolve) => { frame.onload = resolve; frame.src = page; });
  await new Promise((resolve) => setTimeout(resolve, 500));
  const doc = frame.contentDocument, win = frame.contentWindow;
  const problems = codeProblems(doc);
  const hash = page.split("#")[1];
  if (hash !== undefined) problems.push(...ruleTableProblems(doc, win, hash));
  frame.remove();
  return problems;
}

(async () => {
  const results = {};
  for (const page of params.getAll("page")) {
    try {
      results[page] = await measure(page);
    } catch (error) {
      results[page] = [`measuring failed: ${error}`];
    }
  }
  document.getElementById("result").textContent = JSON.stringify(results);
})();
</script>
</body></html>
"""

SHOW_PAGE = """<!doctype html>
<html><head><meta charset="utf-8"><title>show</title></head>
<body style="margin:0;overflow:hidden">
<script>
const params = new URLSearchParams(location.search);
const frame = document.createElement("iframe");
frame.style.cssText =
  `width:${params.get("width")}px;height:${params.get("height")}px;border:0;display:block`;
frame.src = params.get("page");
document.body.append(frame);
</script>
</body></html>
"""
