"""Check every package's CUDA kernels against its CPU kernels, and time both.

On a machine with an NVIDIA GPU, runs each registered check (see
:class:`diffsci.devices.GpuCheck`) on fresh random inputs: the CPU kernel and the CUDA kernel are
compared with a float64 NumPy reference (relative error ``max|out - ref| / max|ref|``) and timed
(one warm-up call excluded, which also compiles; median over repeats; CUDA times exclude
host/device transfers). Rows print as they finish and a table at the end.

The registry: each package may have a ``<package>/_gpu_checks.py`` exposing ``CHECKS``, a list of
``GpuCheck``. A package without one is listed as "no kernels yet"; a module that exists but fails
to import is an error.

Usage:
    python benchmarks/gpu_check.py                 # on a GPU machine; exits 0 with a note if none
    python benchmarks/gpu_check.py --simulate      # CUDA simulator, tiny sizes: tests this script
    python benchmarks/gpu_check.py -k quantum --size 4096 --json out.json

Exit status: 0 when every check passes (or there is no GPU and no ``--simulate``), 1 when a check
fails its tolerance, errors, or a registry module fails to import.

The whole run keeps to a time budget (``--budget``, 240 s by default, so one GPU finishes within
5 minutes): each check gets an equal share of what is left, repeats stop when the share is spent,
and checks that find the budget spent are reported as skipped.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import statistics
import sys
import time
import traceback
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent
REGISTRY = (
    "diffsci._gpu_checks",
    "raytrace._gpu_checks",
    "quantum._gpu_checks",
    "sde._gpu_checks",
    "finance._gpu_checks",
)
DEFAULT_BUDGET_S = 240.0
MIN_SHARE_S = 2.0  # a check always gets at least this long for its timed repeats


@dataclass
class Row:
    """The outcome of one check (or of one registry module that has none)."""

    package: str
    kernel: str
    status: str  # "ok", "FAIL", "ERROR", "skipped", "no kernels yet"
    size: int | None = None
    cpu_err: float | None = None
    cuda_err: float | None = None
    cpu_ms: float | None = None
    cuda_ms: float | None = None
    repeats: int = 0
    note: str = ""

    @property
    def speedup(self) -> float | None:
        if self.cpu_ms and self.cuda_ms:
            return self.cpu_ms / self.cuda_ms
        return None


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description="Check CUDA kernels against CPU kernels and a float64 reference; time both.",
    )
    parser.add_argument(
        "--simulate",
        action="store_true",
        help="run on numba's CUDA simulator (NUMBA_ENABLE_CUDASIM=1) with tiny sizes",
    )
    parser.add_argument("--size", type=int, help="problem size for every check (default: each's)")
    parser.add_argument("-k", dest="select", help="only checks whose package.kernel contains this")
    parser.add_argument("--repeats", type=int, help="timed repeats per kernel (default 20; sim 3)")
    parser.add_argument(
        "--budget",
        type=float,
        default=DEFAULT_BUDGET_S,
        help=f"seconds for the whole run (default {DEFAULT_BUDGET_S:.0f})",
    )
    parser.add_argument("--seed", type=int, help="seed for the inputs (default: fresh, printed)")
    parser.add_argument("--json", type=Path, help="also write the rows to this JSON file")
    args = parser.parse_args(argv)
    if args.size is not None and args.size < 1:
        parser.error(f"--size must be a positive integer; got {args.size}")
    if args.repeats is not None and args.repeats < 1:
        parser.error(f"--repeats must be a positive integer; got {args.repeats}")
    if args.budget <= 0:
        parser.error(f"--budget must be positive seconds; got {args.budget}")
    return args


def collect_checks(modules: tuple[str, ...] = REGISTRY) -> tuple[list[Any], list[Row]]:
    """Import each registry module; return its checks and a row for each module without any.

    A module (or its package) that does not exist is "no kernels yet". Any other import failure,
    or a ``CHECKS`` that is not a list of ``GpuCheck``, is an ERROR row.
    """
    from diffsci.devices import GpuCheck

    checks: list[Any] = []
    rows: list[Row] = []
    for module_name in modules:
        package = module_name.split(".")[0]
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name == module_name or module_name.startswith(f"{exc.name}."):
                rows.append(Row(package, "-", "no kernels yet"))
                continue
            rows.append(Row(package, "-", "ERROR", note=_one_line(exc)))
            continue
        except Exception as exc:  # noqa: BLE001 - report, keep checking the other packages
            rows.append(Row(package, "-", "ERROR", note=_one_line(exc)))
            continue
        entries = getattr(module, "CHECKS", None)
        bad = not isinstance(entries, list | tuple) or not all(
            isinstance(entry, GpuCheck) for entry in entries
        )
        if bad:
            rows.append(
                Row(package, "-", "ERROR", note=f"{module_name}.CHECKS must be a list of GpuCheck")
            )
        elif not entries:
            rows.append(Row(package, "-", "no kernels yet"))
        else:
            checks.extend(entries)
    return checks, rows


def _one_line(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}".splitlines()[0][:160]


def _as_tuple(result: Any) -> tuple[Any, ...]:
    return tuple(result) if isinstance(result, tuple | list) else (result,)


def _to_device(value: Any) -> Any:
    import numpy as np
    from numba import cuda

    return cuda.to_device(value) if isinstance(value, np.ndarray) else value


def _to_host(value: Any) -> Any:
    import numpy as np

    if hasattr(value, "copy_to_host"):
        return value.copy_to_host()
    return np.asarray(value)


def relative_error(results: tuple[Any, ...], references: tuple[Any, ...]) -> float:
    """Largest ``max|result - ref| / max|ref|`` over paired outputs (inf on a shape mismatch)."""
    import numpy as np

    if len(results) != len(references):
        return float("inf")
    worst = 0.0
    for result, reference in zip(results, references):
        result = np.asarray(result, dtype=np.complex128 if np.iscomplexobj(result) else np.float64)
        reference = np.asarray(reference)
        if result.shape != reference.shape:
            return float("inf")
        scale = float(np.max(np.abs(reference))) if reference.size else 0.0
        diff = float(np.max(np.abs(result - reference))) if reference.size else 0.0
        worst = max(worst, diff / scale if scale > 0 else diff)
    return worst


def _time_calls(fn, repeats: int, share_s: float) -> tuple[float, int]:
    """Median milliseconds of ``fn()`` over up to ``repeats`` calls within ``share_s`` seconds."""
    times = []
    deadline = time.perf_counter() + share_s
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1e3)
        if time.perf_counter() > deadline:
            break
    return statistics.median(times), len(times)


def run_check(check: Any, rng: Any, size: int, repeats: int, share_s: float) -> Row:
    """Run one check: warm up (compile), compare with the reference, time both kernels."""
    from numba import cuda

    row = Row(check.package, check.name, "ok", size=size)
    inputs = check.make_inputs(rng, size)
    reference = _as_tuple(check.reference_fn(*inputs))

    cpu_result = _as_tuple(check.cpu_fn(*inputs))  # warm-up: compiles
    row.cpu_err = relative_error(cpu_result, reference)

    device_inputs = tuple(_to_device(value) for value in inputs)

    def run_cuda():
        out = check.cuda_fn(*device_inputs)
        cuda.synchronize()
        return out

    cuda_result = tuple(_to_host(value) for value in _as_tuple(run_cuda()))  # warm-up: compiles
    row.cuda_err = relative_error(cuda_result, reference)

    row.cpu_ms, cpu_repeats = _time_calls(lambda: check.cpu_fn(*inputs), repeats, share_s / 2)
    row.cuda_ms, cuda_repeats = _time_calls(run_cuda, repeats, share_s / 2)
    row.repeats = min(cpu_repeats, cuda_repeats)

    worst = max(row.cpu_err, row.cuda_err)
    if not worst <= check.rtol:  # also catches NaN
        row.status = "FAIL"
        errors = {"CPU": row.cpu_err, "CUDA": row.cuda_err}
        off = " and ".join(kind for kind, err in errors.items() if not err <= check.rtol)
        row.note = f"{off} off the reference beyond rtol {check.rtol:.0e}"
    return row


def _fmt(value: float | None, spec: str) -> str:
    return "-" if value is None else format(value, spec)


def format_row(row: Row) -> str:
    return (
        f"{row.package:<9} {row.kernel:<22} {_fmt(row.size, 'd'):>10} "
        f"{_fmt(row.cpu_err, '.1e'):>9} {_fmt(row.cuda_err, '.1e'):>9} "
        f"{_fmt(row.cpu_ms, '.3f'):>10} {_fmt(row.cuda_ms, '.3f'):>10} "
        f"{_fmt(row.speedup, '.1f'):>8} {row.status:<14} {row.note}"
    ).rstrip()


HEADER = (
    f"{'package':<9} {'kernel':<22} {'size':>10} {'cpu err':>9} {'cuda err':>9} "
    f"{'cpu ms':>10} {'cuda ms':>10} {'speedup':>8} {'status':<14} note"
)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    started = time.perf_counter()
    if args.simulate:
        # Must happen before numba.cuda is first imported; nothing above imports numba.
        os.environ["NUMBA_ENABLE_CUDASIM"] = "1"
    if str(REPO_ROOT) not in sys.path:  # run from a checkout without `pip install -e .`
        sys.path.insert(0, str(REPO_ROOT))

    from diffsci.devices import cuda_available, cuda_simulator_active, device_info

    if args.simulate and not cuda_simulator_active():
        print("gpu_check: could not switch on the CUDA simulator: numba was imported before")
        print("gpu_check: --simulate; run gpu_check.py as a script, or set NUMBA_ENABLE_CUDASIM=1.")
        return 1
    if not args.simulate and not cuda_available():
        why = (
            "the CUDA simulator is switched on (NUMBA_ENABLE_CUDASIM=1); pass --simulate to use it"
            if cuda_simulator_active()
            else "numba.cuda sees no usable GPU"
        )
        print(f"gpu_check: no CUDA GPU on this machine ({why}); nothing to check.")
        print("gpu_check: run with --simulate to exercise this script on the CUDA simulator.")
        return 0

    import numpy as np

    info = device_info()
    target = "CUDA simulator" if args.simulate else info["gpu_name"]
    seed = args.seed if args.seed is not None else int(np.random.SeedSequence().entropy % 2**32)
    repeats = args.repeats or (3 if args.simulate else 20)
    print(f"gpu_check: {target}; numba {info['numba_version']}; seed {seed}; budget {args.budget}s")

    checks, rows = collect_checks()
    if args.select:
        checks = [c for c in checks if args.select in f"{c.package}.{c.name}"]
        rows = [r for r in rows if args.select in r.package]
    for row in rows:
        note = f": {row.note}" if row.note else ""
        print(f"gpu_check: {row.package}: {row.status}{note}", flush=True)

    rng = np.random.default_rng(seed)
    for index, check in enumerate(checks, start=1):
        label = f"[{index}/{len(checks)}] {check.package}.{check.name}"
        left = args.budget - (time.perf_counter() - started)
        if left <= 0:
            row = Row(check.package, check.name, "skipped", note="time budget spent")
        else:
            share = max(MIN_SHARE_S, left / (len(checks) - index + 1))
            size = args.size or (check.sim_size if args.simulate else check.size)
            print(f"gpu_check: {label} (size {size}) ...", end=" ", flush=True)
            tic = time.perf_counter()
            try:
                row = run_check(check, rng, size, repeats, share)
            except Exception as exc:  # noqa: BLE001 - report, keep checking the others
                print(flush=True)
                traceback.print_exc()
                row = Row(check.package, check.name, "ERROR", size=size, note=_one_line(exc))
            print(f"{row.status} ({time.perf_counter() - tic:.1f} s)", flush=True)
        rows.append(row)

    order = {module.split(".")[0]: i for i, module in enumerate(REGISTRY)}
    rows.sort(key=lambda r: order.get(r.package, len(order)))
    failed = [r for r in rows if r.status in ("FAIL", "ERROR")]
    print()
    print(f"gpu_check results ({target}, {time.perf_counter() - started:.1f} s)")
    print("err: max|out - ref| / max|ref| against a float64 NumPy reference;")
    print("ms: median over repeats, warm-up excluded, CUDA without host/device transfers.")
    print(HEADER)
    for row in rows:
        print(format_row(row))
    print(
        f"{sum(r.status == 'ok' for r in rows)} ok, {len(failed)} failed, "
        f"{sum(r.status == 'skipped' for r in rows)} skipped, "
        f"{sum(r.status == 'no kernels yet' for r in rows)} packages with no kernels yet"
    )
    if args.json:
        payload = {
            "target": target,
            "seed": seed,
            "simulate": args.simulate,
            "rows": [{**asdict(r), "speedup": r.speedup} for r in rows],
        }
        args.json.write_text(json.dumps(payload, indent=2))
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
