"""A fuzzer for ``ds.jit``: random programs with value-dependent control flow, compiled and eager.

Each program is built from a seed: a pool of length-4 vectors and scalars grows by random
steps — elementwise ops, broadcasting with reductions, slices, reversals, sorting, a matrix
product, ``where``/``maximum``/``clip`` masks, boolean-mask sums, ``argmax`` indexing, ``if`` on
a reduced value, a ``while`` loop whose trip count depends on the data, ``int()`` of ``.item()``
choosing a polynomial degree, in-place writes into a copy, and closures over an array that is
changed between calls.  A program is called on a sequence of inputs chosen so that its branches
flip; every call's value must equal eager mode's, and so must ``grad(jit(f))`` and
``jit(grad(f))``.  The test also requires a share of the programs to have run compiled (a fuzzer
that only exercised the eager fallback would prove nothing).

``test_every_spec_at_a_second_input`` runs every spec of the table-driven gradient tests
through jit, value and value-and-gradient, and calls the compiled program on a *second* input:
at the traced input a value that plain code computed from the inputs while tracing (a sorting
permutation, a sign mask in a rule) is right by construction, and only a second input shows it
kept as a constant.  This fuzzer found that class (66 of 553 specs wrong at a second input with
``check=False``); jit's check now probes each new specialization at second inputs and runs the
signature eagerly when they disagree, and the test holds every spec to eager mode's numbers.

Uses the "python" backend (the generated source executed as Python, no Numba compile time), as
tests/diffsci/test_jit.py does; ``test_jit_fuzz_compiled_sample`` compiles a few with Numba.
"""

from __future__ import annotations

import warnings
import zlib

import numpy as np
import pytest

import diffsci as ds
from diffsci._jit import JitWarning, _compile

UNARY = [
    ("sin", np.sin), ("tanh", np.tanh), ("square", lambda v: v * v),
    ("softabs", lambda v: np.sqrt(v * v + 0.5)), ("log1p_sq", lambda v: np.log1p(v * v)),
    ("exp_tanh", lambda v: np.exp(np.tanh(v))), ("relu", lambda v: np.maximum(v, 0.0)),
    ("leaky", lambda v: np.where(v > 0, v, 0.3 * v)), ("clip", lambda v: np.clip(v, -0.8, 0.9)),
    ("neg_rev", lambda v: -v[::-1] if np.ndim(v) else -v), ("cumsum", np.cumsum),
    ("sort", lambda v: np.sort(v) if np.ndim(v) else v), ("abs", np.abs),
]
BINARY = [
    ("add", lambda a, b: a + b), ("sub", lambda a, b: a - b), ("mul", lambda a, b: a * b),
    ("div", lambda a, b: a / (b * b + 1.0)), ("max", np.maximum), ("min", np.minimum),
    ("hypot", lambda a, b: np.sqrt(a * a + b * b + 0.1)),
]


def _vec(v):
    return np.ndim(v) == 1


def make_program(seed, closed):
    """A random function of (x, y) (vectors of 4) and its description; ``closed`` is an array
    the program reads from its closure (changed by the test between calls)."""
    r = np.random.default_rng(seed)
    steps = []
    for _ in range(int(r.integers(4, 10))):
        kind = r.choice(["unary", "binary", "binary", "reduce", "branch", "loop", "degree",
                         "mask", "argmax", "matmul", "inplace", "closure", "slice", "order",
                         "cast"])
        steps.append((str(kind), int(r.integers(0, 10**6))))

    def f(x, y):
        pool = [x, y]
        for kind, s in steps:
            q = np.random.default_rng(s)
            a = pool[int(q.integers(len(pool)))]
            b = pool[int(q.integers(len(pool)))]
            if kind == "unary":
                pool.append(UNARY[int(q.integers(len(UNARY)))][1](a))
            elif kind == "binary":
                pool.append(BINARY[int(q.integers(len(BINARY)))][1](a, b))
            elif kind == "reduce":
                red = [np.sum, np.mean, np.max, np.min, np.prod][int(q.integers(5))]
                pool.append(a * red(b) if _vec(b) else a * b)
            elif kind == "branch":  # Python if on a value: a guard
                if np.sum(a) > float(q.normal()):
                    pool.append(np.sin(b) * 2.0)
                else:
                    pool.append(b * b - 1.0)
            elif kind == "loop":  # data-dependent trip count
                v, k = b, 0
                while np.max(np.abs(v)) < 3.0 and k < 4:
                    v = v * 1.7 + 0.2
                    k += 1
                pool.append(v)
            elif kind == "degree":  # int() of a value picks the polynomial degree
                n = int(abs(np.sum(a).item()) * 2.0) % 3 + 1
                acc = b * 0.0
                for i in range(n):
                    acc = acc + b ** (i + 1) / (i + 1.0)
                pool.append(acc)
            elif kind == "mask" and _vec(a) and _vec(b):  # boolean mask: a value-dependent size
                pool.append(np.sum(b[a > 0]) + np.sum(a * a) * 0.1)
            elif kind == "argmax" and _vec(a):
                pool.append(a[np.argmax(b)] * a if _vec(b) else a * b)
            elif kind == "matmul" and _vec(a) and _vec(b):
                pool.append((np.reshape(a, (2, 2)) @ np.reshape(b, (2, 2))).ravel())
            elif kind == "inplace" and _vec(a):
                w = a * 1.0  # a fresh array (traced when a is)
                w[int(q.integers(4))] = np.sum(b) * 0.5
                pool.append(w)
            elif kind == "closure":
                pool.append(a * closed + np.sum(closed))
            elif kind == "slice" and _vec(a):
                pool.append(np.concatenate([a[1:], a[:1] * 2.0]))
            elif kind == "order" and _vec(a):  # order statistics: permutations from values
                red = [np.median, lambda v: np.quantile(v, 0.3), lambda v: np.partition(v, 1)[1],
                       lambda v: np.percentile(v, 80.0)][int(q.integers(4))]
                pool.append(a * red(b) if _vec(b) else a + red(a))
            elif kind == "cast" and _vec(a):  # an integer index computed from values
                idx = (np.abs(b) * 3.0).astype(int) % 4 if _vec(b) else np.arange(4)
                pool.append(np.take(a, idx) * 1.5 + a)
            else:
                pool.append(a + 0.5 * b)
        out = pool[-1] + 0.1 * pool[-2]
        return out if _vec(out) else out * np.ones(4)

    return f, steps


def _inputs(seed):
    """Inputs whose signs and sizes differ, so branches, masks and loop counts change."""
    r = np.random.default_rng(seed + 7)
    xs = [r.normal(size=4) for _ in range(3)] + [-np.abs(r.normal(size=4)),
                                                  3.0 * np.abs(r.normal(size=4))]
    return [(x, r.normal(size=4)) for x in xs]


def _close(a, b, what):
    a, b = np.asarray(a), np.asarray(b)
    assert a.shape == b.shape, (what, a.shape, b.shape)
    np.testing.assert_allclose(a, b, rtol=1e-11, atol=1e-11, err_msg=what)


def _run_program(seed, check=True):
    closed = np.array([0.3, -0.2, 0.5, 0.1])
    f, steps = make_program(seed, closed)
    jf = ds.jit(f, max_specializations=64, check=check)
    loss = lambda x, y: np.sum(f(x, y) * np.array([1.0, -0.5, 0.25, 2.0]))  # noqa: E731
    jloss = ds.jit(loss, max_specializations=64, check=check)
    jgrad = ds.jit(ds.grad(loss, argnums=(0, 1)), max_specializations=64, check=check)
    outer = ds.grad(jloss, argnums=(0, 1))
    for k, (x, y) in enumerate(_inputs(seed)):
        if k == 2:
            closed[:] = closed[::-1] * 1.5  # changed in place between calls: must be seen
        where = f"seed {seed}, input {k}, steps {steps}"
        try:
            want = f(x, y)
        except (FloatingPointError, ValueError, ZeroDivisionError):
            continue
        if not np.all(np.isfinite(want)):
            continue
        _close(jf(x, y), want, "jit(f) " + where)
        g = ds.grad(loss, argnums=(0, 1))(x, y)
        for got, ref in zip(jgrad(x, y), g):
            _close(got, ref, "jit(grad(f)) " + where)
        for got, ref in zip(outer(x, y), g):
            _close(got, ref, "grad(jit(f)) " + where)
    s = jf.stats()
    return s["signatures"] > 0 and s["eager"] == 0


@pytest.fixture
def python_backend(monkeypatch, tmp_path):
    monkeypatch.setattr(_compile, "BACKEND", "python")
    monkeypatch.setenv("DIFFSCI_JIT_CACHE", str(tmp_path))


SEEDS = list(range(120))


@pytest.mark.parametrize("block", range(6))
def test_jit_fuzz_random_programs_equal_eager(block, python_backend):
    compiled = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", JitWarning)  # eager fallbacks (in-place) are allowed
        for seed in SEEDS[block::6]:
            compiled += _run_program(seed)
    # in-place steps run eagerly by design; the rest must have been compiled
    assert compiled >= len(SEEDS[block::6]) // 3, f"only {compiled} programs ran compiled"


@pytest.mark.parametrize("block", range(3))
def test_jit_fuzz_random_programs_equal_eager_unchecked(block, python_backend):
    """The same programs with ``check=False``: no twin trace or probe to fall back on, so
    every value they look at (branches, loop counts, masks, order statistics, integer
    indices cast from values) must be a guard or a record of the compiled program."""
    compiled = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", JitWarning)
        for seed in SEEDS[block::3]:
            compiled += _run_program(seed, check=False)
    assert compiled >= len(SEEDS[block::3]) // 3, f"only {compiled} programs ran compiled"


def _spec_case(k):
    import zlib

    from . import test_numpy_grads as tng
    from .test_jit import _loss_of
    spec = tng.SPECS[k]
    rng = np.random.default_rng(zlib.crc32(spec.name.encode()))
    first = tuple(s(rng) for s in spec.args)
    second = tuple(s(rng) for s in spec.args)
    return spec, rng, first, second, _loss_of


def _leaves_close(got, want, what):
    lg, lw = ds.tree_leaves(got), ds.tree_leaves(want)
    assert len(lg) == len(lw), what
    for x, y in zip(lg, lw):
        x, y = np.asarray(x), np.asarray(y)
        assert x.shape == y.shape, (what, x.shape, y.shape)
        np.testing.assert_allclose(x, y, rtol=1e-10, atol=1e-10, equal_nan=True, err_msg=what)


def _n_specs():
    from . import test_numpy_grads as tng
    return len(tng.SPECS)


@pytest.mark.parametrize("block", range(8))
def test_every_spec_at_a_second_input(block, python_backend):
    for k in range(block, _n_specs(), 8):
        spec, rng, first, second, loss_of = _spec_case(k)
        what = f"spec {k} {spec.name}"
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            jf = ds.jit(spec.fun)
            jf(*first)
            _leaves_close(jf(*second), spec.fun(*second), "jit(f) at a second input, " + what)
            vg = ds.value_and_grad(loss_of(spec.fun, rng, first),
                                   argnums=tuple(range(len(first))))
            jvg = ds.jit(vg)
            jvg(*first)
            _leaves_close(jvg(*second), vg(*second),
                          "jit(value_and_grad(f)) at a second input, " + what)


@pytest.mark.kernels
def test_jit_fuzz_compiled_sample(tmp_path, monkeypatch):
    monkeypatch.setenv("DIFFSCI_JIT_CACHE", str(tmp_path))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", JitWarning)
        for seed in (3,):
            _run_program(seed)


@pytest.mark.parametrize("block", range(4))
def test_every_spec_not_probed_is_right_at_a_second_input_unchecked(block, python_backend):
    """With ``check=False`` (no probe, no twin trace to fall back on) every spec outside
    PROBED (now empty) is right at a second input, value, gradient and tangent: its compiled
    program recomputes each mask, sign, tie, permutation and count from the traced values,
    or guards it."""
    from .test_jit import PROBED

    for k in range(block, _n_specs(), 4):
        spec, rng, first, second, loss_of = _spec_case(k)
        if spec.name in PROBED:
            continue
        what = f"spec {k} {spec.name} (check=False)"
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            jf = ds.jit(spec.fun, check=False)
            jf(*first)
            _leaves_close(jf(*second), spec.fun(*second), "jit(f) at a second input, " + what)
            vg = ds.value_and_grad(loss_of(spec.fun, rng, first),
                                   argnums=tuple(range(len(first))))
            jvg = ds.jit(vg, check=False)
            jvg(*first)
            _leaves_close(jvg(*second), vg(*second),
                          "jit(value_and_grad(f)) at a second input, " + what)
            tan = _tangent_pass(loss_of(spec.fun, rng, first), first)
            jtan = ds.jit(tan, check=False)
            jtan(*first)
            _leaves_close(jtan(*second), tan(*second), "jit(jvp(f)) at a second input, " + what)


def _tangent_pass(loss, first):
    """``x -> jvp(loss, x, t)`` with a fixed tangent per argument."""
    tans = tuple(np.full(np.shape(a), 0.7, np.result_type(np.asarray(a), 1.0)) for a in first)
    return lambda *a: ds.jvp(loss, a, tans)


# ---------------------------------------------------------------- two traces compared
@pytest.mark.parametrize("block", range(8))
def test_every_spec_right_at_a_second_input_through_the_twin_trace_alone(block, python_backend,
                                                                         monkeypatch):
    """``check=True`` with the numeric probe switched off: what keeps every spec (PROBED
    ones included) right at a second input is the *twin trace*, jit's second trace of each
    new specialization at other inputs, whose program must be the same as the first's.  A
    constant that plain code computed from the inputs differs between the two programs,
    whether or not the numbers it leads to happen to agree at the probe."""
    from diffsci._jit import JitFunction

    monkeypatch.setattr(JitFunction, "_probe", lambda *a: None)
    for k in range(block, _n_specs(), 8):
        spec, rng, first, second, loss_of = _spec_case(k)
        what = f"spec {k} {spec.name} (twin trace only)"
        loss = loss_of(spec.fun, rng, first)
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            for g, kind in ((spec.fun, "jit(f)"),
                            (ds.value_and_grad(loss, argnums=tuple(range(len(first)))),
                             "jit(value_and_grad(f))"),
                            (_tangent_pass(loss, first), "jit(jvp(f))")):
                jg = ds.jit(g)
                jg(*first)
                _leaves_close(jg(*second), g(*second), f"{kind} at a second input, {what}")


def _one_program_on_a_path(fun, loss, first, seed, what):
    """Trace ``fun``, ``value_and_grad(loss)`` and the tangent pass of ``loss`` at ``first``
    and at the twin trace's second inputs; assert the same program wherever the guards came
    out the same.  Returns how many pairs were compared on one path."""
    from diffsci._jit import _probe_input, _trace

    compared = 0
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        for g, kind in ((fun, "f"),
                        (ds.value_and_grad(loss, argnums=tuple(range(len(first)))), "vg"),
                        (_tangent_pass(loss, first), "jvp")):
            try:
                a = _trace.program_of(g, first)
            except Exception:  # noqa: BLE001 - not traceable: runs eagerly, tested elsewhere
                continue
            r = np.random.default_rng(seed)
            for scale, perm in (((0.95, 1.05, False), True), ((1 - 1e-7, 1 + 1e-7, False), False),
                                ((0.5, 2.0, True), True)):
                probe = _probe_input(list(first), r, scale, permute=perm, integers=perm)
                if probe is None:
                    break
                try:
                    b = _trace.program_of(g, probe)
                except Exception:  # noqa: BLE001 - outside the function's domain
                    continue
                compared += _trace.same_path(a, b)
                diff = _trace.twin_difference(a, b)
                assert diff is None, f"{what} {kind}: {diff}"
    return compared


@pytest.mark.parametrize("block", range(4))
def test_every_spec_traces_one_program_on_a_path(block, python_backend):
    """The structural form of the test above, and the reason it holds: traced again at the
    twin trace's second inputs, every spec (value, value and gradient, tangent) gives the
    same program, operation for operation and constant for constant, whenever its guards
    came out the same.  A constant computed from the inputs by plain code would differ
    (before: sorts, partitions, medians and quantiles, norms' sign masks, modf/divmod/frexp,
    casts to integers, arange's length, histograms, unwrap, roots, slogdet's sign, the set
    functions)."""
    compared = 0
    for k in range(block, _n_specs(), 4):
        spec, rng, first, _, loss_of = _spec_case(k)
        compared += _one_program_on_a_path(spec.fun, loss_of(spec.fun, rng, first), first, k,
                                           f"spec {k} {spec.name}")
    assert compared > 150  # most specs were compared on one path (not all skipped)


_TWIN_CASES = {
    # each was right at the traced input and at the numeric probe's inputs, wrong elsewhere
    "modf": (lambda x: np.modf(x), (np.array([0.3, 1.7, -2.2]),), (np.array([2.3, -0.7, 5.2]),)),
    "divmod": (lambda x: np.divmod(x, 0.7), (np.array([0.3, 1.7, -2.2]),),
               (np.array([2.3, -0.7, 5.2]),)),
    "frexp": (lambda x: np.frexp(x), (np.array([0.3, 1.7, -2.2]),), (np.array([2.3, -0.7, 5.2]),)),
    "compress with a boolean input": (
        lambda m, x: np.sum(np.compress(m, x) ** 2), (np.array([True, False, True]), np.ones(3)),
        (np.array([False, True, True]), np.array([1.0, 2.0, 3.0]))),
    "take with an integer input": (lambda i, x: np.sum(np.take(x, i) * x[:2]),
                                   (np.array([0, 2]), np.arange(3.0)),
                                   (np.array([2, 1]), np.array([1.0, 2.0, 5.0]))),
    "heston Fourier panels": (
        lambda s: __import__("finance").heston_price(
            spot=100.0, strike=105.0, expiry=1.0, rate=0.01,
            params=__import__("finance").HestonParams(kappa=1.5, theta=0.04, sigma=s, rho=-0.6,
                                                      v0=0.04)), (0.5,), (1.4,)),
}


@pytest.mark.parametrize("name", list(_TWIN_CASES))
def test_twin_trace_catches_constants_from_values(name, python_backend):
    """Programs whose trace holds a constant computed from the inputs: with the default check
    they are right at other inputs, both the value and the gradient (compiled where the
    constant is now a record or a guard, else eagerly with one warning naming what
    differed)."""
    f, first, second = _TWIN_CASES[name]
    for g in (f, ds.value_and_grad(lambda *a: np.sum(ds.tree_leaves(f(*a))[0]),
                                   argnums=len(first) - 1)):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            jg = ds.jit(g)
            jg(*first)
            _leaves_close(jg(*second), g(*second), name)
        msgs = [str(w.message) for w in caught if issubclass(w.category, JitWarning)]
        assert all("traced again at a second input" in m for m in msgs), msgs


def test_twin_trace_runs_random_draws_eagerly(python_backend):
    """A function drawing from NumPy's global generator traces two programs with different
    constants: it runs eagerly (new draws at every call, as in eager mode) instead of
    freezing the draws of its trace."""
    def f(x):
        return np.sum(x * np.random.default_rng().standard_normal(3))

    with pytest.warns(JitWarning, match="traced again at a second input"):
        jf = ds.jit(f)
        jf(np.ones(3))
    assert jf(np.ones(3)) != jf(np.ones(3))
    assert jf.stats()["eager"] >= 1


def test_twin_trace_keeps_a_deterministic_program_compiled(python_backend):
    """The twin trace does not flag what is the same at every input: constants of the
    function, a seeded generator, closures, guards (another path is not compared)."""
    w = np.array([0.5, -1.0, 2.0])

    def f(x, n):
        noise = np.random.default_rng(3).standard_normal(3)
        y = np.tanh(x * w + noise)
        for _ in range(n):
            y = y * 0.9 + np.cos(y)
        return np.sum(y) if np.sum(x) > 0 else -np.sum(y)

    with warnings.catch_warnings():
        warnings.simplefilter("error", JitWarning)
        jf = ds.jit(f, static_argnums=1)
        for x in (np.array([1.0, 2.0, 0.5]), np.array([0.3, 0.1, 0.2]),
                  np.array([-1.0, -2.0, 0.5])):
            np.testing.assert_allclose(jf(x, 3), f(x, 3), rtol=1e-12)
    assert jf.stats()["eager"] == 0


# ---------------------------------------------------------------- order statistics
_METHODS = ("linear", "hazen", "weibull", "median_unbiased", "normal_unbiased",
            "interpolated_inverted_cdf", "lower", "higher", "nearest", "midpoint")
_ORDER = {
    "sort": lambda x, q: np.sort(x, axis=1) * np.arange(1.0, 6.0),
    "sort axis=None": lambda x, q: np.sort(x, axis=None)[::3],
    "sort axis=0": lambda x, q: np.sort(x, axis=0)[-1],
    "partition": lambda x, q: np.partition(x, 2, axis=1)[:, :3] * 1.5,
    "median": lambda x, q: np.median(x, axis=1),
    "median axis=None": lambda x, q: np.median(x),
    "nanmedian": lambda x, q: np.nanmedian(x, axis=0),
    "percentile": lambda x, q: np.percentile(x, 100.0 * q, axis=1),
    "nanquantile": lambda x, q: np.nanquantile(x, q),
    **{f"quantile {m}": (lambda x, q, m=m: np.quantile(x, q, axis=1, method=m)) for m in _METHODS},
}


@pytest.mark.parametrize("name", list(_ORDER))
def test_order_statistics_follow_the_input_unchecked(name, python_backend):
    """Sorting permutations, the order statistics a quantile interpolates between and its
    NaN counts are recorded (value_mask) and recomputed by the compiled code: with
    ``check=False`` (no probe, no twin trace), traced at one input and called at others
    (other orders, ties, other quantiles q), values, gradients in x and q and tangents equal
    eager mode's, from one specialization."""
    f = _ORDER[name]
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    w = rng.standard_normal((4, 5))

    def loss(x, q):
        return np.sum(np.sin(f(x, q)) * 1.3) + np.sum(x * w)

    vg = ds.value_and_grad(loss, argnums=(0, 1))
    tan = lambda x, q: ds.jvp(loss, (x, q), (w, np.full(3, 0.3)))  # noqa: E731
    inputs = [(rng.standard_normal((4, 5)), rng.uniform(0.05, 0.95, 3)) for _ in range(4)]
    inputs.append((np.round(inputs[0][0]), np.array([0.0, 0.5, 1.0])))  # ties; q at the ends
    nan = "nan" in name
    if nan:
        for x, _ in inputs:
            x[rng.integers(0, 4, 3), rng.integers(0, 5, 3)] = np.nan
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        warnings.simplefilter("error", JitWarning)
        jf, jvg, jtan = (ds.jit(g, check=False) for g in (lambda x, q: f(x, q), vg, tan))
        for x, q in inputs:
            for jg, g in ((jf, lambda x, q: f(x, q)), (jvg, vg), (jtan, tan)):
                _leaves_close(jg(x, q), g(x, q), f"{name} at {x.ravel()[:3]}, q={q}")
    for jg in (jf, jvg, jtan):
        assert jg.stats()["specializations"] == 1 and jg.stats()["eager"] == 0


def test_take_with_integer_inputs_is_compiled(python_backend):
    """``np.take``/``take_along_axis`` with an integer array input: the positions are a
    record (no guard on the indices, no eager fallback), values and gradients as eager
    mode's at other indices; an index out of range raises at the call, as in eager mode."""
    rng = np.random.default_rng(5)
    x0 = rng.standard_normal((3, 4))

    def loss(i, j, x):
        return (np.sum(np.take(x, i, axis=1) ** 2) + np.sum(np.take(x, i) * 0.5)
                + np.sum(np.sin(np.take_along_axis(x, j, 1))))

    vg = ds.value_and_grad(loss, argnums=2)
    jvg = ds.jit(vg, check=False)
    for _ in range(4):
        i, j = rng.integers(-4, 4, 5), rng.integers(0, 4, (3, 2))
        _leaves_close(jvg(i, j, x0), vg(i, j, x0), f"take at {i}, {j}")
    assert jvg.stats()["specializations"] == 1
    with pytest.raises(IndexError, match="out of bounds"):
        jvg(np.array([0, 1, 2, 3, 4]), np.zeros((3, 2), int), x0)


# ---------------------------------------------------------------- masks from values
_NAN_A = np.array([[1.0, 2.5, 3.0], [0.5, -1.0, 2.0]])
_NAN_B = np.array([[np.nan, 2.0, 3.0], [0.5, np.nan, 2.0]])
_NAN_C = np.array([[1.0, np.nan, np.nan], [np.nan, -1.0, 4.0]])
_MASKED = {
    "nansum": lambda x: np.nansum(x * x, axis=1),
    "nanmean": lambda x: np.nanmean(x, axis=0),
    "nanprod": lambda x: np.nanprod(x),
    "nancumsum": lambda x: np.nancumsum(x, axis=1),
    "nancumprod": lambda x: np.nancumprod(x),
    "nanmax": lambda x: np.nanmax(x, axis=1),
    "nanmin": lambda x: np.nanmin(x),
    "nanvar": lambda x: np.nanvar(x, axis=1),
    "nanstd": lambda x: np.nanstd(x),
    "clip": lambda x: np.clip(x, 0.7, 2.2),
    "copysign": lambda x: np.copysign(x, x - 1.5),
    "std at zero spread": lambda x: np.std(x * np.array([1.0, 1.0, 0.0])),
    "wrapcauchy cdf": lambda x: ds.scipy.stats.wrapcauchy.cdf(np.abs(x) * 2.0, 0.5),
    "wrapcauchy logsf": lambda x: ds.scipy.stats.wrapcauchy.logsf(np.abs(x) * 2.0, 0.5),
    "wrapcauchy ppf": lambda x: ds.scipy.stats.wrapcauchy.ppf(np.abs(x) / 5.0, 0.5),
    "logsumexp with signed weights": lambda x: ds.scipy.special.logsumexp(
        x, axis=1, b=np.array([1.0, -1.0, 1.0])),
}


@pytest.mark.parametrize("name", sorted(_MASKED))
def test_value_masks_follow_the_input_unchecked(name, python_backend):
    """A mask a function computes from values (NaNs, a bound hit, a sign, the branch of a
    piecewise formula) is recomputed by the compiled program on every call: traced at an
    input with one pattern, called with ``check=False`` (no probe) at inputs with others,
    values, gradients and tangents equal eager mode's."""
    fun = _MASKED[name]
    w = np.linspace(0.5, 1.5, np.size(fun(_NAN_A)))

    def loss(x):
        return np.nansum(np.reshape(fun(x), (-1,)) * w)

    vg = ds.value_and_grad(loss)
    jvg = ds.jit(vg, check=False)
    jf = ds.jit(fun, check=False)
    t = np.ones_like(_NAN_A)
    jt = ds.jit(lambda x: ds.jvp(loss, (x,), (t,)), check=False)
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        for x in (_NAN_A, _NAN_B, _NAN_C, _NAN_A * -2.0, _NAN_A):
            if name.startswith(("wrapcauchy", "std", "clip", "copysign", "logsumexp")):
                x = np.nan_to_num(x, nan=1.75)
            _leaves_close(jf(x), fun(x), f"{name}: jit(f)")
            _leaves_close(jvg(x), vg(x), f"{name}: jit(value_and_grad(f))")
            _leaves_close(jt(x), ds.jvp(loss, (x,), (t,)), f"{name}: jit(jvp(f))")


def test_every_distribution_method_at_a_second_input(python_backend):
    """jit(value_and_grad) of every method of every continuous distribution, traced at one
    sample and called at another (check=True, the default): equal to eager mode (this found
    wrapcauchy's logcdf/logsf keeping the branch of the first input)."""
    from . import test_stats_dists as T

    for spec, method in T.CASES:
        rng = np.random.default_rng(zlib.crc32(f"{spec.name}{method}".encode()))
        first = T._cont_args(spec, rng, method, n=8)
        second = T._cont_args(spec, rng, method, n=8)
        f = getattr(getattr(ds.scipy.stats, spec.name), method)
        wts = np.linspace(0.5, 1.5, 8)
        vg = ds.value_and_grad(lambda *a, f=f: np.sum(f(*a) * wts),
                               argnums=tuple(range(len(first))))
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            jvg = ds.jit(vg)
            jvg(*first)
            _leaves_close(jvg(*second), vg(*second), f"{spec.name}.{method} at a second input")


def test_distribution_checks_and_support_hold_at_every_call(python_backend):
    """Under jit a parameter check is a guard (a later invalid value re-traces and raises,
    as eager mode) and the support mask is recomputed (outside it: SciPy's edge values)."""
    jf = ds.jit(lambda x, s: ds.scipy.stats.norm.logpdf(x, 0.0, s), check=False)
    x = np.array([0.3, -1.2])
    close = np.testing.assert_allclose
    close(jf(x, np.array([1.0, 2.0])), ds.scipy.stats.norm.logpdf(x, 0.0, [1.0, 2.0]))
    with pytest.raises(ValueError, match="scale must be positive"):
        jf(x, np.array([1.0, -2.0]))
    jg = ds.jit(ds.grad(lambda x: np.sum(ds.scipy.stats.expon.cdf(x) * np.array([1.0, 2.0]))),
                check=False)
    for x in (np.array([0.5, 1.0]), np.array([-0.5, 1.0]), np.array([0.5, -1.0])):
        close(jg(x), ds.grad(lambda x: np.sum(ds.scipy.stats.expon.cdf(x) *
                                              np.array([1.0, 2.0])))(x))
    jq = ds.jit(lambda q: ds.scipy.stats.norm.ppf(q), check=False)
    for q in (np.array([0.2, 0.7]), np.array([0.0, 1.0]), np.array([1.5, 0.3])):
        close(jq(q), ds.scipy.stats.norm.ppf(q))


# ---------------------------------------------------------------- interval lookups
def _lookups():
    from diffsci.scipy import interpolate as interp

    x = np.linspace(0.0, 3.0, 7)
    y = np.sin(x) + 0.1 * x
    grid = (x, np.linspace(-1.0, 1.0, 5))
    vals = np.cos(x)[:, None] * np.linspace(0.5, 1.5, 5)[None, :]

    def rgi(method, fill=None):
        r = interp.RegularGridInterpolator(grid, vals, method=method, bounds_error=False,
                                           fill_value=fill)
        return lambda q: r(np.stack([q, np.tanh(q) - 0.3], axis=-1))

    from diffsci.scipy.integrate import solve_ivp

    sol = solve_ivp(lambda t, y: -0.5 * y + 0.2, (-1.0, 4.0), np.array([1.0, 2.0]),
                    dense_output=True).sol
    return {
        "solve_ivp dense output": lambda q: np.sum(sol(q), axis=0),
        "interp": lambda q: np.interp(q, x, y),
        "interp left/right": lambda q: np.interp(q, x, y, left=-1.0, right=2.0),
        "CubicSpline": lambda q: interp.CubicSpline(x, y)(q),
        "CubicSpline extrapolate=False": lambda q: interp.CubicSpline(x, y,
                                                                      extrapolate=False)(q),
        "make_interp_spline": lambda q: interp.make_interp_spline(x, y, k=3)(q),
        **{f"interp1d {k}": (lambda q, k=k: interp.interp1d(x, y, kind=k, bounds_error=False,
                                                            fill_value=(-1.0, 2.0))(q))
           for k in ("linear", "nearest", "previous", "next", "cubic")},
        "RegularGridInterpolator linear": rgi("linear"),
        "RegularGridInterpolator nearest": rgi("nearest"),
        "RegularGridInterpolator fill": rgi("linear", 0.25),
    }


@pytest.mark.parametrize("name", sorted(_lookups()))
@pytest.mark.parametrize("check", [True, False])
def test_interval_lookups_follow_the_queries(name, check, python_backend):
    """The interval a query falls in (searchsorted of its value), its out-of-range mask and
    nearest-neighbour choice are guards: traced at queries in some intervals, called at
    queries in others (a scalar query too, which the probe's permutations cannot move),
    values and gradients equal eager mode's.  jit(value_and_grad(np.interp)) at q = 0.2
    then 2.7 returned the first interval's line extrapolated, with the default check."""
    fun = _lookups()[name]
    for shape_q in ((0.2, 2.7, 1.3, 3.4, -0.5), ((0.2, 0.9), (2.7, 0.1), (1.49, 1.51),
                                                (-0.3, 3.2))):
        qs = [np.asarray(q, float) for q in shape_q]
        loss = lambda q: np.sum(fun(q) * (1.0 + np.arange(np.size(q))))  # noqa: E731
        vg = ds.value_and_grad(loss)
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            jvg, jf = ds.jit(vg, check=check), ds.jit(fun, check=check)
            for q in qs:
                _leaves_close(jf(q), fun(q), f"{name}: jit(f) at {q}")
                _leaves_close(jvg(q), vg(q), f"{name}: jit(value_and_grad(f)) at {q}")


#: diffsci.scipy functions right under jit only through the probe.  Empty: LU's and QR's
#: pivots, Hessenberg's reflector signs, rsf2csf's blocks are guards, logsumexp's shift,
#: binom/comb/rgamma's pole masks and funm's contour radii records.
PROBED_SCIPY = frozenset()


@pytest.mark.parametrize("module", ["test_scipy_special", "test_scipy_linalg", "test_fft"])
def test_every_scipy_spec_traces_one_program_on_a_path(module, python_backend):
    """As test_every_spec_traces_one_program_on_a_path, for diffsci.scipy's tables."""
    import importlib

    from .test_jit import _loss_of

    compared = 0
    for k, spec in enumerate(importlib.import_module(f"{__package__}.{module}").SPECS):
        rng = np.random.default_rng(zlib.crc32(spec.name.encode()))
        first = tuple(s(rng) for s in spec.args)
        compared += _one_program_on_a_path(spec.fun, _loss_of(spec.fun, rng, first), first, k,
                                           f"{module} {spec.name}")
    assert compared > 20


@pytest.mark.parametrize("module", ["test_scipy_special", "test_scipy_linalg", "test_fft"])
def test_every_scipy_spec_not_probed_is_right_at_a_second_input_unchecked(module,
                                                                          python_backend):
    import importlib

    from .test_jit import _loss_of

    specs = importlib.import_module(f"{__package__}.{module}").SPECS
    for spec in specs:
        if spec.name in PROBED_SCIPY:
            continue
        rng = np.random.default_rng(zlib.crc32(spec.name.encode()))
        first = tuple(s(rng) for s in spec.args)
        second = tuple(s(rng) for s in spec.args)
        what = f"{module} {spec.name} (check=False)"
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            vg = ds.value_and_grad(_loss_of(spec.fun, rng, first),
                                   argnums=tuple(range(len(first))))
            jvg, jf = ds.jit(vg, check=False), ds.jit(spec.fun, check=False)
            jvg(*first)
            jf(*first)
            _leaves_close(jf(*second), spec.fun(*second), "jit(f) at a second input, " + what)
            _leaves_close(jvg(*second), vg(*second),
                          "jit(value_and_grad(f)) at a second input, " + what)


@pytest.mark.parametrize("numeric_probe", [True, False])
@pytest.mark.parametrize("module", ["test_scipy_special", "test_scipy_linalg", "test_fft"])
def test_every_scipy_spec_is_right_at_a_second_input(module, numeric_probe, python_backend,
                                                     monkeypatch):
    """With the default check, every spec of these tables, PROBED_SCIPY too; with the
    numeric probe off, the twin trace alone holds them (value and gradient)."""
    import importlib

    from diffsci._jit import JitFunction

    from .test_jit import _loss_of

    if not numeric_probe:
        monkeypatch.setattr(JitFunction, "_probe", lambda *a: None)

    specs = importlib.import_module(f"{__package__}.{module}").SPECS
    for spec in specs:
        rng = np.random.default_rng(zlib.crc32(spec.name.encode()))
        first = tuple(s(rng) for s in spec.args)
        second = tuple(s(rng) for s in spec.args)
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            vg = ds.value_and_grad(_loss_of(spec.fun, rng, first),
                                   argnums=tuple(range(len(first))))
            jvg = ds.jit(vg)
            jvg(*first)
            _leaves_close(jvg(*second), vg(*second), f"{module} {spec.name} at a second input")
