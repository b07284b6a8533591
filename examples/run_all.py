"""Run the example gallery and write a browsable ``gallery/index.html``.

Discovers the flat numbered scripts ``examples/NN_name.py`` and ``examples/<pkg>/NN_name.py``, runs
each in its own subprocess (this Python, cwd = the repository root, ``MPLBACKEND=Agg``,
``DIFFSCI_GALLERY_DIR`` = the gallery folder, the repository root on ``PYTHONPATH``) and shows one
progress line per example, plus the example's latest output every 15 s while a long one runs.
Each example writes PNGs into the gallery folder and prints a final
``RESULT: ...`` line; the runner attributes to each example the PNGs it created or rewrote, keeps
its full output in ``gallery/logs/``, and writes ``gallery/index.html``: one section per package
(the folder below ``examples/``) opening with a grid of thumbnails, then per example its name, the
first line of its docstring, its RESULT line, its runtime, its images and links to its source and
log.

Results are kept in ``gallery/results.json``, so running a few examples with ``-k`` refreshes their
sections and keeps the others from earlier runs. Every selected example runs even after a failure;
failures are reported at the end and the exit status is 1 (2 for a selection that matches nothing).

Usage:
    python -m examples                 # every example, quick settings
    python -m examples --full          # every example, full settings (passed to each script)
    python -m examples -k taylor -k quantum/   # only examples whose name contains a substring
    python -m examples --list          # list the examples and stop
"""

from __future__ import annotations

import argparse
import ast
import datetime
import html
import json
import os
import re
import subprocess
import sys
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from urllib.parse import quote

EXAMPLES_DIR = Path(__file__).resolve().parent
REPO_ROOT = EXAMPLES_DIR.parent
DEFAULT_GALLERY = REPO_ROOT / "gallery"
SCRIPT_NAME = re.compile(r"^\d+_\w+\.py$")
RESULT_PREFIX = "RESULT:"
TAIL_LINES = 25
HEARTBEAT = 15.0  # seconds between progress lines of a long example (its latest output)


@dataclass(frozen=True)
class Example:
    """One gallery script: ``name`` is its path below ``examples/`` without ``.py``."""

    name: str
    path: Path
    title: str


@dataclass
class Outcome:
    """What one run of an example produced (stored in ``gallery/results.json``)."""

    name: str
    title: str
    ok: bool
    seconds: float
    result: str | None = None
    images: list[str] = field(default_factory=list)  # relative to the gallery folder
    log: str = ""  # relative to the gallery folder
    reason: str = ""  # why it failed
    output_tail: str = ""  # last lines of output, kept for failures
    full: bool = False
    finished: str = ""


def docstring_title(path: Path) -> str:
    """The first line of a script's module docstring ('' if it has none or does not parse)."""
    try:
        doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8")))
    except (SyntaxError, UnicodeDecodeError, OSError):
        return ""
    return doc.strip().splitlines()[0].strip() if doc and doc.strip() else ""


def discover(root: Path = EXAMPLES_DIR) -> list[Example]:
    """Every ``NN_name.py`` in ``root`` and its direct subfolders; flat ones first, by name."""
    paths = [p for p in root.glob("*.py") if SCRIPT_NAME.match(p.name)]
    for folder in sorted(root.iterdir()):
        if folder.is_dir() and not folder.name.startswith(("_", ".")):
            paths += [p for p in folder.glob("*.py") if SCRIPT_NAME.match(p.name)]
    examples = [
        Example(p.relative_to(root).with_suffix("").as_posix(), p, docstring_title(p))
        for p in paths
    ]
    return sorted(examples, key=lambda e: (e.name.count("/"), e.name))


def select(examples: list[Example], substrings: list[str] | None) -> list[Example]:
    """The examples whose name contains any of ``substrings`` (case-insensitive); all if none."""
    if not substrings:
        return examples
    wanted = [s.lower() for s in substrings]
    return [e for e in examples if any(s in e.name.lower() for s in wanted)]


def _pngs(gallery: Path) -> dict[Path, int]:
    return {p: p.stat().st_mtime_ns for p in gallery.rglob("*.png")}


def _example_env(gallery: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["MPLBACKEND"] = "Agg"
    # Examples work on small arrays: BLAS threads only contend (a 2-core machine ran the LSTM
    # example in 62 s with them, 13 s without).
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        env.setdefault(var, "1")
    env["DIFFSCI_GALLERY_DIR"] = str(gallery)
    env["PYTHONUNBUFFERED"] = "1"
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO_ROOT), env.get("PYTHONPATH", "")) if p)
    return env


def run_example(
    example: Example,
    gallery: Path,
    *,
    full: bool = False,
    timeout: float | None = None,
    echo: bool = False,
    heartbeat: float | None = None,
) -> Outcome:
    """Run one example in a subprocess and collect its RESULT line, images and log.

    With ``echo`` every output line is shown; otherwise, with ``heartbeat`` seconds, the latest
    output line is shown at most that often while the example runs (its progress)."""
    command = [sys.executable, str(example.path)] + (["--full"] if full else [])
    before = _pngs(gallery)
    lines: list[str] = []
    timed_out = threading.Event()
    start = time.perf_counter()
    proc = subprocess.Popen(
        command,
        cwd=REPO_ROOT,
        env=_example_env(gallery),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        encoding="utf-8",
        errors="replace",
    )

    def kill() -> None:
        timed_out.set()
        proc.kill()

    timer = threading.Timer(timeout, kill) if timeout else None
    if timer:
        timer.start()
    try:
        assert proc.stdout is not None
        shown = start
        for line in proc.stdout:
            lines.append(line.rstrip("\n"))
            if echo:
                print(f"    {line}", end="", flush=True)
            elif heartbeat and time.perf_counter() - shown >= heartbeat and line.strip():
                shown = time.perf_counter()
                print(f"\n    {shown - start:4.0f} s: {line.strip()[:100]}", end="", flush=True)
        returncode = proc.wait()
    finally:
        if timer:
            timer.cancel()
    seconds = time.perf_counter() - start

    after = _pngs(gallery)
    written = [p for p, mtime in after.items() if before.get(p) != mtime]
    images = sorted(p.relative_to(gallery).as_posix() for p in written)
    results = [line for line in lines if line.startswith(RESULT_PREFIX)]
    result = results[-1][len(RESULT_PREFIX) :].strip() if results else None

    log = gallery / "logs" / (example.name.replace("/", "-") + ".log")
    log.parent.mkdir(parents=True, exist_ok=True)
    log.write_text(f"$ {' '.join(command)}\n" + "\n".join(lines) + "\n", encoding="utf-8")

    reason = ""
    if timed_out.is_set():
        reason = f"timed out after {timeout:g} s"
    elif returncode != 0:
        reason = f"exit status {returncode}"
    elif result is None:
        reason = f"printed no '{RESULT_PREFIX}' line (use examples._common.result)"
    return Outcome(
        name=example.name,
        title=example.title,
        ok=not reason,
        seconds=seconds,
        result=result,
        images=images,
        log=log.relative_to(gallery).as_posix(),
        reason=reason,
        output_tail="\n".join(lines[-TAIL_LINES:]) if reason else "",
        full=full,
        finished=datetime.datetime.now().isoformat(timespec="seconds"),
    )


def load_results(gallery: Path) -> dict[str, Outcome]:
    """Outcomes of earlier runs from ``gallery/results.json`` (empty if missing or unreadable)."""
    try:
        stored = json.loads((gallery / "results.json").read_text(encoding="utf-8"))
        return {entry["name"]: Outcome(**entry) for entry in stored}
    except (OSError, ValueError, TypeError, KeyError):
        return {}


def save_results(gallery: Path, outcomes: list[Outcome]) -> None:
    text = json.dumps([asdict(o) for o in outcomes], indent=2)
    (gallery / "results.json").write_text(text, encoding="utf-8")


_CSS = """
body { font-family: system-ui, sans-serif; max-width: 1100px; margin: 2em auto; padding: 0 1em;
       color: #222; }
h1 { margin-bottom: 0.2em; }
h2.package { margin-top: 1.6em; border-bottom: 2px solid #444; padding-bottom: 0.2em; }
.meta { color: #666; }
section { border-top: 1px solid #ddd; padding: 0.8em 0; }
.caption { font-size: 1.05em; }
.result { background: #f4f8f4; border-left: 4px solid #4a4; padding: 0.4em 0.6em;
          font-family: ui-monospace, monospace; white-space: pre-wrap; }
.failed .result, pre.tail { background: #fbf2f2; border-left: 4px solid #c33; }
pre.tail { padding: 0.4em 0.6em; overflow-x: auto; font-size: 0.85em; }
.status-ok { color: #282; } .status-failed { color: #c33; font-weight: bold; }
img { max-width: 100%; margin: 0.4em 0; border: 1px solid #eee; }
.thumbs { display: grid; grid-template-columns: repeat(auto-fill, minmax(200px, 1fr)); gap: 0.8em;
          margin: 0.6em 0 1em; }
.thumb { border: 1px solid #ddd; border-radius: 4px; padding: 0.4em; text-decoration: none;
         color: inherit; font-size: 0.85em; }
.thumb img { width: 100%; height: 120px; object-fit: contain; border: none; margin: 0; }
.thumb .noimg { height: 120px; display: flex; align-items: center; justify-content: center;
                background: #f6f6f6; color: #888; }
"""

# Sections of the page, in order: the folder below examples/ ("" for the flat core scripts).
PACKAGES = {
    "": "diffsci: the core",
    "raytrace": "raytrace: inverse rendering",
    "quantum": "quantum: variational circuits",
    "sde": "sde: stochastic differential equations",
    "finance": "finance: pricing, Greeks, calibration",
}


def package_of(name: str) -> str:
    """The gallery section of an example: its folder below ``examples/`` ('' for flat ones)."""
    return name.split("/", 1)[0] if "/" in name else ""


def package_title(package: str) -> str:
    return PACKAGES.get(package, package)


def source_link(gallery: Path, name: str) -> str:
    """The relative URL from the gallery page to ``examples/<name>.py``."""
    source = EXAMPLES_DIR / f"{name}.py"
    return quote(Path(os.path.relpath(source, gallery)).as_posix())


def write_index(gallery: Path, outcomes: list[Outcome]) -> Path:
    """Write ``gallery/index.html`` for ``outcomes``: one section per package, each opening with
    a grid of thumbnails, then one entry per example (docstring line, RESULT, figures, links to
    its source and its log). Returns the page's path."""
    esc = html.escape
    n_ok = sum(o.ok for o in outcomes)
    generated = datetime.datetime.now().strftime("%Y-%m-%d %H:%M")
    packages: dict[str, list[Outcome]] = {}
    for o in outcomes:
        packages.setdefault(package_of(o.name), []).append(o)
    order = [p for p in PACKAGES if p in packages] + [p for p in packages if p not in PACKAGES]
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        '<link rel="icon" href="data:,">',  # no favicon request
        "<title>diffsci example gallery</title>",
        f"<style>{_CSS}</style></head><body>",
        "<h1>diffsci example gallery</h1>",
        f'<p class="meta">{len(outcomes)} examples, {n_ok} ok, '
        f"{len(outcomes) - n_ok} failed. Generated {esc(generated)} with Python "
        f"{esc(sys.version.split()[0])}. Rerun with <code>make demo</code> or "
        "<code>python -m examples [--full] [-k name]</code>; <code>--full</code> runs the long "
        "settings (more steps, finer grids, bigger images).</p>",
    ]
    if not outcomes:
        parts.append("<p>No examples yet: add <code>examples/NN_name.py</code>.</p>")
    if len(order) > 1:
        links = " &middot; ".join(
            f'<a href="#pkg-{esc(p or "core")}">{esc(package_title(p))}</a>' for p in order
        )
        parts.append(f"<p>{links}</p>")
    for package in order:
        parts.append(
            f'<h2 class="package" id="pkg-{esc(package or "core")}">'
            f"{esc(package_title(package))}</h2>"
        )
        parts.append('<div class="thumbs">')
        for o in packages[package]:
            status = "ok" if o.ok else "failed"
            thumb = (
                f'<img src="{quote(o.images[0])}" alt="{esc(o.name)}" loading="lazy">'
                if o.images and (gallery / o.images[0]).is_file()
                else '<div class="noimg">no figure</div>'
            )
            parts.append(
                f'<a class="thumb" href="#{esc(o.name)}">{thumb}<div><b>{esc(o.name)}</b> '
                f'<span class="status-{status}">{status}</span></div>'
                f"<div>{esc(o.title)}</div></a>"
            )
        parts.append("</div>")
        for o in packages[package]:
            parts += _entry(gallery, o)
    parts.append("</body></html>")
    index = gallery / "index.html"
    index.write_text("\n".join(parts) + "\n", encoding="utf-8")
    return index


def _entry(gallery: Path, o: Outcome) -> list[str]:
    esc = html.escape
    status = "ok" if o.ok else "failed"
    parts = [f'<section id="{esc(o.name)}" class="{status}">', f"<h3>{esc(o.name)}</h3>"]
    if o.title:
        parts.append(f'<p class="caption">{esc(o.title)}</p>')
    detail = f"{o.seconds:.1f} s, {'--full' if o.full else 'quick'} run, {esc(o.finished)}"
    if o.reason:
        detail += f": {esc(o.reason)}"
    links = f' &middot; <a href="{source_link(gallery, o.name)}">source</a>'
    if o.log and (gallery / o.log).is_file():
        links += f' &middot; <a href="{quote(o.log)}">log</a>'
    badge = f'<span class="status-{status}">{status}</span>'
    parts.append(f'<p class="meta">{badge} ({detail}){links}</p>')
    if o.result is not None:
        parts.append(f'<div class="result">RESULT: {esc(o.result)}</div>')
    for image in o.images:
        if (gallery / image).is_file():
            parts.append(
                f'<div><a href="{quote(image)}"><img src="{quote(image)}" alt="{esc(image)}" '
                'loading="lazy"></a></div>'
            )
    if o.output_tail:
        parts.append(f'<pre class="tail">{esc(o.output_tail)}</pre>')
    parts.append("</section>")
    return parts


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m examples",
        description="Run the diffsci example gallery and write gallery/index.html.",
    )
    parser.add_argument("--full", action="store_true", help="pass --full to every example")
    parser.add_argument(
        "-k",
        dest="select",
        action="append",
        metavar="SUBSTRING",
        help="only examples whose name contains SUBSTRING (case-insensitive; repeatable)",
    )
    parser.add_argument("--list", action="store_true", help="list the examples and exit")
    parser.add_argument(
        "--timeout", type=float, metavar="SECONDS", help="stop an example that runs longer"
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="show each example's output")
    parser.add_argument(
        "--gallery-dir",
        type=Path,
        default=Path(os.environ.get("DIFFSCI_GALLERY_DIR") or DEFAULT_GALLERY),
        help="where figures, logs and index.html go (default: gallery/)",
    )
    args = parser.parse_args(argv)
    if args.timeout is not None and args.timeout <= 0:
        parser.error(f"--timeout must be positive seconds; got {args.timeout}")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    everything = discover()
    chosen = select(everything, args.select)
    if args.list:
        for example in chosen:
            print(f"{example.name:<32} {example.title}")
        return 0
    if args.select and not chosen:
        names = ", ".join(e.name for e in everything) or "none yet"
        print(f"no example matches -k {' -k '.join(args.select)}; examples: {names}")
        return 2

    gallery = args.gallery_dir.resolve()
    gallery.mkdir(parents=True, exist_ok=True)
    if not chosen:
        print("no examples yet: add examples/NN_name.py or examples/<pkg>/NN_name.py")
    mode = "--full" if args.full else "quick"
    print(f"gallery: {len(chosen)} of {len(everything)} examples ({mode}) -> {gallery}")

    ran: list[Outcome] = []
    start = time.perf_counter()
    for i, example in enumerate(chosen, start=1):
        label = f"[{i}/{len(chosen)}] {example.name}"
        print(f"{label} ...", end="\n" if args.verbose else " ", flush=True)
        outcome = run_example(
            example, gallery, full=args.full, timeout=args.timeout, echo=args.verbose,
            heartbeat=HEARTBEAT,
        )
        status = "ok" if outcome.ok else f"FAILED: {outcome.reason}"
        if args.verbose:
            prefix = f"{label} "
        elif outcome.seconds >= HEARTBEAT:  # progress lines may have been shown: a new line
            prefix = f"\n{label} "
        else:
            prefix = ""
        print(f"{prefix}{status} ({outcome.seconds:.1f} s)", flush=True)
        ran.append(outcome)

    known = load_results(gallery)
    known.update({o.name: o for o in ran})
    listed = [known[e.name] for e in everything if e.name in known]
    for outcome in listed:  # titles may have changed since an earlier run
        outcome.title = next(e.title for e in everything if e.name == outcome.name)
    save_results(gallery, listed)
    index = write_index(gallery, listed)

    failed = [o for o in ran if not o.ok]
    total = time.perf_counter() - start
    print(f"gallery: {len(ran) - len(failed)} ok, {len(failed)} failed in {total:.1f} s")
    for o in failed:
        print(f"\nFAILED {o.name}: {o.reason} (full log: {gallery / o.log})")
        for line in o.output_tail.splitlines():
            print(f"    {line}")
    print(f"gallery page: {index}")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
