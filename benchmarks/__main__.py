"""``python -m benchmarks``: run every ``benchmarks/bench_*.py`` in turn, each in a subprocess.

Each script prints its own table; this runner streams that output, then lists which scripts
failed. Every selected script runs even after a failure; the exit status is 1 if any failed.

Usage:
    python -m benchmarks                 # every bench_*.py
    python -m benchmarks -k overhead     # only those whose name contains a substring
    python -m benchmarks --list
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
REPO_ROOT = BENCH_DIR.parent


def discover() -> list[Path]:
    """Every ``benchmarks/bench_*.py``, in name order."""
    return sorted(BENCH_DIR.glob("bench_*.py"))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks", description="Run every benchmarks/bench_*.py in turn."
    )
    parser.add_argument(
        "-k",
        dest="select",
        action="append",
        metavar="SUBSTRING",
        help="only scripts whose name contains SUBSTRING (repeatable)",
    )
    parser.add_argument("--list", action="store_true", help="list the scripts and exit")
    args = parser.parse_args(argv)

    scripts = discover()
    if args.select:
        scripts = [s for s in scripts if any(k in s.stem for k in args.select)]
        if not scripts:
            print(f"no benchmark matches -k {' -k '.join(args.select)}")
            return 2
    if args.list:
        print("\n".join(s.name for s in scripts))
        return 0
    if not scripts:
        print("no benchmarks yet: add benchmarks/bench_<name>.py")
        return 0

    env = dict(os.environ)
    env["MPLBACKEND"] = "Agg"
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO_ROOT), env.get("PYTHONPATH")) if p)
    failed = []
    for i, script in enumerate(scripts, start=1):
        print(f"\n=== [{i}/{len(scripts)}] {script.name} ===", flush=True)
        start = time.perf_counter()
        code = subprocess.call([sys.executable, str(script)], cwd=REPO_ROOT, env=env)
        seconds = time.perf_counter() - start
        print(
            f"=== {script.name}: {'ok' if code == 0 else f'FAILED (exit {code})'} "
            f"({seconds:.1f} s) ===",
            flush=True,
        )
        if code != 0:
            failed.append(script.name)
    print(
        f"\nbenchmarks: {len(scripts) - len(failed)} ok, {len(failed)} failed"
        + (f": {', '.join(failed)}" if failed else "")
    )
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
