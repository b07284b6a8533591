"""Fixtures of the interop tests: JAX in float64 for these tests only.

``jax_enable_x64`` is a process-wide switch, so it is set for each test of this folder and
restored after it (other folders never see it changed).
"""

import pytest


@pytest.fixture(autouse=True)
def _jax_x64():
    try:
        import jax
    except ImportError:
        yield
        return
    before = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", True)
    try:
        yield
    finally:
        jax.config.update("jax_enable_x64", before)
