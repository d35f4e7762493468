"""The workbench in a real browser (Debian Chromium through Playwright): ask a sample question, wait
for the passages, the signal chart and the graph panel, move a gate threshold across its signal so
the action changes; answer a clarification dialogue in place until the answer; keep screenshots in
artifacts/, and prove no request left 127.0.0.1."""
from __future__ import annotations

import json
import re
from pathlib import Path
from typing import NamedTuple
from urllib.parse import urlparse

import pytest

from tests.browser_support import (CHROMIUM, ROOT, action, analyse, app_server, gate_slider, launch, question_box,
                                   wait_turn)

pytestmark = pytest.mark.browser
sync_playwright = pytest.importorskip("playwright.sync_api").sync_playwright
ARTIFACTS = ROOT / "artifacts"
QUESTION = "How much does it pay?"  # sample pol-ask-17: a dangling "it", so the ambiguity rule asks
# The Winter Fuel Payment has three conditions; the scenario may settle the age one, the rest are asked.
ELIGIBLE, SCENARIO = "Am I eligible for the Winter Fuel Payment?", "I am 72."
TURN_LINE = re.compile(r"^Turn (\d+) · (ASK|ANSWER|ABSTAIN)(?: \((yes|no)\))? · ρ_(\d+) = ([0-9.]+) · rule (\w+)")


@pytest.fixture(scope="module")
def browser():
    if not Path(CHROMIUM).exists():
        pytest.skip(f"{CHROMIUM} is missing: apt-get install -y chromium chromium-driver")
    with sync_playwright() as p:
        b = launch(p)
        yield b
        b.close()


def loopback_only(requests: list[str], url: str, record: Path) -> None:
    """Every http(s)/ws request went to the app's own loopback server (the list is kept in ``record``)."""
    hosts = sorted({urlparse(u).netloc for u in requests if urlparse(u).scheme in ("http", "https", "ws", "wss")})
    record.write_text(json.dumps({"hosts": hosts, "requests": requests}, indent=1))
    assert hosts == [urlparse(url).netloc], f"requests left the loopback server: {hosts}"


class TurnLine(NamedTuple):
    index: int
    action: str
    polarity: str
    rho: float
    rule: str


def dialogue_turns(page) -> list[TurnLine]:
    """The Dialogue panel's turns, read from the rendered page."""
    lines = page.locator('[data-testid="stMarkdownContainer"] p').filter(has_text=re.compile(r"^Turn \d+ ·"))
    turns = []
    for text in lines.all_inner_texts():
        m = TURN_LINE.match(text)
        assert m and m[1] == m[4], f"a turn line reads {text!r}"
        turns.append(TurnLine(int(m[1]), m[2], m[3] or "", float(m[5]), m[6]))
    return turns


def download_trace(page) -> dict:
    with page.expect_download() as download:
        page.get_by_role("button", name="Download trace (JSON)").click()
    return json.loads(Path(download.value.path()).read_text())


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
        data = download_trace(page)
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

    loopback_only(requests, url, ARTIFACTS / "browser_requests.json")
    assert not dialogs, f"a document-derived string ran as script: {dialogs}"
    assert after in ("ANSWER", "ABSTAIN")


def test_clarification_dialogue_answered_in_place_until_the_answer(browser, nli_model):
    """ASK → "Answer: yes" for each condition asked → ANSWER (yes); then "Start over" and a typed "No"
    contradicts the first condition asked → ANSWER (no)."""
    ARTIFACTS.mkdir(exist_ok=True)
    with app_server(ARTIFACTS / "browser_dialogue_server.log") as server:
        page = browser.new_page(viewport={"width": 1500, "height": 4200})
        requests, dialogs = [], []
        page.on("request", lambda r: requests.append(r.url))
        page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
        page.goto(server.url)
        question_box(page).wait_for(timeout=120_000)
        analyse(page, ELIGIBLE, scenario=SCENARIO)
        wait_turn(page, 0)
        assert action(page) == "ASK"
        asked, turn = [], 0
        while action(page) == "ASK" and turn < 3:  # three conditions: at most three questions
            asked.append(page.locator("#aw-action").inner_text())
            page.get_by_role("button", name="Answer: yes").click()
            turn += 1
            wait_turn(page, turn)
        assert action(page) == "ANSWER", page.locator("#aw-action").inner_text()
        assert len(asked) == len(set(asked)) == turn >= 1, f"a clarification was asked twice: {asked}"
        turns = dialogue_turns(page)
        assert [t.index for t in turns] == list(range(turn + 1))
        assert [t.action for t in turns] == ["ASK"] * turn + ["ANSWER"] and turns[-1].polarity == "yes"
        rhos = [t.rho for t in turns]
        assert rhos == sorted(rhos) and rhos[0] < 1.0 and rhos[-1] == 1.0, rhos
        data = download_trace(page)
        assert data["decision"]["action"] == "ANSWER" and data["decision"]["answer_polarity"] == "yes"
        assert [t["reply"] for t in data["dialogue"]] == ["Yes"] * turn + [""]
        assert [round(t["rho"], 2) for t in data["dialogue"]] == rhos
        assert all(t["resolved"] for t in data["dialogue"][1:]), "each reply settled a condition"
        page.screenshot(path=str(ARTIFACTS / "browser_dialogue.png"))

        page.get_by_role("button", name="Start over").click()
        wait_turn(page, 0)
        assert action(page) == "ASK" and page.locator("#aw-action").inner_text() == asked[0]
        page.get_by_role("textbox", name="Your reply", exact=True).fill("No")
        page.get_by_role("button", name="Send", exact=True).click()
        wait_turn(page, 1)
        assert action(page) == "ANSWER"
        first, last = dialogue_turns(page)
        assert (first.action, last.action, last.polarity, last.rule) == ("ASK", "ANSWER", "no", "conditions_failed")
        page.screenshot(path=str(ARTIFACTS / "browser_dialogue_no.png"))

    loopback_only(requests, server.url, ARTIFACTS / "browser_dialogue_requests.json")
    assert not dialogs, f"a document-derived string ran as script: {dialogs}"


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
