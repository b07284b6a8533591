"""Strong-order convergence scripts (run each as ``python benchmarks/convergence/<name>.py``)."""
