"""Benchmarks: ``python -m benchmarks`` runs every ``benchmarks/bench_*.py`` (see README.md).

Each ``bench_<name>.py`` is a standalone script that compares diffsci with its peers (installed
with the ``bench`` extra; a missing peer's column is skipped) and prints a table of times and
ratios. ``gpu_check.py`` checks CUDA kernels against CPU kernels; it is run on its own.
"""
