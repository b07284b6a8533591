"""How ``diffsci.jit`` keeps the compile time of long programs bounded (``_jit/_compile.py``).

An unrolled Python loop is one long straight-line program.  Three mechanisms keep Numba's
compile time from growing with it, and each must leave every number as eager mode computes it:

* *outlined statements*: every array statement of a segment is a kernel of its own, its values
  renamed by order and the integers of its subscripts passed as arguments, so every step of a
  loop calls the same kernels (their number does not grow with the number of steps);
* *chunks*: a segment longer than ``CHUNK_LINES`` is cut into functions at its repeats (one
  per loop step), compiled once per distinct step;
* *Python segments*: a segment of large arrays, or one that still calls kernels from more than
  ``SEGMENT_CALLS`` statements, runs as Python calling the compiled kernels and chunks, and
  (the latter) is compiled once the time spent in it reaches the estimated compile time; one
  whose chunks pass more than ``CHUNK_VALUES`` values runs as Python unchunked, its chunked
  form the compiled tier.

The class of bug these could bring is a wrong renaming, a missed output of a chunk, a literal
passed in the wrong place: so the jit fuzzer's random programs and every spec of the gradient
tables run again with the thresholds set so low that every segment is chunked (the "python"
backend runs the generated source), and a sample runs compiled by Numba, Python segments and
their compiled tier included.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import diffsci as ds
from diffsci._jit import JitWarning, _compile
from diffsci.testing import check_grads

from .test_jit_fuzz import SEEDS, _leaves_close, _n_specs, _run_program, _spec_case


def _recurrence(T):
    def loss(W, U, xs):
        h = np.zeros(4)
        for t in range(T):
            h = np.tanh(xs[t] @ W + h @ U)
        return np.sum(h ** 2)
    return loss


def _data(T, seed=0):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(3, 4)), 0.5 * rng.normal(size=(4, 4)), rng.normal(size=(T, 3))


def _spec(jf):
    return next(iter(jf._cache.values())).specs[0]


# ------------------------------------------------------------------------ spans (pure Python)
def _check_partition(spans, n, limit):
    assert [a for a, _ in spans] == [0] + [b for _, b in spans[:-1]], spans  # contiguous
    assert spans[-1][1] == n and all(0 < b - a <= limit for a, b in spans), spans


def test_repeat_spans_cut_a_loop_at_its_period():
    body = [11, 12, 13, 14, 15, 16]
    keys = [1, 2, 3] + body * 7 + [4, 5]
    spans = _compile._repeat_spans(keys, 20)
    _check_partition(spans, len(keys), 20)
    loop = [keys[a:b] for a, b in spans if 3 <= a < 3 + 7 * len(body)]
    # as many whole steps per span as fit (3 of 6 in 20): the same function for both spans
    # of 3 steps, compiled once, and one for the last step
    assert loop == [body * 3, body * 3, body], spans


@pytest.mark.parametrize("seed", range(40))
def test_repeat_spans_partition_any_sequence(seed):
    rng = np.random.default_rng(seed)
    n, limit = int(rng.integers(1, 400)), int(rng.integers(4, 60))
    if seed % 2:  # repeats of random periods among noise
        keys = []
        while len(keys) < n:
            p = int(rng.integers(1, 12))
            block = list(rng.integers(0, 5, p))
            keys += block * int(rng.integers(1, 6)) + list(rng.integers(0, 50, 3))
        keys = keys[:n]
    else:
        keys = list(rng.integers(0, 3, n))
    _check_partition(_compile._repeat_spans(keys, limit), n, limit)


def test_canonical_takes_out_values_call_integers_and_floats():
    src, lits = _compile._canonical("    v12 = k_0123456789abcdef(v3, c1, 4)")
    assert lits == ["4"] and src == "    v12 = k_0123456789abcdef(v3, c1, n0)"
    src, lits = _compile._canonical("    v5 = ((v3 * 0.5) + (v4 ** 2))")
    assert lits == ["0.5"] and "** 2" in src  # integer exponents stay literal
    src, lits = _compile._canonical("    if not (v1 < 1e-08): raise GuardFail(3)")
    assert lits == ["1e-08"] and "GuardFail(3)" in src


# ---------------------------------------------------------- the generator, as Python source
@pytest.fixture
def python_backend(monkeypatch, tmp_path):
    monkeypatch.setattr(_compile, "BACKEND", "python")
    monkeypatch.setenv("DIFFSCI_JIT_CACHE", str(tmp_path))


@pytest.fixture
def tiny_chunks(monkeypatch):
    """Every segment of more than 3 statements is chunked; counts the chunks made."""
    made = []
    real = _compile._chunk

    def counting(*a):
        made.append(1)
        return real(*a)

    monkeypatch.setattr(_compile, "CHUNK_LINES", 3)
    monkeypatch.setattr(_compile, "_chunk", counting)
    return made


def test_outlined_kernels_do_not_grow_with_the_steps(python_backend):
    kernels = {}
    for T in (2, 6):
        W, U, xs = _data(T)
        vg = ds.value_and_grad(_recurrence(T), argnums=(0, 1))
        jvg = ds.jit(vg)
        _leaves_close(jvg(W, U, xs), vg(W, U, xs), f"T={T}")
        kernels[T] = set(_spec(jvg).compiled.kernels)
    assert kernels[6] == kernels[2], "every step calls the kernels of the first ones"


def test_long_fused_loop_is_cut_into_shared_kernels(python_backend):
    def f(x):
        for _ in range(100):  # 400 elementwise records of one shape: one group
            x = np.exp(np.sin(x) * 1.01 + 0.1)
        return np.sum(x)

    x = np.array([0.3, -0.7, 1.1])
    n_kernels = []
    for g in (f, ds.value_and_grad(f)):
        jg = ds.jit(g)
        _leaves_close(jg(x), g(x), "long chain")
        _leaves_close(jg(2.0 * x), g(2.0 * x), "long chain, a second input")
        c = _spec(jg).compiled
        n_kernels.append(len(c.kernels))
        assert c.source.count("= k_") > len(c.kernels), "a kernel called for several steps"
    assert 2 <= n_kernels[0] <= 4, n_kernels  # the loop cut, its repeated pieces one kernel
    assert n_kernels[1] <= 12, n_kernels


@pytest.mark.parametrize("block", range(3))
def test_fuzz_programs_chunked_equal_eager(block, python_backend, tiny_chunks):
    compiled = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", JitWarning)
        for seed in SEEDS[block::3]:
            compiled += _run_program(seed)
    assert compiled >= len(SEEDS[block::3]) // 3, f"only {compiled} programs ran compiled"
    assert len(tiny_chunks) > 50, "the programs were chunked"


@pytest.mark.parametrize("block", range(4))
def test_every_spec_chunked_at_a_second_input(block, python_backend, tiny_chunks):
    for k in range(block, _n_specs(), 4):
        spec, rng, first, second, loss_of = _spec_case(k)
        what = f"spec {k} {spec.name} (chunked)"
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            vg = ds.value_and_grad(loss_of(spec.fun, rng, first),
                                   argnums=tuple(range(len(first))))
            jvg = ds.jit(vg)
            _leaves_close(jvg(*first), vg(*first), "jit(value_and_grad(f)), " + what)
            _leaves_close(jvg(*second), vg(*second), "at a second input, " + what)
    assert tiny_chunks


# ------------------------------------------------------------------- compiled by Numba
@pytest.fixture
def numba_backend(monkeypatch, tmp_path_factory):
    monkeypatch.setattr(_compile, "BACKEND", "numba")
    monkeypatch.setenv("DIFFSCI_JIT_CACHE", str(tmp_path_factory.mktemp("jit-chunks")))
    with warnings.catch_warnings():
        warnings.simplefilter("error", JitWarning)  # every program here compiles
        yield


@pytest.mark.kernels
def test_long_recurrence_chunks_runs_as_python_then_tiers_up(numba_backend, monkeypatch):
    monkeypatch.setattr(_compile, "CHUNK_LINES", 12)
    monkeypatch.setattr(_compile, "SEGMENT_CALLS", 4)
    monkeypatch.setattr(_compile, "COMPILE_S_PER_VALUE", 1e6)  # stays Python until told
    T = 12
    W, U, xs = _data(T, seed=1)
    vg = ds.value_and_grad(_recurrence(T), argnums=(0, 1))
    jvg = ds.jit(vg)
    _leaves_close(jvg(W, U, xs), vg(W, U, xs), "python tier")
    c = _spec(jvg).compiled
    assert c.n_python == 1 and [t.state for t in c.tiers] == ["python"]
    seg = c.source[c.source.index("def seg"):]
    assert seg.count("\n") < 40, "the steps are chunk calls"
    c.tiers[0].budget = 0.0  # as if it had run long enough
    W2, U2, xs2 = _data(T, seed=2)
    _leaves_close(jvg(W2, U2, xs2), vg(W2, U2, xs2), "the call that compiles it")
    assert c.tiers[0].state == "compiled"
    _leaves_close(jvg(W, U, xs), vg(W, U, xs), "compiled tier")
    # all at once
    jall = ds.jit(vg, compile_all=True)
    _leaves_close(jall(W, U, xs), vg(W, U, xs), "compile_all")
    assert _spec(jall).compiled.n_python == 0 and not _spec(jall).compiled.tiers
    check_grads(ds.jit(_recurrence(T)), (W, U, xs), modes=("rev",))


@pytest.mark.kernels
def test_wide_chunks_run_their_segment_unchunked_as_python_then_tier_up(numba_backend,
                                                                       monkeypatch):
    """A chunk passing more than CHUNK_VALUES values (the residuals of a forward pass read by
    the backward one) is slow for Numba to compile: its segment runs as Python calling the
    shared kernels unchunked; the chunked form is the compiled tier."""
    monkeypatch.setattr(_compile, "CHUNK_LINES", 12)
    monkeypatch.setattr(_compile, "SEGMENT_CALLS", 10_000)  # only the chunk rule decides
    monkeypatch.setattr(_compile, "SEGMENT_ARGS", 10_000)
    monkeypatch.setattr(_compile, "CHUNK_VALUES", 6)
    monkeypatch.setattr(_compile, "COMPILE_S_PER_VALUE", 1e6)  # stays Python until told
    T = 12
    W, U, xs = _data(T, seed=4)
    vg = ds.value_and_grad(_recurrence(T), argnums=(0, 1))
    jvg = ds.jit(vg)
    _leaves_close(jvg(W, U, xs), vg(W, U, xs), "python, unchunked")
    c = _spec(jvg).compiled
    assert c.n_python == 1 and [t.state for t in c.tiers] == ["python"]
    py_seg = c.source[c.source.index("def seg"):]
    numba_seg = c.tiers[0].src[c.tiers[0].src.index("def seg"):]
    assert py_seg.count("\n") > 2 * numba_seg.count("\n"), "Python runs the statements"
    c.tiers[0].budget = 0.0
    W2, U2, xs2 = _data(T, seed=5)
    _leaves_close(jvg(W2, U2, xs2), vg(W2, U2, xs2), "the call that compiles the chunks")
    assert c.tiers[0].state == "compiled"
    _leaves_close(jvg(W, U, xs), vg(W, U, xs), "compiled tier")
    monkeypatch.setattr(_compile, "CHUNK_VALUES", 10_000)  # narrow enough: compiled at once
    jn = ds.jit(vg)
    _leaves_close(jn(W, U, xs), vg(W, U, xs), "compiled at once")
    assert _spec(jn).compiled.n_python == 0


@pytest.mark.kernels
def test_large_arrays_run_as_python_segments(numba_backend):
    rng = np.random.default_rng(3)
    W, b = 0.1 * rng.normal(size=(64, 64)), rng.normal(size=64)
    x = rng.normal(size=(48, 64))

    def loss(W, b, x):
        for _ in range(3):
            x = np.tanh(x @ W + b)
        return np.mean(x[:, :10] ** 2)

    vg = ds.value_and_grad(loss, argnums=(0, 1))
    jvg = ds.jit(vg)
    _leaves_close(jvg(W, b, x), vg(W, b, x), "large arrays")
    c = _spec(jvg).compiled
    assert c.n_python >= 1 and not c.tiers  # Python for good: the arithmetic dominates
    x2 = rng.normal(size=(48, 64))
    _leaves_close(jvg(W, b, x2), vg(W, b, x2), "large arrays, a second input")


@pytest.mark.kernels
def test_fuzz_sample_compiled_with_tiny_chunks_and_tiers(numba_backend, monkeypatch,
                                                         tiny_chunks):
    monkeypatch.setattr(_compile, "SEGMENT_CALLS", 1)
    monkeypatch.setattr(_compile, "COMPILE_S_PER_VALUE", 0.0)  # tier up at the second call
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", JitWarning)
        compiled = [_run_program(seed) for seed in (1, 6)]  # two that compile
    assert all(compiled) and tiny_chunks


def test_compile_all_must_be_a_bool():
    with pytest.raises(TypeError, match="compile_all must be True or False, got 'yes'"):
        ds.jit(lambda x: x, compile_all="yes")
