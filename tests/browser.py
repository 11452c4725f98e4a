"""Opens an HTML report in headless Chromium and checks what a person would see.

Usable as a script (``python tests/browser.py REPORT.html [SCREENSHOT.png]``) and from
pytest. When ``/usr/bin/chromium`` is missing it installs Debian's ``chromium`` package with
apt-get, but only when running as root; otherwise it reports that Chromium is unavailable.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

CHROMIUM = Path("/usr/bin/chromium")
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--hide-scrollbars",
    "--enable-logging=stderr",
    "--v=0",
]


class ChromiumUnavailable(RuntimeError):
    pass


def ensure_chromium() -> Path:
    if CHROMIUM.exists():
        return CHROMIUM
    if os.geteuid() != 0 or shutil.which("apt-get") is None:
        raise ChromiumUnavailable("/usr/bin/chromium is missing and this is not root with apt-get")
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    subprocess.run(["apt-get", "update", "-qq"], check=True, env=env, stdout=subprocess.DEVNULL)
    subprocess.run(
        ["apt-get", "install", "-y", "-qq", "--no-install-recommends", "chromium"],
        check=True,
        env=env,
        stdout=subprocess.DEVNULL,
    )
    if not CHROMIUM.exists():
        raise ChromiumUnavailable("apt-get installed chromium but /usr/bin/chromium is absent")
    return CHROMIUM


# Console lines that mean the page itself is broken (not Chromium's own chatter about
# D-Bus, GPU or sandboxing in a container).
_PAGE_ERRORS = re.compile(r"Uncaught|Failed to load resource|ERR_FILE_NOT_FOUND|Not allowed to load|net::ERR_")


def screenshot(html: Path, png: Path, width: int = 1200, height: int = 4000, timeout: float = 120) -> list[str]:
    """Renders ``html`` to ``png``; returns the console lines that signal page errors."""
    chromium = ensure_chromium()
    png.unlink(missing_ok=True)
    with tempfile.TemporaryDirectory(prefix="ecnlab-chromium-") as profile:
        cmd = [
            str(chromium),
            *FLAGS,
            f"--user-data-dir={profile}",
            f"--window-size={width},{height}",
            f"--screenshot={png}",
            html.resolve().as_uri(),
        ]
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)
    if not png.is_file():
        raise RuntimeError(f"chromium wrote no screenshot (exit {p.returncode}): {p.stderr[-2000:]}")
    return [line for line in p.stderr.splitlines() if _PAGE_ERRORS.search(line)]


def picture_stats(png: Path) -> dict[str, float]:
    """How much of the screenshot is drawn: fraction of non-white pixels and of pixels in the
    colours ecnlab's figures use for data (saturated blues/oranges/greens)."""
    from PIL import Image

    img = Image.open(png).convert("RGB")
    img.thumbnail((600, 2000))
    px = list(img.get_flattened_data()) if hasattr(img, "get_flattened_data") else list(img.getdata())
    n = len(px)
    non_white = sum(1 for r, g, b in px if r < 235 or g < 235 or b < 235)
    colourful = sum(1 for r, g, b in px if max(r, g, b) - min(r, g, b) > 60)
    return {"pixels": n, "non_white": non_white / n, "colourful": colourful / n, "colourful_pixels": colourful}


def check(html: Path, png: Path) -> dict[str, float]:
    errors = screenshot(html, png)
    if errors:
        raise AssertionError("page errors in chromium's console:\n" + "\n".join(errors))
    stats = picture_stats(png)
    if stats["non_white"] < 0.02:
        raise AssertionError(f"the screenshot is blank: {stats}")
    if stats["colourful_pixels"] < 300:
        raise AssertionError(f"no figure is visible in the screenshot: {stats}")
    return stats


if __name__ == "__main__":
    if len(sys.argv) not in (2, 3):
        sys.exit("usage: python tests/browser.py REPORT.html [SCREENSHOT.png]")
    html_path = Path(sys.argv[1])
    out = Path(sys.argv[2]) if len(sys.argv) == 3 else html_path.with_suffix(".png")
    print(check(html_path, out), "->", out)
