"""Every console page on a phone: 390 px wide in the real headless Chromium, nothing wider than
the screen, times in the viewer's zone, CJK drawn with a CJK font (``fonts-noto-cjk``, installed
by ``.ci/run`` beside chromium). Screenshots land in docs/ when CONSOLE_SCREENSHOTS names it."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from agents_memory.console.context import Console
from tests.console.conftest import LiveServer
from tests.console.test_browser import WAIT, browser  # noqa: F401 - the fixture

pytestmark = pytest.mark.browser

PHONE = {"width": 390, "height": 844, "deviceScaleFactor": 1, "mobile": True}
CJK = "部署失败：请检查日志 デプロイ 배포"
PAGES = (
    ("status", "/", "pause"),
    ("timeline", "/timeline", "turns"),
    ("search-empty", "/search", "search-hint"),
    ("search", "/search?q=deploy", "q"),
    ("session", None, "main"),
    ("projects", "/projects", "untagged"),
    ("knowledge", "/knowledge", "new-fact"),
    ("brief", "/brief?platform=claude-code&project=shop", "brief-text"),
    ("forget", "/forget", "main"),
    ("transfer", "/transfer", "bundle"),
    ("team", "/team", "whoami"),
)


@pytest.fixture
def phone(request: pytest.FixtureRequest) -> Any:
    """The browser as a 390 px phone in Tokyo (a zone that is not the server's UTC)."""
    driver = request.getfixturevalue("browser")
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", PHONE)
    driver.execute_cdp_cmd("Emulation.setTimezoneOverride", {"timezoneId": "Asia/Tokyo"})
    return driver


def _newest_turn(console: Console) -> tuple[str, str]:
    """The newest turn says CJK at a known instant, in a session with a project; a few turns
    from another machine wait without a project."""
    with console.state.pool.connection() as conn:
        row = conn.execute(
            "UPDATE memory SET message = %s, message_at = '2027-03-04T05:06:00Z'"
            " WHERE id = (SELECT min(id) FROM memory WHERE session_id IS NOT NULL"
            " AND p_tag_id IS NOT NULL) RETURNING agent_platform, session_id",
            (CJK + "\n\n`make ship` failed on the **deploy** step",),
        ).fetchone()
        conn.execute(  # history from another machine the tagger could not file
            "INSERT INTO memory (user_id, agent_platform, role, message, cwd, session_id,"
            " tag_processed) SELECT user_id, 'codex-cli', 'user', 'old turn ' || n,"
            " '/home/old-laptop/code/tmp', 'old-laptop', true"
            " FROM users, generate_series(1, 3) n"
        )
    assert row
    return str(row[0]), str(row[1])


def _shoot(driver: Any, name: str) -> None:
    folder = os.environ.get("CONSOLE_SCREENSHOTS")
    if folder:
        driver.save_screenshot(str(Path(folder) / f"console-phone-{name}.png"))


def test_every_page_fits_a_390_px_phone_with_local_times_and_cjk(
    phone: Any, console: Console
) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as until
    from selenium.webdriver.support.ui import WebDriverWait

    platform, session = _newest_turn(console)
    wait = WebDriverWait(phone, WAIT)
    too_wide: dict[str, list[str]] = {}
    with LiveServer(console) as live:
        phone.get(live.guard.login_url())
        wait.until(until.presence_of_element_located((By.ID, "pause")))
        for name, path, marker in PAGES:
            target = path or f"/session?platform={platform}&id={session}"
            phone.get(live.origin + target)
            wait.until(until.presence_of_element_located((By.ID, marker)))
            wide = phone.execute_script(
                "const w = 390;"
                " return Array.from(document.querySelectorAll('main *, header.top *'))"
                ".filter(e => !e.closest('.scroll') && e.getBoundingClientRect().right > w + 1)"
                ".map(e => e.tagName + '.' + e.className + '#' + e.id).slice(0, 5)"
            )
            if wide or phone.execute_script(
                "return document.documentElement.scrollWidth > 390 || window.innerWidth > 390"
            ):
                too_wide[name] = wide
            _shoot(phone, name)
        phone.get(live.origin + "/timeline")
        stamp = wait.until(until.presence_of_element_located((By.CSS_SELECTOR, "time.local")))
        first = phone.find_element(By.CSS_SELECTOR, "#turns time")
        assert first.text == "2027-03-04 14:06 GMT+9", first.text
        assert stamp.get_attribute("title").endswith("UTC")
        assert CJK.split(maxsplit=1)[0] in phone.find_element(By.ID, "turns").text
    assert too_wide == {}, too_wide


def test_the_browser_has_a_cjk_font() -> None:
    """Without one the timeline's CJK turns are drawn as boxes (``.ci/run`` installs
    ``fonts-noto-cjk`` with chromium)."""
    if not shutil.which("fc-list") or not Path("/usr/bin/chromium").exists():
        pytest.skip("no fontconfig or no chromium here")
    found = subprocess.run(
        ["fc-list", ":lang=zh", "family"], capture_output=True, text=True, check=True
    )
    assert found.stdout.strip(), "no CJK font: install fonts-noto-cjk"
