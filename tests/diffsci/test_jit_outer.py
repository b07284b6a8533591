"""``diffsci.jit`` under outer transforms: ``grad(jit(f))``, ``jvp(jit(f))``, ``hessian(jit(f))``.

``grad``/``value_and_grad`` of a jitted function is ``jit(value_and_grad(f))``, one compiled
program.  Elsewhere (``vjp``, ``jvp``, ``jacobian``, a jitted function called inside a larger
differentiated one) the jitted function runs as one record of the outer transform, whose
rules are the derived jitted functions ``jit(vjp_f)`` / ``jit(jvp_f)``
(diffsci/_jit/_outer.py).  Same numbers as
eager mode over the whole spec table of tests/diffsci/test_numpy_grads.py, nesting in every
order, guards, closures and ``check=True`` for the derived programs, and a count that ``f``
really stops running once compiled.  The "python" backend runs the generated source as
plain Python (tests/diffsci/test_jit_numba.py compiles a sample with Numba).
"""

from __future__ import annotations

import dataclasses
import warnings
import zlib

import numpy as np
import pytest

import diffsci as ds
from diffsci._jit import JitWarning, _compile
from diffsci.testing import check_grads

from . import test_numpy_grads as tng
from .test_jit import PROBED, close, strict
from .test_paper_capabilities import taylor_sin


@pytest.fixture(autouse=True)
def python_backend(monkeypatch, tmp_path):
    monkeypatch.setattr(_compile, "BACKEND", "python")
    monkeypatch.setenv("DIFFSCI_JIT_CACHE", str(tmp_path))


def _weights(rng, out):
    return [rng.standard_normal(np.shape(ds.stop_gradient(o))) for o in ds.tree_leaves(out)]


def _weighted(fun, ws):
    def loss(*a):
        total = 0.0
        for o, w in zip(ds.tree_leaves(fun(*a)), ws):
            total = total + np.sum(np.real(o * w))
        return total

    return loss


def _tangent(rng, a):
    a = np.asarray(a)
    t = rng.standard_normal(a.shape)
    if a.dtype.kind == "c":
        t = t + 1j * rng.standard_normal(a.shape)
    return t.astype(a.dtype) if a.shape else a.dtype.type(t)


_SPECS = tng.SPECS


@pytest.mark.parametrize("k", range(len(_SPECS)))
def test_every_spec_grad_and_jvp_of_jit_equal_eager(k):
    """grad(loss of jit(f)) and jvp(jit(f)) against eager mode, for every spec."""
    spec = _SPECS[k]
    rng = np.random.default_rng(zlib.crc32(spec.name.encode()) + 1)
    args = tuple(sample(rng) for sample in spec.args)
    nums = tuple(range(len(args)))
    with warnings.catch_warnings(record=True) as caught, np.errstate(all="ignore"):
        warnings.simplefilter("always")
        ws = _weights(rng, spec.fun(*args))
        jf = ds.jit(spec.fun)
        g_ref = ds.grad(_weighted(spec.fun, ws), argnums=nums)(*args)
        g_jit = ds.grad(_weighted(jf, ws), argnums=nums)
        close(g_jit(*args), g_ref, rtol=1e-12)
        close(g_jit(*args), g_ref, rtol=1e-12)  # the cached programs, again
        tans = tuple(_tangent(rng, a) for a in args)
        close(ds.jvp(jf, args, tans), ds.jvp(spec.fun, args, tans), rtol=1e-12)
    eager = [str(w.message) for w in caught if issubclass(w.category, JitWarning)]
    # the documented eager fallbacks: in-place writes, and (PROBED) a rule whose plain-code
    # constant jit's second-input probe caught (it then runs eagerly: right, not compiled)
    probed = PROBED | {"geomspace"}  # its sign of start is plain code: probed under vjp
    allowed = ("in-place write",) + (("second input",) if spec.name in probed else ())
    assert all(any(a in m for a in allowed) for m in eager), eager
    if not eager:  # the derived programs ran, compiled once each
        assert jf._derived["vjp"].stats()["specializations"] == 1
        assert jf._derived["jvp"].stats()["specializations"] == 1


# ---------------------------------------------------------------- f stops running
def test_f_runs_only_while_tracing():
    calls = []

    def f(x):
        calls.append(1)
        return np.sum(np.sin(x) * x ** 2)

    jf = ds.jit(f)
    x = np.array([0.3, 1.1])
    closed = np.cos(x) * x ** 2 + 2 * x * np.sin(x)
    c = strict()
    for k in range(3):
        close(ds.grad(jf)(x + k), np.cos(x + k) * (x + k) ** 2 + 2 * (x + k) * np.sin(x + k))
    close(ds.jvp(jf, (x,), (np.ones(2),))[1], np.sum(closed))
    close(ds.vjp(jf, x)[1](1.0)[0], closed)
    # the traces (jit(value_and_grad(f)) for grad, the forward and jit(vjp_f) for vjp,
    # jit(jvp_f)) and any checks done
    n = len(calls)
    for _ in range(3):
        close(ds.grad(jf)(x), closed)
        v, g = ds.value_and_grad(jf)(x)
        y, back = ds.vjp(jf, x)
        close(back(2.0)[0], 2 * closed)
        close(ds.jvp(jf, (x,), (np.ones(2),))[1], np.sum(closed))
    c.__exit__(None, None, None)
    assert len(calls) == n  # the compiled programs ran, never f
    assert v == f(x) and g.dtype == np.float64


# ---------------------------------------------------------------- grad(jit(f)) directly
def test_grad_of_jit_is_jit_of_value_and_grad():
    """grad/value_and_grad of jit(f) is one compiled program with jit(f)'s settings: f
    traced once, never run again, no record of an eager tape; argnums, has_aux, static
    arguments and pytrees as eager; the same errors as eager mode."""
    calls = []

    def f(p, x, scale):
        calls.append(1)
        r = np.sin(p["w"] * x) * scale + p["b"]
        return np.sum(r ** 2), {"r": r, "n": np.sum(x)}

    jf = ds.jit(f, static_argnums=2, check=False)
    p = {"w": np.array([0.3, -1.2]), "b": np.array(0.5)}
    x = np.array([1.5, 0.7])
    loss = lambda p, x, scale: f(p, x, scale)[0]  # noqa: E731
    jloss = ds.jit(loss, static_argnums=2, check=False, max_specializations=3)
    vg = ds.value_and_grad(jloss, argnums=(0, 1))
    assert vg is ds.value_and_grad(jloss, argnums=(0, 1))  # kept per (argnums, has_aux)
    assert vg.static_argnums == (2,) and vg.max_specializations == 3 and vg.check is False
    ref = ds.value_and_grad(loss, argnums=(0, 1))
    for scale in (2.0, 2.0, 3.0):
        close(vg(p, x, scale), ref(p, x, scale), rtol=1e-12)
    aux_ref = ds.value_and_grad(f, has_aux=True)(p, x, 2.0)
    n = len(calls)
    for _ in range(3):
        close(ds.value_and_grad(jf, has_aux=True)(p, x, 2.0), aux_ref, rtol=1e-12)
        close(ds.grad(jf, has_aux=True)(p, x, 2.0), (aux_ref[1], aux_ref[0][1]), rtol=1e-12)
    assert len(calls) == n + 1  # one trace for both (grad calls value_and_grad)
    close(ds.grad(jloss, argnums=[1])(p, x, 2.0), ds.grad(loss, argnums=[1])(p, x, 2.0))
    # the same errors as eager mode
    with pytest.raises(TypeError, match="scalar"):
        ds.grad(ds.jit(lambda x: x * 2.0))(x)
    with pytest.raises(TypeError, match="integer"):
        ds.grad(ds.jit(lambda x: x * 2.0))(3)
    with pytest.raises(ValueError, match="argnums"):
        ds.grad(ds.jit(lambda x: x * 2.0), argnums=3)(1.0)
    # higher order through it: the VJP of jit(value_and_grad(f)) is compiled too
    j2 = ds.jit(lambda x: np.sum(np.sin(x) * x ** 2))
    close(ds.jacobian(ds.grad(j2))(x), hess2(x), rtol=1e-10)
    close(ds.grad(ds.grad(ds.jit(lambda t: np.sin(t) * t)))(0.7),
          2 * np.cos(0.7) - 0.7 * np.sin(0.7), rtol=1e-12)


# ---------------------------------------------------------------- nesting
def f2(x):
    return np.sum(np.sin(x) * x ** 2)


def hess2(x):
    return np.diag(-np.sin(x) * x ** 2 + 4 * x * np.cos(x) + 2 * np.sin(x))


def test_hessian_and_grad_of_grad_of_jit():
    x = np.array([0.3, 1.1, -0.7])
    jf = ds.jit(f2)
    c = strict()
    close(ds.hessian(jf)(x), hess2(x), rtol=1e-10)
    close(ds.hessian(jf, mode="fwd")(x), hess2(x), rtol=1e-10)
    close(ds.hessian(jf)(x * 2), hess2(x * 2), rtol=1e-10)
    close(ds.grad(lambda x: np.sum(ds.grad(jf)(x) ** 2))(x),
          2 * hess2(x) @ ds.grad(f2)(x), rtol=1e-10)
    close(ds.jvp(ds.grad(jf), (x,), (np.ones(3),))[1], hess2(x) @ np.ones(3), rtol=1e-10)
    # the same through the record path: jit(f) as one record, its VJP jit(vjp_f) recorded
    # in turn by the outer jacobian
    close(ds.jacobian(lambda x: ds.vjp(jf, x)[1](1.0)[0])(x), hess2(x), rtol=1e-10)
    c.__exit__(None, None, None)
    # the second order ran as compiled programs: grad(jit(f)) is jit(value_and_grad(f)),
    # whose VJP is compiled too; and the VJP of jit(vjp_f)
    vg1 = jf._derived[("vg", 0, False)]
    assert vg1.stats()["specializations"] >= 1
    assert vg1._derived["vjp"].stats()["specializations"] >= 1
    vjp1 = jf._derived["vjp"]
    assert vjp1.stats()["specializations"] >= 1
    assert vjp1._derived["vjp"].stats()["specializations"] >= 1
    check_grads(jf, (x,), order=2)


def test_grad_of_jit_of_grad_and_jit_of_grad_of_jit():
    x = np.array([0.3, 1.1])
    c = strict()
    ggj = ds.grad(lambda x: np.sum(ds.jit(ds.grad(f2))(x)))
    close(ggj(x), np.diag(hess2(x)), rtol=1e-10)
    close(ds.jit(ds.grad(ds.jit(f2)))(x), ds.grad(f2)(x))  # inside a trace: inlined
    close(ds.jit(ds.hessian(ds.jit(f2)))(x), hess2(x), rtol=1e-10)
    c.__exit__(None, None, None)
    check_grads(ds.jit(ds.grad(f2)), (x,), order=2)


def test_traced_cotangent_and_mixed_levels():
    x = np.array([0.4, -1.3])
    jf = ds.jit(lambda x, y: np.sin(x) * y)

    def inner(y):  # y is traced by the outer grad, x only by the inner one
        return np.sum(ds.grad(lambda x: np.sum(jf(x, y) * y))(x))

    # d/dy Σ_i cos(x_i) y_i²  = 2 y cos(x)
    y = np.array([0.5, 2.0])
    close(ds.grad(inner)(y), 2 * y * np.cos(x), rtol=1e-12)

    def transpose(v):  # the pullback's cotangent traced: VJP of the VJP
        _, back = ds.vjp(lambda x: jf(x, y), x)
        return np.sum(back(v)[0] ** 2)

    v = np.array([1.5, -0.5])
    close(ds.grad(transpose)(v), 2 * (np.cos(x) * y) ** 2 * v, rtol=1e-12)
    both = ds.grad(lambda x, y: np.sum(jf(x, y) ** 2), argnums=(0, 1))(x, y)
    close(both, (2 * np.sin(x) * np.cos(x) * y ** 2, 2 * np.sin(x) ** 2 * y))


# ---------------------------------------------------------------- guards, closures, check
def test_guards_of_the_derived_programs_respecialize():
    jf = ds.jit(taylor_sin, static_argnames="log")
    g = ds.grad(jf)
    quiet = lambda s: None  # noqa: E731
    eager = ds.grad(taylor_sin)
    inside = ds.grad(lambda x: 1.0 * jf(x, log=quiet))  # jf one record of grad's tape
    for x in (1.0, 1.05, 0.1, 0.12, 3.0):
        assert g(x, log=quiet) == eager(x, log=quiet)
        assert inside(x) == eager(x, log=quiet)
    # 1.0 and 1.05 need the same number of terms, 0.1 and 0.12 another, 3.0 a third
    assert jf._derived[("vg", 0, False)].stats()["specializations"] == 3
    assert jf.stats()["specializations"] == 3
    assert jf._derived["vjp"].stats()["specializations"] == 3


def test_closures_are_read_at_call_time_by_the_derived_programs():
    w = np.array([1.0, 2.0])

    def f(x):
        return np.sum(np.sin(x) * w)

    jf = ds.jit(f)
    x = np.array([0.2, 0.9])
    inside = ds.grad(lambda x: 1.0 * jf(x))  # jf one record, its VJP jit(vjp_f)
    for g in (ds.grad(jf), inside):
        close(g(x), np.cos(x) * w)
    w[1] = -3.0  # in place: seen
    for g in (ds.grad(jf), inside):
        close(g(x), np.cos(x) * np.array([1.0, -3.0]))
    close(ds.jvp(jf, (x,), (np.ones(2),))[1], np.sum(np.cos(x) * w))
    derived = (jf._derived["vjp"], jf._derived[("vg", 0, False)])
    n = [d.stats()["traces"] for d in derived]
    w = np.array([5.0, 6.0])  # rebound: traced again
    for g in (ds.grad(jf), inside):
        close(g(x), np.cos(x) * w)
    assert [d.stats()["traces"] for d in derived] == [k + 1 for k in n]


def test_check_catches_a_wrong_derived_program(monkeypatch):
    real = _compile.compile_program

    def wrong(prog, name="f", compile_all=False):
        c = real(prog, name, compile_all)
        if name.startswith(("vjp of", "value_and_grad of")):
            d = c.driver
            c.driver = lambda *a: tuple(v + 1e-3 for v in d(*a))
        return c

    import diffsci._jit as dj

    monkeypatch.setattr(dj, "compile_program", wrong)
    jf = ds.jit(f2)
    x = np.array([0.3, 1.1])
    with pytest.warns(JitWarning, match="value_and_grad of f2 runs eagerly.*compiled code "
                                        "computed"):
        close(ds.grad(jf)(x), ds.grad(f2)(x))
    close(ds.grad(jf)(x), ds.grad(f2)(x))  # that signature now runs eagerly
    inside = ds.grad(lambda x: 1.0 * jf(x))  # the record path: its VJP program is wrong too
    with pytest.warns(JitWarning, match="vjp of f2 runs eagerly.*compiled code computed"):
        close(inside(x), ds.grad(f2)(x))
    close(inside(x), ds.grad(f2)(x))


# ---------------------------------------------------------------- arguments and outputs
@dataclasses.dataclass
class P:
    a: object
    b: object


def test_pytrees_statics_and_multiple_outputs():
    def f(p, d, n, scale=1.0):
        r = np.sqrt(p.a ** 2 + p.b ** 2) * scale
        return {"r": r, "pair": (d["w"] * r ** n, n, np.argmax(d["w"]))}

    jf = ds.jit(f, static_argnums=2)

    def loss(fun):
        def value(p, d):
            o = fun(p, d, 3, scale=2.0)
            assert o["pair"][1] == 3
            return o["r"] + np.sum(o["pair"][0] * np.array([1.0, -1.0]))

        return value

    p, d = P(3.0, 4.0), {"w": np.array([1.0, 2.0])}
    c = strict()
    got = ds.grad(loss(jf), argnums=(0, 1))(p, d)
    c.__exit__(None, None, None)
    ref = ds.grad(loss(f), argnums=(0, 1))(p, d)
    close(got, ref)
    assert isinstance(got[0], P) and got[0].a == pytest.approx(ref[0].a)
    # closed form: r = 10, loss = r + (w0 - w1) r^3, dloss/dw = (r^3, -r^3)
    close(got[1]["w"], np.array([1000.0, -1000.0]))
    check_grads(lambda p, d: loss(jf)(p, d), (p, d))


def test_integer_and_unused_inputs_under_grad():
    jf = ds.jit(lambda x, n, z: np.sum(x[::2] ** 2) * n + 0.0 * np.sum(z))
    x = np.array([1.0, 2.0, 3.0])
    c = strict()
    g = ds.grad(lambda x, z: jf(x, np.int64(3), z), argnums=(0, 1))(x, np.ones(2))
    c.__exit__(None, None, None)
    close(g, (np.array([6.0, 0.0, 18.0]), np.zeros(2)))


# ---------------------------------------------------------------- masks of maximum & co
_SELECTORS = [("maximum", np.maximum), ("minimum", np.minimum), ("fmax", np.fmax),
              ("fmin", np.fmin)]


@pytest.mark.parametrize("name,op", _SELECTORS)
def test_selection_masks_follow_the_input_without_guards(name, op):
    """The rules of maximum & co choose by comparing values; compiled, the choice must be
    recomputed on every call (no baked sign pattern: a silent wrong gradient before), with
    one specialization for every pattern, ties split 0.5/0.5 and fmax/fmin's NaN rule."""

    def f(x, y):
        return np.sum(op(x, y) ** 2 * np.array([1.0, 2.0, 3.0, 4.0, 5.0, 6.0]))

    rng = np.random.default_rng(7)
    jg = ds.jit(ds.grad(f, argnums=(0, 1)))
    gj = ds.grad(ds.jit(f), argnums=(0, 1))
    jt = ds.jit(lambda x, y, t: ds.jvp(lambda x: f(x, y), (x,), (t,)))
    jh = ds.jit(ds.hessian(lambda x, y: f(x, y)))
    c = strict()
    for k in range(6):
        x, y = rng.standard_normal(6), rng.standard_normal(6)
        y[k] = x[k]  # a tie
        if name.startswith("f") and k % 2:
            y[(k + 2) % 6] = np.nan  # fmax/fmin take the other argument
        t = rng.standard_normal(6)
        ref = ds.grad(f, argnums=(0, 1))(x, y)
        close(jg(x, y), ref)
        close(gj(x, y), ref)
        close(jt(x, y, t), ds.jvp(lambda x: f(x, y), (x,), (t,)))
        close(jh(x, y), ds.hessian(lambda x, y: f(x, y))(x, y))
        # closed form: d/dx = 2 w op(x, y) [x wins] + half of it on ties
        w = np.arange(1.0, 7.0)
        wins = {"maximum": x > y, "minimum": x < y, "fmax": (x > y) | np.isnan(y),
                "fmin": (x < y) | np.isnan(y)}[name]
        share = np.where(wins, 1.0, np.where(x == y, 0.5, 0.0))
        close(jg(x, y)[0], 2 * w * op(x, y) * share)
    c.__exit__(None, None, None)
    for j in (jg, jt, jh):
        assert j.stats()["specializations"] == 1, j.stats()


def test_relu_network_trains_with_one_specialization():
    rng = np.random.default_rng(3)
    w1, w2 = rng.standard_normal((3, 8)), rng.standard_normal(8)
    xs = rng.standard_normal((20, 4, 3))

    def loss(w1, w2, x):
        return np.sum((np.maximum(x @ w1, 0.0) @ w2 - 1.0) ** 2)

    step = ds.jit(ds.value_and_grad(loss, argnums=(0, 1)))
    c = strict()
    for x in xs:  # the sign pattern of the hidden layer changes from batch to batch
        close(step(w1, w2, x), ds.value_and_grad(loss, argnums=(0, 1))(w1, w2, x))
        w1 = w1 - 0.01 * step(w1, w2, x)[1][0]
    c.__exit__(None, None, None)
    assert step.stats()["specializations"] == 1 and step.stats()["traces"] == 1


_PLAIN_MASKS = {
    "abs": lambda x, y: np.sum(np.abs(x) * y),
    "fabs": lambda x, y: np.sum(np.fabs(x) ** 2 * y),
    "clip": lambda x, y: np.sum(np.clip(x, -0.5, 0.6) * y),
    "clip_traced_bounds": lambda x, y: np.sum(np.clip(x, y * 0.3, 0.7) ** 2),  # lo > hi too
    "clip_upper_only": lambda x, y: np.sum(np.clip(x, None, y) ** 2),
    "remainder": lambda x, y: np.sum(np.remainder(x, y + 2.0)),
    "fmod": lambda x, y: np.sum(np.fmod(x * 3, y + 2.0)),
}


@pytest.mark.parametrize("name", sorted(_PLAIN_MASKS))
def test_sign_clip_and_quotient_steps_follow_the_input(name):
    """abs's sign, clip's masks and remainder/fmod's quotient steps are recorded (zero
    derivative primitives) instead of kept from the first input."""
    f = _PLAIN_MASKS[name]
    rng = np.random.default_rng(11)
    jg = ds.jit(ds.grad(f, argnums=(0, 1)), check=False)  # no first-call check, no probes
    gj = ds.grad(ds.jit(f, check=False), argnums=(0, 1))
    jt = ds.jit(lambda x, y, t: ds.jvp(lambda x: f(x, y), (x,), (t,)), check=False)
    c = strict()
    for _ in range(5):
        x, y = 2 * rng.standard_normal(6), 2 * rng.standard_normal(6)
        t = rng.standard_normal(6)
        ref = ds.grad(f, argnums=(0, 1))(x, y)
        close(jg(x, y), ref)
        close(gj(x, y), ref)
        close(jt(x, y, t), ds.jvp(lambda x: f(x, y), (x,), (t,)))
    c.__exit__(None, None, None)
    assert jg.stats()["specializations"] == 1 and jt.stats()["specializations"] == 1
    if name == "abs":  # closed form: d/dx Σ|x| y = sign(x) y
        close(jg(x, y)[0], np.sign(x) * y)
