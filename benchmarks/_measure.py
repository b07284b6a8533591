"""Timing and memory helpers shared by the benchmark scripts."""

from __future__ import annotations

import gc
import statistics
import time
import tracemalloc


def median_time(fn, repeats):
    """Median wall time of ``fn()`` over ``repeats`` calls (garbage collected before each)."""
    times = []
    for _ in range(repeats):
        gc.collect()
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
        del out
    return statistics.median(times)


def peak_bytes(fn):
    """Peak bytes allocated during ``fn()`` above the level before it (tracemalloc).

    Returns:
        ``(peak, fn())``.
    """
    gc.collect()
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        out = fn()
        peak = tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()
    return peak, out
