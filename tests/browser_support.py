"""Start the workbench on a free loopback port and drive Debian's Chromium through Playwright
(shared by tests/test_browser.py and bench/bench_ui.py)."""
from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

from tests.processes import free_port, stop

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = "/usr/bin/chromium"
# Headless Chromium without any of its own background traffic (TOOLCHAIN.md).
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def _stat(pid: int) -> list[str]:
    """Fields of /proc/PID/stat after the command name (index 1 is the parent, 11/12 user/system ticks)."""
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()


def process_cpu_seconds(pid: int) -> float:
    """CPU time (user + system, all threads) a process has used so far (Linux /proc)."""
    fields = _stat(pid)
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def browser_cpu_seconds() -> float:
    """CPU time used so far by the Chromium processes this Python process started (its descendants)."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                parents[int(entry.name)] = int(_stat(int(entry.name))[1])
            except (OSError, IndexError, ValueError):
                continue
    me, total = os.getpid(), 0.0
    for pid in parents:
        ancestor = parents.get(pid)
        while ancestor and ancestor != me:
            ancestor = parents.get(ancestor)
        if ancestor == me:
            try:
                if "chrom" in Path(f"/proc/{pid}/comm").read_text():
                    total += process_cpu_seconds(pid)
            except OSError:
                continue
    return total


@dataclass(frozen=True)
class Server:
    url: str
    pid: int

    def cpu_seconds(self) -> float:
        return process_cpu_seconds(self.pid)


@contextlib.contextmanager
def app_server(log_path: Path, timeout: float = 120) -> Iterator[Server]:
    """``streamlit run app/Inspect.py`` from the project root on a free port; stopped afterwards."""
    port = free_port()
    log = open(log_path, "w")
    proc = subprocess.Popen([sys.executable, "-m", "streamlit", "run", "app/Inspect.py", "--server.port", str(port)],
                            cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, env=dict(os.environ))
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + timeout
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"the app exited with {proc.returncode}; see {log_path}")
            try:
                with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"the app did not answer on {url} within {timeout} s; see {log_path}")
            time.sleep(0.5)
        yield Server(url, proc.pid)
    finally:
        stop(proc)
        log.close()


def launch(playwright):
    return playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)


def watched_page(browser, width: int, height: int):
    """(a new page, the URLs it requests, the dialogs it opened): every dialog is dismissed and
    recorded, since a dialog means document text ran as script."""
    page = browser.new_page(viewport={"width": width, "height": height})
    requests, dialogs = [], []
    page.on("request", lambda r: requests.append(r.url))
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    return page, requests, dialogs


def question_box(page):
    return page.get_by_role("textbox", name="Question", exact=True)


# Polled on animation frames: reading one attribute keeps the page's main thread free for rendering
# (a text locator re-scans the whole page each poll, which on a busy machine slows what it measures).
CARD_FOR = "(q) => document.querySelector('#aw-action')?.dataset.question === q"
CARD_CHANGED = "(d) => { const c = document.querySelector('#aw-action'); return !!c && c.dataset.decision !== d; }"


def analyse(page, question: str, timeout_ms: float = 180_000, scenario: str | None = None) -> float:
    """Type a question (and a scenario), press Analyse and wait for the action card of that question;
    seconds taken."""
    if scenario is not None:
        page.get_by_role("textbox", name="Scenario (optional): facts about the asker", exact=True).fill(scenario)
    question_box(page).fill(question)
    start = time.perf_counter()
    page.get_by_role("button", name="Analyse").click()
    page.wait_for_function(CARD_FOR, arg=question, polling="raf", timeout=timeout_ms)
    return time.perf_counter() - start


# The card shows dialogue turn t and the run that drew it has finished: the reply buttons and the
# Dialogue panel come after the card, and a click on a half-drawn page would answer the old question.
TURN_SHOWN = ("(t) => document.querySelector('#aw-action')?.dataset.turn === String(t) && "
              "document.querySelector('[data-testid=stApp]')?.dataset.testScriptState === 'notRunning'")


def wait_turn(page, turn: int, timeout_ms: float = 180_000) -> None:
    """Wait until the page is drawn at dialogue turn ``turn`` (a reply was read, or the dialogue rewound)."""
    page.wait_for_function(TURN_SHOWN, arg=turn, polling="raf", timeout=timeout_ms)


IDLE = "() => document.querySelector('[data-testid=stApp]')?.dataset.testScriptState === 'notRunning'"


def wait_idle(page, timeout_ms: float = 180_000) -> None:
    """Wait until the script run that draws the page has finished (every panel is on the page)."""
    page.wait_for_function(IDLE, polling="raf", timeout=timeout_ms)


def scroll_to(locator, attempts: int = 3) -> None:
    """Scroll ``locator`` into view, finding it again when Streamlit redraws it meanwhile (a rerun can
    replace the element between the lookup and the scroll: "Element is not attached to the DOM")."""
    from playwright.sync_api import Error
    for attempt in range(attempts):
        try:
            locator.scroll_into_view_if_needed()
            return
        except Error as exc:
            if "not attached" not in str(exc) or attempt == attempts - 1:
                raise


def decision_digest(page) -> str:
    return page.locator("#aw-action").get_attribute("data-decision")


def wait_regated(page, previous_digest: str, timeout_ms: float = 30_000) -> None:
    """Wait until the action card shows a decision other than ``previous_digest``."""
    page.wait_for_function(CARD_CHANGED, arg=previous_digest, polling="raf", timeout=timeout_ms)


def gate_slider(page, label: str):
    """The thumb of a sidebar slider, found by its label."""
    box = page.locator('[data-testid="stSidebar"] [data-testid="stSlider"]').filter(
        has=page.get_by_text(label))  # not exact: a changed value adds ● to the label
    return box.get_by_role("slider")


def action(page) -> str:
    return page.locator("#aw-action").get_attribute("data-action")
