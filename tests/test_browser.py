"""The workbench in a real browser (Debian Chromium through Playwright): ask a sample question, wait
for the passages, the signal chart and the graph panel, move a gate threshold across its signal so
the action changes, keep screenshots in artifacts/, and prove no request left 127.0.0.1."""
from __future__ import annotations

import json
import re
from pathlib import Path
from urllib.parse import urlparse

import pytest

from tests.browser_support import CHROMIUM, ROOT, action, analyse, app_server, gate_slider, launch, question_box

pytestmark = pytest.mark.browser
sync_playwright = pytest.importorskip("playwright.sync_api").sync_playwright
ARTIFACTS = ROOT / "artifacts"
QUESTION = "How much does it pay?"  # sample pol-ask-17: a dangling "it", so the ambiguity rule asks


@pytest.fixture(scope="module")
def browser():
    if not Path(CHROMIUM).exists():
        pytest.skip(f"{CHROMIUM} is missing: apt-get install -y chromium chromium-driver")
    with sync_playwright() as p:
        b = launch(p)
        yield b
        b.close()


def test_question_panels_slider_and_loopback_only(browser, nli_model):
    ARTIFACTS.mkdir(exist_ok=True)
    with app_server(ARTIFACTS / "browser_server.log") as server:
        url = server.url
        page = browser.new_page(viewport={"width": 1500, "height": 4200})
        requests, dialogs = [], []
        page.on("request", lambda r: requests.append(r.url))
        page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
        page.goto(url)
        question_box(page).wait_for(timeout=120_000)
        analyse(page, QUESTION)

        page.get_by_role("heading", name="Retrieved passages").wait_for()
        assert page.locator("mark").count() >= 1, "the best-supported sentence is highlighted"
        page.locator(".js-plotly-plot .barlayer").first.wait_for(timeout=30_000)
        page.get_by_role("heading", name="Knowledge-graph subgraph").wait_for()
        # The KG panel draws the subgraph in an iframe, or says that the question matched no node.
        empty_kg = page.get_by_text("No entity of the question matched a node of the knowledge graph", exact=False)
        page.locator("iframe").or_(empty_kg).first.wait_for(timeout=60_000)
        if not empty_kg.count():
            page.frame_locator("iframe").first.locator("#mynetwork canvas").wait_for(timeout=60_000)
        before = action(page)
        assert before == "ASK"
        with page.expect_download() as download:
            page.get_by_role("button", name="Download trace (JSON)").click()
        data = json.loads(Path(download.value.path()).read_text())
        assert data["trace"]["query"]["question"] == QUESTION and data["decision"]["action"] == "ASK"
        page.screenshot(path=str(ARTIFACTS / "browser_before.png"))

        thumb = gate_slider(page, "Ambiguity >")
        thumb.focus()
        thumb.press("End")  # 1.00: no ambiguity score exceeds it, so the rule can no longer fire
        page.wait_for_function("() => document.querySelector('#aw-action')?.dataset.action !== 'ASK'",
                               polling="raf", timeout=30_000)
        assert float(thumb.input_value()) == 1.0
        page.get_by_text(re.compile(r"ambiguity [0-9.]+ > 1\.000")).wait_for(timeout=30_000)  # gate trace redrawn
        after = action(page)
        page.screenshot(path=str(ARTIFACTS / "browser_after.png"))

    hosts = sorted({urlparse(u).netloc for u in requests if urlparse(u).scheme in ("http", "https", "ws", "wss")})
    (ARTIFACTS / "browser_requests.json").write_text(json.dumps({"hosts": hosts, "requests": requests}, indent=1))
    assert hosts == [urlparse(url).netloc], f"requests left the loopback server: {hosts}"
    assert not dialogs, f"a document-derived string ran as script: {dialogs}"
    assert after in ("ANSWER", "ABSTAIN")


def test_graph_renderer_in_the_browser_shows_hostile_labels_as_text(browser):
    from components.graph import graph_html
    from tests.test_components import GRAPH_EDGES, GRAPH_NODES
    page = browser.new_page(viewport={"width": 900, "height": 600})
    requests, dialogs = [], []
    page.on("request", lambda r: requests.append(r.url))
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    page.set_content(graph_html(GRAPH_NODES, GRAPH_EDGES))
    page.locator("#mynetwork canvas").wait_for(timeout=30_000)
    assert page.evaluate("nodes.get('n1').label") == "<script>alert(1)</script>"
    assert page.evaluate("edges.get('e0').title.innerText").endswith("<img src=x onerror=alert(1)> It built the bridge.")
    assert page.evaluate("document.querySelectorAll('img').length") == 0
    assert page.locator("#aw-legend").inner_text().count("?var") == 1
    page.screenshot(path=str(ARTIFACTS / "browser_graph.png"))
    assert not dialogs and not [u for u in requests if u.startswith(("http:", "https:"))]
