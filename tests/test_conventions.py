"""The conventions the packages share, and the errors that name a broken one.

- Callback argument orders (the rule in ``diffsci``'s module docstring): SciPy's order where
  SciPy has the function, else ``(t, y, params)`` as in ``solve_ivp``. Each solver is called once
  with a callback that records what it received.
- ``diffsci.optim``: ``update(grads, state, params)`` validates its arguments; ``minimize`` takes
  ``args`` third (SciPy's order) and refuses the older ``(fun, x0, method, args)`` clearly.
- ``raytrace.Scene`` refuses a single shape or light where a tuple belongs, naming the field.
- No file of the repository cites a design document outside it.
"""

import pathlib
import re

import numpy as np
import pytest

import diffsci as ds
import raytrace as rt
import sde
from diffsci.optim import SGD, Adam, AdamState, SGDState
from diffsci.optim import minimize as optim_minimize
from diffsci.scipy.integrate import odeint
from diffsci.scipy.integrate import solve_ivp as ds_solve_ivp
from diffsci.scipy.optimize import minimize as scipy_minimize
from diffsci.scipy.optimize import root

ROOT = pathlib.Path(__file__).resolve().parents[1]


class _Recorder:
    """A callback that records the kinds of its first calls' arguments."""

    def __init__(self, fun):
        self.fun, self.calls = fun, []

    def __call__(self, *args):
        if len(self.calls) < 3:
            self.calls.append(tuple(np.shape(ds.extend.getval(a)) for a in args))
        return self.fun(*args)


# ---------------------------------------------------------------- callback orders


def test_odeint_calls_func_as_scipy_does():
    y0 = np.array([1.0, 2.0])
    rec = _Recorder(lambda y, t, k: -k * y)
    ys = odeint(rec, y0, np.array([0.0, 0.5]), 0.7)
    assert rec.calls[0] == ((2,), (), ())  # (y, t, *args)
    np.testing.assert_allclose(ys[-1], y0 * np.exp(-0.35), rtol=1e-6)
    rec = _Recorder(lambda t, y, k: -k * y)
    ys = odeint(rec, y0, np.array([0.0, 0.5]), 0.7, tfirst=True)
    assert rec.calls[0] == ((), (2,), ())  # tfirst=True: (t, y, *args)
    np.testing.assert_allclose(ys[-1], y0 * np.exp(-0.35), rtol=1e-6)


_A, _B = np.array([1.0, 2.0]), np.array([0.5, 0.1])


def _two(y, t, a, b):
    return -a * y + b


def _packed(y, t, p):
    return -p[0] * y + p[1]


def _star(y, t, *p):
    return -p[0][0] * y + p[0][1] if len(p) == 1 else -p[0] * y + p[1]


def _two_tfirst(t, y, a, b):
    return -a * y + b


_ZEROS = np.zeros(2)


def _one_default(y, t, a, b=_ZEROS):  # takes the tuple whole (as a) or unpacked
    a = a if not isinstance(a, tuple) else a[0]
    return -a * y + b


@pytest.mark.parametrize("func, call, ref", [
    # SciPy's positional args tuple: unpacked where func cannot take it whole
    (_two, lambda f, y0, t: odeint(f, y0, t, (_A, _B)), "scipy"),
    (_two_tfirst, lambda f, y0, t: odeint(f, y0, t, (_A, _B), tfirst=True), "scipy_tfirst"),
    # a func that takes one parameter: the tuple is that parameter (diffsci's *args)
    (_packed, lambda f, y0, t: odeint(f, y0, t, (_A, _B)), "scipy"),
    # *args and defaults bind either way: diffsci's reading (the tuple whole) is kept
    (_star, lambda f, y0, t: odeint(f, y0, t, (_A, _B)), "scipy"),
    (_one_default, lambda f, y0, t: odeint(f, y0, t, (_A, _B)), "a_only"),
    # the spelled-out forms
    (_two, lambda f, y0, t: odeint(f, y0, t, _A, _B), "scipy"),
    (_two, lambda f, y0, t: odeint(f, y0, t, args=(_A, _B)), "scipy"),
])
def test_odeint_reads_scipys_positional_args_tuple_only_where_unambiguous(func, call, ref):
    """``odeint(f, y0, t, (a, b))`` means ``args=(a, b)`` in SciPy and one argument in
    diffsci's ``*args``; every signature class gets the reading that binds, checked against
    scipy.integrate.odeint's solution of the intended equation."""
    import scipy.integrate
    y0, t = np.ones(2), np.linspace(0.0, 1.0, 4)
    tol = dict(rtol=1e-11, atol=1e-12)
    want = {"scipy": lambda: scipy.integrate.odeint(_two, y0, t, (_A, _B), **tol),
            "scipy_tfirst": lambda: scipy.integrate.odeint(_two, y0, t, (_A, _B), **tol),
            "a_only": lambda: scipy.integrate.odeint(_two, y0, t, (_A, np.zeros(2)), **tol)}[ref]()
    np.testing.assert_allclose(call(func, y0, t), want, rtol=1e-6, atol=1e-8)


def test_odeint_positional_args_tuple_is_differentiated():
    t = np.linspace(0.0, 1.0, 3)
    f = lambda a, b: np.sum(odeint(_two, np.ones(2), t, (a, b), rtol=1e-10, atol=1e-12))
    g = lambda a, b: np.sum(odeint(_two, np.ones(2), t, a, b, rtol=1e-10, atol=1e-12))
    for x, y in zip(ds.grad(f, argnums=(0, 1))(_A, _B), ds.grad(g, argnums=(0, 1))(_A, _B)):
        np.testing.assert_array_equal(x, y)
    ds.testing.check_grads(f, (_A, _B), modes=("rev",), order=1)


def test_solve_ivp_calls_fun_as_scipy_does():
    rec = _Recorder(lambda t, y, k: -k * y)
    sol = ds_solve_ivp(rec, (0.0, 0.5), np.array([1.0, 2.0]), args=(0.7,), rtol=1e-9,
                       atol=1e-12)
    assert rec.calls[0] == ((), (2,), ())  # (t, y, *args)
    np.testing.assert_allclose(sol.y[:, -1], np.array([1.0, 2.0]) * np.exp(-0.35), rtol=1e-6)


def test_sde_callbacks_take_time_state_params():
    drift = _Recorder(lambda t, y, p: p[0] * y)
    diffusion = _Recorder(lambda t, y, p: p[1] * y)
    gbm = sde.SDE(drift, diffusion, noise="diagonal")
    ys = sde.sdeint(gbm, np.ones((4, 1)), np.linspace(0.0, 0.1, 3), np.array([0.5, 0.0]),
                    dt=0.01, seed=0)
    assert drift.calls[0] == ((), (4, 1), (2,))  # (t, y, params)
    assert diffusion.calls[0] == ((), (4, 1), (2,))
    np.testing.assert_allclose(ys[-1], np.full((4, 1), 1.005 ** 10), rtol=1e-12)  # σ = 0: Euler


def test_optimisers_call_fun_with_x_then_args():
    rec = _Recorder(lambda x, a, b: x ** 3 + a * x - b)
    assert float(root(rec, 1.5, args=(1.0, 2.0))) == pytest.approx(1.0, abs=1e-10)
    assert rec.calls[0] == ((), (), ())
    rec = _Recorder(lambda x, c: np.sum((x - c) ** 2))
    res = scipy_minimize(rec, np.zeros(2), (np.array([1.0, -1.0]),))  # args third, as SciPy
    np.testing.assert_allclose(res.x, [1.0, -1.0], atol=1e-6)
    assert rec.calls[0] == ((2,), (2,))
    rec = _Recorder(lambda x, c: np.sum((x - c) ** 2))
    res = optim_minimize(rec, np.zeros(2), (np.array([1.0, -1.0]),))
    np.testing.assert_allclose(res.x, [1.0, -1.0], atol=1e-6)
    assert rec.calls[0] == ((2,), (2,))


@pytest.mark.parametrize("call", [
    lambda f, x0: optim_minimize(f, x0, "BFGS"),
    lambda f, x0: optim_minimize(f, x0, "BFGS", (1.0,)),
    lambda f, x0: optim_minimize(f, x0, (1.0,), (1.0,)),
], ids=["method-third", "method-then-args", "method-not-a-string"])
def test_optim_minimize_refuses_the_old_argument_order(call):
    with pytest.raises(TypeError, match=r"minimize: args must be a tuple .*SciPy's, "
                                        r"minimize\(fun, x0, args=\(\), method="):
        call(lambda x, c=0.0: np.sum((x - c) ** 2), np.zeros(2))


# ---------------------------------------------------------------- optim update


@pytest.mark.parametrize("opt,state_type", [(SGD(0.1, momentum=0.9), SGDState),
                                            (Adam(0.1), AdamState)], ids=["SGD", "Adam"])
def test_update_names_a_misplaced_state(opt, state_type):
    name = type(opt).__name__
    p = {"w": np.ones(2)}
    g = {"w": np.full(2, 0.5)}
    state = opt.init(p)
    order = re.escape(f"the arguments are {name}.update(grads, state, params)")
    with pytest.raises(TypeError, match=rf"{name}\.update: state must be the "
                                        rf"{state_type.__name__} .* got dict; {order}"):
        opt.update(g, p, state)  # (grads, params, state)
    with pytest.raises(TypeError, match=rf"{name}\.update: grads is an optimiser state "
                                        rf"\({state_type.__name__}\); {order}"):
        opt.update(state, g, p)  # (state, grads, params)
    other = (Adam(0.1) if name == "SGD" else SGD(0.1)).init(p)
    with pytest.raises(TypeError, match=rf"got {type(other).__name__}; {order}"):
        opt.update(g, other, p)  # another optimiser's state
    new_p, new_state = opt.update(g, state, p)  # the right order still works
    assert isinstance(new_state, state_type) and new_state.step == 1
    assert np.all(new_p["w"] < 1.0)


# ---------------------------------------------------------------- Scene


def _scene_parts():
    return (rt.Camera(eye=(0.0, 0.0, -5.0)), rt.Sphere((0.0, 0.0, 0.0), 1.0),
            rt.PointLight((5.0, 5.0, -10.0), 2000.0))


@pytest.mark.parametrize("build,field,got", [
    (lambda c, s, l: rt.Scene(c, s, (l,)), "shapes", "a single Sphere"),
    (lambda c, s, l: rt.Scene(c, (s,), l), "lights", "a single PointLight"),
    (lambda c, s, l: rt.Scene(c, s, l), "shapes", "a single Sphere"),
    (lambda c, s, l: rt.Scene(c, l, (s,)), "shapes", "a single PointLight"),
    (lambda c, s, l: rt.Scene(c, (s,), 3.0), "lights", "float"),
], ids=["shape", "light", "both", "light-as-shapes", "number"])
def test_scene_names_the_field_given_a_single_item(build, field, got):
    camera, sphere, light = _scene_parts()
    with pytest.raises(TypeError, match=rf"Scene\.{field}: expected a tuple \(or list\) of "
                                        rf"{field}, got {got}; write Scene\(camera, "):
        build(camera, sphere, light)


def test_scene_accepts_tuples_and_lists():
    camera, sphere, light = _scene_parts()
    scene = rt.Scene(camera, [sphere], [light])
    assert scene.shapes == (sphere,) and scene.lights == (light,)
    assert rt.Scene(camera).shapes == ()


# ---------------------------------------------------------------- self-contained repository


def test_no_file_cites_a_document_outside_the_repository():
    patterns = ["DESIGN" + ".md", ".." + "/shared"]
    folders = ["diffsci", "raytrace", "quantum", "sde", "finance", "examples", "tests",
               "benchmarks", "tools"]
    offenders = []
    for folder in folders:
        for path in sorted((ROOT / folder).rglob("*")):
            if path.suffix not in (".py", ".md", ".txt", ".toml", ".cfg") or "__pycache__" in \
                    path.parts:
                continue
            text = path.read_text(encoding="utf-8", errors="replace")
            offenders += [f"{path.relative_to(ROOT)}: {p}" for p in patterns if p in text]
    for name in ("README.md", "CHANGELOG.md", "pyproject.toml", "Makefile"):
        path = ROOT / name
        if path.exists():
            text = path.read_text(encoding="utf-8")
            offenders += [f"{name}: {p}" for p in patterns if p in text]
    assert not offenders, "files cite a document outside the repository:\n" + "\n".join(offenders)
