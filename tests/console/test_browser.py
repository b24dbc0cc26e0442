"""The console in a real headless Chromium (Debian's chromium and chromium-driver, never a
downloaded browser), against a pool captured from the real fixtures. Every request the browser
makes must stay on 127.0.0.1. Screenshots of the main pages land in docs/ when
CONSOLE_SCREENSHOTS names that folder."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agents_memory.console.context import Console
from agents_memory.store.memories import NewMemory, insert_memories, notify_new_memories
from tests.console.conftest import LiveServer

pytestmark = pytest.mark.browser

CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")
WAIT = 20
_BROWSER_OWN = ("chrome://", "chrome-untrusted://", "data:", "about:", "blob:")
"""Schemes the browser serves itself (its new-tab page, the empty favicon): no network."""


@pytest.fixture
def browser() -> Iterator[Any]:
    if not (CHROMIUM.exists() and CHROMEDRIVER.exists()):
        pytest.skip("Debian's chromium and chromium-driver are not installed")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    profile = tempfile.mkdtemp(prefix="am-chromium-")
    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-dev-shm-usage",
        "--window-size=1280,800",
        f"--user-data-dir={profile}",
    ):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"performance": "ALL"})
    driver = webdriver.Chrome(service=Service(str(CHROMEDRIVER)), options=options)
    driver.set_page_load_timeout(60)
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


def _requested_urls(driver: Any) -> list[str]:
    urls = []
    for entry in driver.get_log("performance"):
        message = json.loads(entry["message"])["message"]
        if message.get("method") == "Network.requestWillBeSent":
            urls.append(message["params"]["request"]["url"])
    return urls


def _shoot(driver: Any, name: str) -> None:
    folder = os.environ.get("CONSOLE_SCREENSHOTS")
    if folder:
        driver.save_screenshot(str(Path(folder) / f"console-{name}.png"))


def _capture_turn(console: Console, text: str) -> None:
    """A turn stored the way capture stores one: insert, NOTIFY, commit."""
    with console.state.pool.connection() as conn:
        insert_memories(
            conn,
            console.user_id,
            [NewMemory("codex-cli", "user", text, session_id="live-session")],
        )
        notify_new_memories(conn, 1)


def _session_with_project(console: Console) -> tuple[str, str]:
    with console.state.pool.connection() as conn:
        row = conn.execute(
            "SELECT agent_platform, session_id FROM memory WHERE session_id IS NOT NULL"
            " AND p_tag_id IS NOT NULL ORDER BY id LIMIT 1"
        ).fetchone()
    assert row
    return str(row[0]), str(row[1])


def test_the_console_works_in_a_real_browser_and_stays_on_this_machine(
    browser: Any, console: Console, tmp_path: Path
) -> None:
    """Long because it is one browser session walking every page and flow in order."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as until
    from selenium.webdriver.support.ui import WebDriverWait

    wait = WebDriverWait(browser, WAIT)
    with LiveServer(console) as live:
        browser.get(live.guard.login_url())
        wait.until(until.presence_of_element_located((By.ID, "pause")))
        _shoot(browser, "status")

        for path, marker in (
            ("/timeline", "turns"),
            ("/projects", "tag-shop"),
            ("/knowledge", "new-fact"),
            ("/brief?platform=claude-code&project=shop", "hook-output"),
            ("/forget", "main"),
            ("/transfer", "bundle"),
        ):
            browser.get(live.origin + path)
            wait.until(until.presence_of_element_located((By.ID, marker)))
            assert browser.find_elements(By.CSS_SELECTOR, "main h1"), path

        browser.get(live.origin + "/timeline?platform=claude-code")
        wait.until(until.presence_of_element_located((By.CSS_SELECTOR, "#live-state.on")))
        _shoot(browser, "timeline")
        browser.get(live.origin + "/timeline")
        wait.until(until.presence_of_element_located((By.CSS_SELECTOR, "#live-state.on")))
        _capture_turn(console, "a turn captured while the page is open: zebra-7731")
        wait.until(until.text_to_be_present_in_element((By.ID, "turns"), "zebra-7731"))

        browser.get(live.origin + "/search")
        box = wait.until(until.presence_of_element_located((By.ID, "q")))
        box.send_keys("deploy\n")
        first = wait.until(until.element_to_be_clickable((By.CSS_SELECTOR, "a.open")))
        _shoot(browser, "search")
        first.click()
        wait.until(until.presence_of_element_located((By.CSS_SELECTOR, ".conversation")))
        assert "#turn-" in browser.current_url
        platform, session = _session_with_project(console)
        browser.get(f"{live.origin}/session?platform={platform}&id={session}")
        wait.until(until.presence_of_element_located((By.CSS_SELECTOR, ".summary")))
        _shoot(browser, "session")

        browser.get(live.origin + "/projects")
        confirm = wait.until(
            until.element_to_be_clickable(
                (By.CSS_SELECTOR, "li.decision form button[value=confirm]")
            )
        )
        confirm.click()
        wait.until(until.text_to_be_present_in_element((By.CSS_SELECTOR, ".notice"), "payments"))
        assert browser.find_elements(By.ID, "tag-payments")

        browser.get(f"{live.origin}/search?q=zebra-7731")
        wait.until(until.presence_of_element_located((By.CSS_SELECTOR, "a.open")))
        browser.get(f"{live.origin}/forget?session=live-session&platform=codex-cli")
        wait.until(until.element_to_be_clickable((By.ID, "forget-now"))).click()
        wait.until(until.text_to_be_present_in_element((By.CSS_SELECTOR, ".notice"), "forgot 1"))
        browser.get(f"{live.origin}/search?q=zebra-7731")
        wait.until(until.presence_of_element_located((By.CSS_SELECTOR, "p.meta")))
        assert not browser.find_elements(By.CSS_SELECTOR, "a.open")

        browser.get(live.origin + "/knowledge")
        archive = wait.until(until.element_to_be_clickable((By.CSS_SELECTOR, "button.archive")))
        archive.click()
        restore = wait.until(
            until.element_to_be_clickable((By.CSS_SELECTOR, ".archived-fact button"))
        )
        restore.click()
        wait.until(until.text_to_be_present_in_element((By.CSS_SELECTOR, ".notice"), "restored"))

        bundle = _download_bundle(console, tmp_path)
        browser.get(live.origin + "/transfer")
        wait.until(until.presence_of_element_located((By.ID, "bundle"))).send_keys(str(bundle))
        browser.find_element(By.ID, "upload").click()
        wait.until(until.element_to_be_clickable((By.ID, "import-now"))).click()
        wait.until(until.text_to_be_present_in_element((By.ID, "import-report"), "Imported"))

        urls = _requested_urls(browser)
    network = [u for u in urls if not u.startswith(_BROWSER_OWN)]
    assert any(u.startswith(live.origin + "/static/console.js") for u in network)
    foreign = [u for u in network if not u.startswith(live.origin + "/")]
    assert foreign == [], foreign


def _download_bundle(console: Console, tmp_path: Path) -> Path:
    """An export bundle written by the same service the download link calls."""
    from datetime import datetime

    from agents_memory.ops.export import ExportRequest, export

    path = tmp_path / "shop.zip"
    export(console.settings, ExportRequest(path, project="shop"), now=datetime.now().astimezone())
    return path
