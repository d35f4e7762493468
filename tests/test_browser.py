"""The workbench in a real browser (Debian Chromium through Playwright): ask a sample question, wait
for the passages, the signal chart and the graph panel, move a gate threshold across its signal so
the action changes; answer a clarification dialogue in place until the answer; take the guided tour
and meet one refusal of each kind; keep the Evaluate page's tab through a suggestion; keep
screenshots in artifacts/, and prove no request left 127.0.0.1."""
from __future__ import annotations

import json
import re
import time
from pathlib import Path
from typing import NamedTuple
from urllib.parse import urlparse

import pytest

from tests.browser_support import (CARD_FOR, CHROMIUM, ROOT, action, analyse, app_server, gate_slider, launch,
                                   question_box, scroll_to, wait_idle, wait_turn, watched_page)

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
        page, requests, dialogs = watched_page(browser, 1500, 4200)
        page.goto(url)
        question_box(page).wait_for(timeout=120_000)
        analyse(page, QUESTION)
        wait_idle(page)

        page.get_by_role("tab", name="Passages and evidence").click()
        page.get_by_role("heading", name="Retrieved passages").wait_for()
        assert page.locator("mark").count() >= 1, "the best-supported sentence is highlighted"
        page.get_by_role("tab", name="Gate and signals").click()
        page.locator(".js-plotly-plot .barlayer").first.wait_for(timeout=30_000)
        page.get_by_role("tab", name="Knowledge graph").click()
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
        page.get_by_role("tab", name="Gate and signals").click()

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
        page, requests, dialogs = watched_page(browser, 1500, 4200)
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
    page, requests, dialogs = watched_page(browser, 900, 600)
    page.set_content(graph_html(GRAPH_NODES, GRAPH_EDGES))
    page.locator("#mynetwork canvas").wait_for(timeout=30_000)
    assert page.evaluate("nodes.get('n1').label") == "<script>alert(1)</script>"
    assert page.evaluate("edges.get('e0').title.innerText").endswith("<img src=x onerror=alert(1)> It built the bridge.")
    assert page.evaluate("document.querySelectorAll('img').length") == 0
    assert page.locator("#aw-legend").inner_text().count("?var") == 1
    page.screenshot(path=str(ARTIFACTS / "browser_graph.png"))
    assert not dialogs and not [u for u in requests if u.startswith(("http:", "https:"))]


def test_a_graph_drawn_without_a_size_is_fitted_when_it_gets_one(browser):
    """A browser walkthrough: the Knowledge graph tab, drawn while closed (no size), showed one node cut off in
    its top-left corner once opened."""
    from components.graph import graph_html
    from tests.test_components import GRAPH_EDGES, GRAPH_NODES
    page, requests, dialogs = watched_page(browser, 900, 600)
    page.set_content("<iframe id='f' style='display:none;width:880px;height:460px;border:0'></iframe>")
    page.eval_on_selector("#f", "(f, html) => { f.srcdoc = html; }", graph_html(GRAPH_NODES, GRAPH_EDGES))
    frame = page.frame_locator("#f")
    frame.locator("#mynetwork canvas").wait_for(state="attached", timeout=30_000)
    page.eval_on_selector("#f", "f => { f.style.display = 'block'; }")
    inner = page.frames[1]
    page.wait_for_timeout(1500)
    width, height = inner.evaluate("[document.getElementById('mynetwork').clientWidth, "
                                   "document.getElementById('mynetwork').clientHeight]")
    spots = inner.evaluate("Object.values(network.getPositions()).map(p => network.canvasToDOM(p))")
    assert spots and all(0 <= s["x"] <= width and 0 <= s["y"] <= height for s in spots), (width, height, spots)
    assert not dialogs and not [u for u in requests if u.startswith(("http:", "https:"))]


def first_screen(page, name: str) -> None:
    """The viewport as a newcomer sees it first (the page above the fold)."""
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"))


def test_guided_tour_and_one_refusal_of_each_kind(browser, nli_model):
    """The tour's three questions give their three actions, each followed by its walk through the trace;
    then a topic-absent, a fact-absent and a conditions-unknown refusal, each saying so on the card."""
    from components.tour import STOPS
    ARTIFACTS.mkdir(exist_ok=True)
    with app_server(ARTIFACTS / "browser_tour_server.log") as server:
        page, requests, dialogs = watched_page(browser, 1500, 1000)
        page.goto(server.url)
        question_box(page).wait_for(timeout=120_000)
        page.get_by_text("Guided tour and sample questions").click()
        for i, stop in enumerate(STOPS):
            page.get_by_role("button", name=f"{i + 1}. {stop.action}: {stop.question}").click()
            page.wait_for_function(CARD_FOR, arg=stop.question, polling="raf", timeout=180_000)
            wait_idle(page)
            assert action(page) == stop.action, page.locator("#aw-action").inner_text()
            why = page.get_by_text(re.compile(r"^Why — Retrieval ranked"))
            why.wait_for(timeout=30_000)
            assert "The gate then" in why.inner_text()
            card = page.locator("#aw-action").inner_text()
            assert "Why:" in card and "seed" not in card.lower(), card
            first_screen(page, f"inspect_{stop.action.lower()}")
        refusals = [("What is the population of Mars?", None, "topic_absent", "Not in the knowledge base"),
                    ("How deep is Lake Morrow?", None, "fact_absent", "Topic found, fact missing")]
        for question, scenario, kind, headline in refusals:
            analyse(page, question, scenario=scenario or "")
            wait_idle(page)
            card = page.locator("#aw-action")
            assert card.get_attribute("data-refusal") == kind and headline in card.inner_text()
            first_screen(page, f"inspect_refusal_{kind}")
        analyse(page, ELIGIBLE, scenario=SCENARIO)
        wait_turn(page, 0)
        turn = 0
        while action(page) == "ASK" and turn < 4:
            page.get_by_role("textbox", name="Your reply", exact=True).fill("I don't know")
            page.get_by_role("button", name="Send", exact=True).click()
            turn += 1
            wait_turn(page, turn)
        card = page.locator("#aw-action")
        assert card.get_attribute("data-refusal") == "conditions_unknown", card.inner_text()
        assert "Conditions unknown" in card.inner_text() and "Still unknown" in card.inner_text()
        first_screen(page, "inspect_refusal_conditions_unknown")
    loopback_only(requests, server.url, ARTIFACTS / "browser_tour_requests.json")
    assert not dialogs


def test_evaluate_keeps_its_tab_and_the_knowledge_base_page(browser, nli_model):
    """Evaluate on six sample questions: each tab drawn (screenshots), "Suggest thresholds" leaves the
    Calibrate tab open; then the Knowledge base page."""
    ARTIFACTS.mkdir(exist_ok=True)
    with app_server(ARTIFACTS / "browser_evaluate_server.log") as server:
        page = browser.new_page(viewport={"width": 1500, "height": 1100})
        page.goto(server.url + "/Evaluate")
        items = page.get_by_role("spinbutton", name="Items (0 = all)")
        items.wait_for(timeout=120_000)
        items.fill("9")
        items.press("Enter")
        wait_idle(page)
        seed = page.get_by_role("spinbutton", name="Sample seed (−1 = first N)")
        seed.fill("3")  # a random nine: all three actions among them
        seed.press("Enter")
        wait_idle(page)
        page.get_by_role("button", name="Analyse").click()
        page.get_by_role("tab", name="Overview").wait_for(timeout=600_000)
        wait_idle(page)
        for tab in ("Overview", "Rule vs learned gate", "Sweeps", "Calibrate", "Items", "Signal strength"):
            page.get_by_role("tab", name=tab).click()
            wait_idle(page)
            scroll_to(page.get_by_role("tab", name=tab))
            first_screen(page, "evaluate_" + tab.lower().replace(" ", "_"))
        page.get_by_role("tab", name="Sweeps").click()
        page.get_by_role("tab", name="2-D: one metric over two thresholds").click()
        wait_idle(page)
        page.locator(".js-plotly-plot .heatmaplayer").first.wait_for(state="attached", timeout=30_000)
        time.sleep(1.0)  # plotly draws the heatmap image after the layer is attached
        scroll_to(page.get_by_role("tab", name="2-D: one metric over two thresholds"))
        first_screen(page, "evaluate_sweeps_2d")
        page.get_by_role("tab", name="Calibrate").click()
        wait_idle(page)
        page.get_by_role("button", name="Suggest thresholds").click()
        page.get_by_role("button", name=re.compile(r"^Apply to the sliders")).wait_for(timeout=300_000)
        wait_idle(page)
        assert page.get_by_role("tab", name="Calibrate").get_attribute("aria-selected") == "true"
        scroll_to(page.get_by_role("button", name=re.compile(r"^Apply to the sliders")))
        first_screen(page, "evaluate_calibrate_suggested")
        page.goto(server.url + "/Knowledge_base")
        page.get_by_role("heading", name="Documents", exact=True).wait_for(timeout=120_000)
        wait_idle(page)
        page.locator('[data-testid="stDataFrame"] canvas').first.wait_for(state="attached", timeout=30_000)
        time.sleep(2.0)  # the table draws its cells on the canvas after it is attached
        first_screen(page, "knowledge_base")
