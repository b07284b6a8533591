"""The gallery page that ``examples/run_all.py`` writes: sections per package, thumbnails, links."""

import re
from html.parser import HTMLParser
from pathlib import Path

from examples.run_all import Outcome, discover, package_of, write_index


class _Collect(HTMLParser):
    def __init__(self):
        super().__init__()
        self.links, self.images, self.ids, self.h2 = [], [], set(), []
        self._in_h2 = False

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if "id" in attrs:
            self.ids.add(attrs["id"])
        if tag == "a" and "href" in attrs:
            self.links.append(attrs["href"])
        if tag == "img":
            self.images.append(attrs["src"])
        self._in_h2 = tag == "h2"

    def handle_data(self, data):
        if self._in_h2:
            self.h2.append(data)
            self._in_h2 = False


def _outcome(name, images=()):
    return Outcome(name=name, title=f"title of {name}", ok=True, seconds=1.0, result="42",
                   images=list(images), log=f"logs/{name.replace('/', '-')}.log")


def test_sections_thumbnails_and_source_links(tmp_path: Path):
    (tmp_path / "logs").mkdir()
    (tmp_path / "raytrace-01_a.png").write_bytes(b"\x89PNG fake")
    names = [e.name for e in discover()]
    core = next(n for n in names if "/" not in n)
    ray = next(n for n in names if n.startswith("raytrace/"))
    quantum = next(n for n in names if n.startswith("quantum/"))
    ray_log = f"logs/{ray.replace('/', '-')}.log"
    (tmp_path / ray_log).write_text("log")
    outcomes = [_outcome(core), _outcome(ray, ["raytrace-01_a.png", "missing.png"]),
                _outcome(quantum)]
    page = _Collect()
    page.feed(write_index(tmp_path, outcomes).read_text(encoding="utf-8"))
    # One section per package, in the runner's order, each with its anchor.
    assert page.h2 == ["diffsci: the core", "raytrace: inverse rendering",
                       "quantum: variational circuits"]
    assert {"pkg-core", "pkg-raytrace", "pkg-quantum", core, ray, quantum} <= page.ids
    # The existing image is the raytrace thumbnail and its figure; the missing one is not shown.
    assert page.images == ["raytrace-01_a.png", "raytrace-01_a.png"]
    # Each example links to its own source file, which exists relative to the page.
    sources = [link for link in page.links if link.endswith(".py")]
    assert len(sources) == 3
    for link, name in zip(sources, (core, ray, quantum)):
        assert link.endswith(f"examples/{name}.py")
        assert (tmp_path / link).resolve().is_file()
    # Logs are linked only where they exist; in-page links point at existing anchors.
    assert [link for link in page.links if link.endswith(".log")] == [ray_log]
    for link in page.links:
        if link.startswith("#"):
            assert link[1:] in page.ids, link


def test_package_of():
    assert package_of("01_taylor_sin") == ""
    assert package_of("finance/05_mc_greeks_bands") == "finance"
    assert re.fullmatch(r"\d+_\w+", "01_taylor_sin")
