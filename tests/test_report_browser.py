"""Reports open in headless Chromium without page errors and show their figures.

Chromium comes from Debian's package (installed by ``browser.ensure_chromium`` when missing
and running as root); elsewhere the test is skipped with the reason."""

from __future__ import annotations

import os
import shutil

import pytest

import browser
from conftest import run_cli
from test_cli import TCP_SCENARIO


@pytest.fixture(scope="module")
def chromium():
    try:
        return browser.ensure_chromium()
    except browser.ChromiumUnavailable as e:
        pytest.skip(str(e))


def _keep(png, name):
    """ECNLAB_SCREENSHOTS=DIR keeps the screenshots for a person to look at."""
    keep = os.environ.get("ECNLAB_SCREENSHOTS")
    if keep:
        os.makedirs(keep, exist_ok=True)
        shutil.copy(png, os.path.join(keep, name))


def test_run_report_renders_with_figures(chromium, tmp_path):
    scen = tmp_path / "tcp.toml"
    scen.write_text(TCP_SCENARIO)
    out = tmp_path / "res"
    p = run_cli("run", scen, "--out", out, "-q", "--report")
    assert p.returncode == 0, p.stderr
    stats = browser.check(out / "report.html", tmp_path / "shot.png")
    _keep(tmp_path / "shot.png", "run_report.png")
    assert stats["colourful_pixels"] > 1000


def test_reproduce_report_renders_with_figures(chromium, tmp_path):
    out = tmp_path / "core"
    p = run_cli("reproduce", "core.mdl", "--quick", "--seeds", "1", "--out", out, "-q")
    assert p.returncode == 0, p.stderr
    browser.check(out / "report.html", tmp_path / "shot.png")
    _keep(tmp_path / "shot.png", "reproduce_report.png")


def test_the_check_rejects_a_page_without_figures(chromium, tmp_path):
    page = tmp_path / "empty.html"
    page.write_text("<!DOCTYPE html><html><body><p>only words</p></body></html>")
    with pytest.raises(AssertionError, match="blank|no figure"):
        browser.check(page, tmp_path / "shot.png")
