"""Check the built documentation site and the gallery page in a real browser (``make docs-check``).

Serves the repository root over HTTP on 127.0.0.1 (a thread in this process), opens every HTML page
of the built site (``build/docs``) and ``gallery/index.html`` (when it exists) in headless
Chromium driven by Selenium, and fails if any page

* does not load (HTTP error, or an empty ``<body>``),
* logs a console error (JavaScript errors, failed requests for scripts, styles, images),
* shows a broken image (``complete`` but ``naturalWidth == 0``),
* links to a page or file on the site that does not exist, or to an ``#anchor`` that the target
  page lacks.

Links to other sites are not followed (the check runs offline); ``mailto:`` and ``javascript:``
links are skipped. Chromium and its driver come from Debian (``apt-get install -y chromium
chromium-driver``); Selenium from PyPI (the ``docs`` extra).

Usage:
    python tools/check_site.py [--site build/docs] [--gallery gallery] [--max-pages N]
"""

from __future__ import annotations

import argparse
import functools
import http.server
import shutil
import sys
import threading
import time
from pathlib import Path
from urllib.parse import unquote, urldefrag, urljoin, urlparse

ROOT = Path(__file__).resolve().parent.parent

# Collected in the page: every link target, every anchor id/name, images that failed.
_PAGE_FACTS = """
const links = Array.from(document.querySelectorAll('a[href]')).map(a => a.href);
const ids = Array.from(document.querySelectorAll('[id], a[name]')).map(e => e.id || e.name);
const broken = Array.from(document.images)
    .filter(img => img.complete && img.naturalWidth === 0)
    .map(img => img.currentSrc || img.src);
const pending = Array.from(document.images).filter(img => !img.complete).length;
const bodyText = document.body ? document.body.textContent.trim().length : 0;
return {links, ids, broken, pending, bodyText, url: document.URL, ready: document.readyState};
"""


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format, *args):  # noqa: A002 - the base class's name
        pass


def serve(directory: Path) -> tuple[http.server.ThreadingHTTPServer, str]:
    """Serve ``directory`` on a free port of 127.0.0.1 in a daemon thread; returns (server, url)."""
    handler = functools.partial(_QuietHandler, directory=str(directory))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/"


def find_binary(*names: str) -> str | None:
    for name in names:
        found = shutil.which(name) or (Path("/usr/bin", name).is_file() and f"/usr/bin/{name}")
        if found:
            return str(found)
    return None


def make_driver():
    """Headless Chromium through chromedriver, with the browser's console log captured."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    chromium = find_binary("chromium", "chromium-browser", "google-chrome")
    driver_path = find_binary("chromedriver")
    if not chromium or not driver_path:
        raise SystemExit(
            "check_site: needs Chromium and chromedriver (Debian: apt-get install -y chromium "
            f"chromium-driver); found chromium={chromium}, chromedriver={driver_path}"
        )
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(driver_path), options=options)
    driver.set_page_load_timeout(60)
    return driver


def load(driver, url: str) -> dict:
    """Open ``url`` and return :data:`_PAGE_FACTS` of *that* document, once it is complete.

    Between two pages of one site, chromedriver's script call can still reach the previous
    document right after ``get`` returns; the facts are read until they come from ``url``, are
    complete, and give the same anchors twice in a row.
    """
    driver.get("about:blank")
    driver.get(url)
    wanted = urldefrag(url)[0]
    previous = None
    for _ in range(50):
        facts = driver.execute_script(_PAGE_FACTS)
        if urldefrag(facts["url"])[0] == wanted and facts["ready"] == "complete":
            if previous is not None and len(previous["ids"]) == len(facts["ids"]):
                return facts
            previous = facts
        time.sleep(0.05)
    raise RuntimeError(f"check_site: {url} did not finish loading")


def check_page(driver, url: str, base: str, pages: dict) -> list[str]:
    """Load one page; returns its problems and records its links and anchors in ``pages``."""
    problems: list[str] = []
    facts = load(driver, url)
    deadline = time.monotonic() + 10
    if facts["pending"]:  # lazy images load when scrolled to: ask for all of them now
        driver.execute_script(
            "document.querySelectorAll('img[loading=lazy]').forEach(i => i.loading = 'eager');"
        )
    while facts["pending"] and time.monotonic() < deadline:
        time.sleep(0.2)
        facts = driver.execute_script(_PAGE_FACTS)
    for entry in driver.get_log("browser"):
        if entry.get("level") == "SEVERE":
            problems.append(f"console error: {entry.get('message')}")
    if not facts["bodyText"]:
        problems.append("empty page")
    for src in facts["broken"]:
        problems.append(f"broken image: {src}")
    if facts["pending"]:
        problems.append(f"{facts['pending']} images still loading after 10 s")
    pages[url] = {"links": facts["links"], "ids": set(facts["ids"])}
    return problems


def local_target(link: str, base: str) -> tuple[str, str] | None:
    """(page URL without fragment, fragment) for a link into the served tree, else None."""
    if not link.startswith(base):
        return None
    page, fragment = urldefrag(link)
    return page, unquote(fragment)


def path_of(url: str, base: str, root: Path) -> Path:
    rel = unquote(urlparse(url).path)[len(urlparse(base).path) :]
    path = root / rel
    return path / "index.html" if rel.endswith("/") or path.is_dir() else path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--site", type=Path, default=ROOT / "build" / "docs")
    parser.add_argument("--gallery", type=Path, default=ROOT / "gallery")
    parser.add_argument("--max-pages", type=int, default=0, help="check at most N pages (0: all)")
    args = parser.parse_args(argv)

    site = args.site.resolve()
    if not (site / "index.html").is_file():
        print(f"check_site: no built site at {site} (run `make docs` first)")
        return 2
    # Serve the folder holding both the site and the gallery, so links between them resolve.
    gallery = args.gallery.resolve()
    served = Path(*_common_parts(site, gallery)) if gallery.exists() else site
    server, base = serve(served)

    def url_for(path: Path) -> str:
        return urljoin(base, path.relative_to(served).as_posix())

    targets = sorted(site.rglob("*.html"))
    if (gallery / "index.html").is_file():
        targets.append(gallery / "index.html")
    else:
        print(f"check_site: {gallery / 'index.html'} does not exist (run `make demo`); skipped")
    if args.max_pages:
        targets = targets[: args.max_pages]

    start = time.perf_counter()
    problems: dict[str, list[str]] = {}
    pages: dict[str, dict] = {}
    driver = make_driver()
    try:
        for i, path in enumerate(targets, start=1):
            url = url_for(path)
            found = check_page(driver, url, base, pages)
            if found:
                problems[url] = found
            if i % 25 == 0 or i == len(targets):
                print(f"check_site: {i}/{len(targets)} pages loaded", flush=True)
        # Links: every local target must exist; an anchor must exist on its (loaded) page.
        anchor_cache: dict[str, set[str]] = {}
        for url, facts in pages.items():
            for link in facts["links"]:
                target = local_target(link, base)
                if target is None:
                    continue
                page, fragment = target
                file = path_of(page, base, served)
                if not file.exists():
                    problems.setdefault(url, []).append(f"broken link: {link}")
                    continue
                if not fragment or file.suffix != ".html":
                    continue
                if page not in pages and page not in anchor_cache:
                    anchor_cache[page] = set(load(driver, page)["ids"])
                ids = pages[page]["ids"] if page in pages else anchor_cache[page]
                if fragment not in ids:
                    problems.setdefault(url, []).append(f"broken anchor: {link}")
    finally:
        driver.quit()
        server.shutdown()

    seconds = time.perf_counter() - start
    n_links = sum(len(f["links"]) for f in pages.values())
    if problems:
        for url, found in problems.items():
            print(f"FAIL {url[len(base) :]}")
            for problem in found[:20]:
                print(f"    {problem}")
            if len(found) > 20:
                print(f"    ... and {len(found) - 20} more")
        print(f"check_site: {len(problems)} of {len(pages)} pages have problems ({seconds:.0f} s)")
        return 1
    print(f"check_site: {len(pages)} pages, {n_links} links: all load, no broken link or image, "
          f"no console error ({seconds:.0f} s)")
    return 0


def _common_parts(a: Path, b: Path) -> tuple[str, ...]:
    parts = []
    for x, y in zip(a.parts, b.parts):
        if x != y:
            break
        parts.append(x)
    return tuple(parts)


if __name__ == "__main__":
    sys.exit(main())
