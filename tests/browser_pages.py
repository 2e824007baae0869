"""The HTML report in a real headless browser (Debian's chromium through selenium), for tests/sim: start it (the
``browser`` fixture of tests/sim/conftest.py), open a page and wait until every chart is drawn, read the DOM.

The browser tests need chromium and chromedriver (``make test`` installs them with apt-get where it can); without
them they are skipped and say why (PACKSCHED_REQUIRE_BROWSER=1 makes that a failure instead)."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
CHROMEDRIVER = shutil.which("chromedriver")


def browser_missing() -> str | None:
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "selenium is not installed (it is in the dev extra: pip install -e '.[dev]')"
    if CHROMIUM is None or CHROMEDRIVER is None:
        return (
            "no chromium/chromedriver on PATH: `make test` installs Debian's chromium and chromium-driver with "
            "apt-get where it can (as root); elsewhere install them to run the HTML report's browser test"
        )
    return None


def start_browser() -> Iterator[Any]:
    why = browser_missing()
    if why is not None:
        if os.environ.get("PACKSCHED_REQUIRE_BROWSER"):
            pytest.fail(f"PACKSCHED_REQUIRE_BROWSER is set but {why}")
        pytest.skip(why)
    from selenium import webdriver
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    options = Options()
    options.binary_location = str(CHROMIUM)
    for arg in (
        "--headless=new",
        "--no-sandbox",
        "--disable-dev-shm-usage",
        "--disable-gpu",
        "--window-size=1400,1000",
        "--disable-extensions",
        "--no-first-run",
    ):
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(str(CHROMEDRIVER)), options=options)
    try:
        yield driver
    finally:
        driver.quit()


def load(driver: Any, page: Path) -> None:
    """Open the page; wait until it says it is ready (every chart drawn); no console error, no Vega warning."""
    from selenium.webdriver.support.ui import WebDriverWait

    driver.get(page.resolve().as_uri())
    WebDriverWait(driver, 30).until(lambda d: d.execute_script("return document.body.dataset.ready === 'true'"))
    log = driver.get_log("browser")
    errors = [e for e in log if e["level"] in ("SEVERE", "ERROR")]
    assert not errors, f"console errors on {page.name}: {errors}"
    warnings = [e for e in log if '"WARN"' in e["message"]]  # Vega's warnings: a spec it reads otherwise
    assert not warnings, f"Vega warnings on {page.name}: {warnings}"


def sizes(driver: Any, css: str) -> list[tuple[float, float]]:
    boxes: list[list[float]] = driver.execute_script(
        "return [...document.querySelectorAll(arguments[0])].map(e => {const r = e.getBoundingClientRect();"
        " return [r.width, r.height];})",
        css,
    )
    return [(w, h) for w, h in boxes]


def screenshot(driver: Any, path: Path) -> Path:
    height = driver.execute_script("return document.documentElement.scrollHeight")
    driver.set_window_size(1400, min(int(height) + 120, 8000))
    driver.save_screenshot(str(path))
    driver.set_window_size(1400, 1000)
    assert path.stat().st_size > 10_000
    print(f"screenshot: {path}")
    return path


def rows(driver: Any, table: str) -> int:
    return int(driver.execute_script(f"return document.querySelectorAll('#{table}-table tbody tr').length"))
