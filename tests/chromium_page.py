"""Opening a report page in headless Chromium (Debian's /usr/bin/chromium): whether it loads cleanly (no console
error, no script error, every image decoded) and a full-page screenshot. Used by the report tests.

The page is copied with a small probe script first in its head: it records console errors, script errors and
resources that fail to load, and after the load event writes them, with the number of images and those that did
not decode, into a ``<pre id="fctlab-page-check">`` that ``--dump-dom`` shows. (The report itself has no script;
headless Chromium prints no console messages, hence the probe.)
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

CHROMIUM = Path("/usr/bin/chromium")

PROBE = """<script>
(function () {
  var errors = [];
  window.addEventListener("error", function (ev) {
    var t = ev.target;
    errors.push(t && t !== window && t.tagName
      ? "failed to load " + t.tagName + " " + String(t.src || t.href).slice(0, 80) : String(ev.message));
  }, true);
  var consoleError = console.error;
  console.error = function () {
    errors.push(Array.prototype.join.call(arguments, " "));
    consoleError.apply(console, arguments);
  };
  window.addEventListener("load", function () {
    var images = Array.prototype.slice.call(document.images);
    var broken = images.filter(function (i) { return !(i.complete && i.naturalWidth > 0); })
      .map(function (i) { return String(i.alt || i.src).slice(0, 80); });
    var out = document.createElement("pre");
    out.id = "fctlab-page-check";
    out.textContent = JSON.stringify({images: images.length, broken: broken, errors: errors,
      width: document.documentElement.scrollWidth, height: document.documentElement.scrollHeight});
    document.body.appendChild(out);
  });
})();
</script>"""


def chromium(*args: str, user_dir: Path, timeout: float = 180) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(CHROMIUM), "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run", "--hide-scrollbars",
         f"--user-data-dir={user_dir}", *args],
        capture_output=True, text=True, timeout=timeout, check=False,
    )


def check_page(html_path: Path, work: Path, width: int = 1400) -> dict:
    """Load ``html_path`` (a copy with the probe, beside the original so that relative paths still resolve) and
    return the probe's findings: ``images`` (count), ``broken`` (images that did not decode), ``errors``
    (console and script errors, failed loads), ``width`` and ``height`` of the page (CSS pixels)."""
    html_path = Path(html_path)
    page = html_path.read_text(encoding="utf-8")
    probed = html_path.with_name(f".probe-{html_path.name}")
    probed.write_text(re.sub(r"<head>", "<head>" + PROBE.replace("\\", "\\\\"), page, count=1), encoding="utf-8")
    try:
        r = chromium(f"--window-size={width},1000", "--virtual-time-budget=10000", "--dump-dom",
                     probed.resolve().as_uri(), user_dir=work / "chromium-profile")
    finally:
        probed.unlink()
    assert r.returncode == 0, r.stderr[-2000:]
    m = re.search(r'<pre id="fctlab-page-check">(.*?)</pre>', r.stdout, re.S)
    assert m, "the probe did not report: the page's load event never came\n" + r.stdout[-1000:]
    return json.loads(m.group(1).replace("&quot;", '"').replace("&lt;", "<").replace("&gt;", ">")
                      .replace("&amp;", "&"))


def screenshot(html_path: Path, png: Path, work: Path, width: int = 1400, height: int | None = None) -> Path:
    """A screenshot of the whole page (``height`` None: the page's own height, measured first)."""
    if height is None:
        height = int(check_page(html_path, work, width)["height"])
    r = chromium(f"--screenshot={png}", f"--window-size={width},{height}", Path(html_path).resolve().as_uri(),
                 user_dir=work / "chromium-profile-shot")
    assert r.returncode == 0, r.stderr[-2000:]
    return png
