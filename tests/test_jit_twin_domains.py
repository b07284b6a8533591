"""The domain packages under ``diffsci.jit``: one program per path, right at other inputs.

Each case is a public function of finance, sde, quantum or raytrace with its differentiable
arguments passed positionally.  Traced at a first input and at second inputs, the function
and the value and gradient of a scalar loss of it give the same program whenever the two
traces took the same guarded path (``_trace.twin_difference``): a value the package read with
``getval`` and computed on in plain NumPy would be a constant of the trace, kept from the
first call.  Then the compiled program (``check=False``: no twin trace, no numeric probe) is
compared with eager mode at the second input.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import diffsci as ds
import finance as fin
import quantum as qm
import raytrace as rt
import sde
from diffsci._jit import _compile, _probe_input, _trace
from diffsci._jit._trace import CannotCompile
from diffsci._tree import tree_leaves
from diffsci.extend import getval

from .raytrace import problems as RP


@pytest.fixture
def python_backend(monkeypatch, tmp_path):
    monkeypatch.setattr(_compile, "BACKEND", "python")
    monkeypatch.setenv("DIFFSCI_JIT_CACHE", str(tmp_path))


def a(*x):
    return np.array(x, dtype=np.float64)


CASES: dict = {}


#: cases whose guards differ at every other input (nothing to compare): numeric check only
STRUCTURAL = {
    "sdeint adaptive": "the accepted step times are guards (each depends on the solution)",
}


def case(name, *first, seconds=None):
    """Register ``f`` under ``name`` with its first input; second inputs are ``seconds`` or,
    if None, the first scaled entry by entry by 1 ± 3 %, 1 ± 1 % and 1 ± 1e-7 (``_probe_input``,
    not permuted: the last keeps guards such as quadrature panel or Newton step counts)."""
    def register(f):
        CASES[name] = (f, tuple(first), seconds)
        return f
    return register


# ---------------------------------------------------------------- finance: analytic pricers
K3 = a(90.0, 100.0, 115.0)


@case("bsm call", a(95.0, 100.0, 105.0), K3, 0.2, 0.01)
def _bsm(s, k, v, r):
    return fin.bsm_price(spot=s, strike=k, expiry=1.0, rate=r, vol=v)


@case("bsm put, dividend", 100.0, K3, a(0.15, 0.2, 0.3), 0.02)
def _bsm_put(s, k, v, q):
    return fin.bsm_price(spot=s, strike=k, expiry=0.5, rate=0.03, dividend=q, vol=v,
                         is_call=False)


@case("black76", 100.0, K3, 0.25, 0.02)
def _black76(f, k, v, r):
    return fin.black76_price(forward=f, strike=k, expiry=2.0, rate=r, vol=v, is_call=False)


@case("bachelier", 100.0, K3, 20.0)
def _bachelier(f, k, v):
    return fin.bachelier_price(forward=f, strike=k, expiry=1.0, rate=0.01, vol=v)


@case("barrier down-and-out call", 100.0, a(85.0, 100.0, 110.0), 90.0, 0.25)
def _barrier_do(s, k, h, v):
    return fin.barrier_price(spot=s, strike=k, barrier=h, expiry=1.0, rate=0.02, vol=v)


@case("barrier up-and-in put", 100.0, a(95.0, 105.0, 125.0), 120.0, 0.2)
def _barrier_ui(s, k, h, v):
    return fin.barrier_price(spot=s, strike=k, barrier=h, expiry=1.0, rate=0.02, dividend=0.01,
                             vol=v, is_call=False, is_down=False, knock_in=True)


@case("lookback floating", a(95.0, 100.0), 0.25, 0.03)
def _lookback_float(s, v, r):
    return fin.lookback_price(spot=s, expiry=1.0, rate=r, vol=v)


@case("lookback fixed, discrete", 100.0, a(95.0, 110.0), 0.3)
def _lookback_fixed(s, k, v):
    return fin.lookback_price(spot=s, strike=k, expiry=1.0, rate=0.02, vol=v, is_call=False,
                              monitoring_dt=1 / 52)


@case("digital", 100.0, K3, 0.2, 2.0)
def _digital(s, k, v, pay):
    return fin.digital_price(spot=s, strike=k, expiry=1.0, rate=0.01, vol=v, payout=pay)


@case("geometric asian", 100.0, K3, 0.3)
def _geo_asian(s, k, v):
    return fin.geometric_asian_price(spot=s, strike=k, expiry=1.0, rate=0.02, vol=v)


@case("geometric asian, 12 fixings", 100.0, K3, 0.3)
def _geo_asian_12(s, k, v):
    return fin.geometric_asian_price(spot=s, strike=k, expiry=1.0, rate=0.02, vol=v,
                                     is_call=False, n_fixings=12)


CORR = np.array([[1.0, 0.5, 0.2], [0.5, 1.0, 0.3], [0.2, 0.3, 1.0]])


@case("geometric basket", a(100.0, 95.0, 110.0), a(0.2, 0.25, 0.3), 100.0,
      seconds=[(a(103.0, 92.0, 108.0), a(0.21, 0.24, 0.33), 98.0)])
def _geo_basket(s, v, k):
    return fin.geometric_basket_price(spots=s, weights=np.full(3, 1 / 3), strike=k, expiry=1.0,
                                      rate=0.02, vols=v, correlation=CORR)


@case("merton jump", 100.0, K3, 0.2, 0.5, -0.1, 0.15)
def _merton(s, k, v, lam, m, dv):
    return fin.merton_jump_price(spot=s, strike=k, expiry=1.0, rate=0.02, vol=v,
                                 jump_intensity=lam, jump_mean=m, jump_vol=dv)


@case("heston", 100.0, K3, 1.5, 0.04, 0.5, -0.6, 0.05)
def _heston(s, k, kappa, theta, sigma, rho, v0):
    return fin.heston_price(spot=s, strike=k, expiry=1.0, rate=0.01,
                            params=fin.HestonParams(kappa=kappa, theta=theta, sigma=sigma,
                                                    rho=rho, v0=v0))


@case("implied vol", a(15.0, 10.0, 4.5), 100.0, K3, 0.01,
      seconds=[(a(15.3, 10.4, 4.4), 100.5, a(89.5, 100.5, 114.0), 0.012),
               (a(14.8, 9.8, 4.7), 99.8, a(90.2, 99.7, 115.5), 0.009)])
def _implied_vol(p, s, k, r):
    return fin.implied_vol(price=p, spot=s, strike=k, expiry=1.0, rate=r)


# ---------------------------------------------------------------- finance: rates
@case("bond price", a(0.02, 0.025, 0.03, 0.032), a(0.03, 0.04, 0.05))
def _bond(fwd, c):
    curve = fin.ForwardCurve(times=a(1.0, 2.0, 5.0, 10.0), forwards=fwd)
    return fin.bond_price(curve, maturities=a(2.0, 5.0, 10.0), coupons=c)


@case("bootstrap", a(0.02, 0.025, 0.03, 0.032))
def _bootstrap(y):
    return fin.bootstrap(maturities=a(1.0, 2.0, 5.0, 10.0), par_rates=y).forwards


# ---------------------------------------------------------------- finance: lattices, PDE
@case("tree american put", 100.0, K3, 0.25)
def _tree(s, k, v):
    return fin.tree_price(spot=s, strike=k, expiry=1.0, rate=0.03, vol=v, n_steps=40)


@case("tree greeks", 100.0, 105.0, 0.25)
def _tree_greeks(s, k, v):
    return fin.tree_greeks(spot=s, strike=k, expiry=1.0, rate=0.03, vol=v, n_steps=40)


@case("fd american put", 100.0, a(95.0, 105.0), 0.25)
def _fd(s, k, v):
    return fin.fd_price(spot=s, strike=k, expiry=1.0, rate=0.03, vol=v, n_space=41, n_time=40)


# ---------------------------------------------------------------- finance: Monte Carlo
def _price(r):
    return r  # the whole MCResult: price, stderr, n_samples (bias, variance ratio)


@case("mc european", 100.0, 105.0, 0.2)
def _mc(s, k, v):
    return _price(fin.mc_price(spot=s, strike=k, expiry=1.0, rate=0.01, vol=v, n_paths=2000,
                               seed=3))


@case("mc asian", 100.0, 105.0, 0.2)
def _mc_asian(s, k, v):
    return _price(fin.mc_price(spot=s, strike=k, expiry=1.0, rate=0.01, vol=v, n_paths=1000,
                               n_steps=8, product="asian", seed=3))


@case("mc digital, smoothed", 100.0, 105.0, 0.2)
def _mc_digital(s, k, v):
    return _price(fin.mc_price(spot=s, strike=k, expiry=1.0, rate=0.01, vol=v, n_paths=1000,
                               product=fin.Product.DIGITAL, smoothing=0.5, seed=3))


@case("mc qmc", 100.0, 105.0, 0.2)
def _mc_qmc(s, k, v):
    return _price(fin.mc_price(spot=s, strike=k, expiry=1.0, rate=0.01, vol=v, n_paths=256,
                               qmc=True, qmc_replicates=4, seed=3))


@case("mc control variate", 100.0, 105.0, 0.2)
def _mc_cv(s, k, v):
    return _price(fin.mc_price(spot=s, strike=k, expiry=1.0, rate=0.01, vol=v, n_paths=1000,
                               n_steps=4, product="asian", control_variate=True, seed=3))


@case("mc barrier", 100.0, 105.0, 85.0, 0.25)
def _mc_barrier(s, k, h, v):
    return _price(fin.mc_barrier_price(spot=s, strike=k, barrier=h, expiry=1.0, rate=0.01,
                                       vol=v, n_paths=1000, n_steps=4, seed=3))


@case("mc lookback", 100.0, 0.25)
def _mc_lookback(s, v):
    return _price(fin.mc_lookback_price(spot=s, expiry=1.0, rate=0.01, vol=v, n_paths=1000,
                                        n_steps=8, seed=3))


@case("mc merton", 100.0, 105.0, 0.2, 0.5, -0.1, 0.15)
def _mc_merton(s, k, v, lam, m, dv):
    return _price(fin.merton_mc_price(spot=s, strike=k, expiry=1.0, rate=0.01, vol=v,
                                      jump_intensity=lam, jump_mean=m, jump_vol=dv,
                                      n_paths=1000, n_steps=2, seed=3))


@case("mc heston qe", 100.0, 105.0, 1.5, 0.04, 0.5, -0.6, 0.05)
def _mc_heston(s, k, kappa, theta, sigma, rho, v0):
    p = fin.HestonParams(kappa=kappa, theta=theta, sigma=sigma, rho=rho, v0=v0)
    return _price(fin.heston_mc_price(spot=s, strike=k, expiry=1.0, rate=0.01, params=p,
                                      n_paths=500, n_steps=8, seed=3))


@case("mc heston full truncation", 100.0, 105.0, 1.5, 0.04, 0.5, -0.6, 0.05)
def _mc_heston_ft(s, k, kappa, theta, sigma, rho, v0):
    p = fin.HestonParams(kappa=kappa, theta=theta, sigma=sigma, rho=rho, v0=v0)
    return _price(fin.heston_mc_price(spot=s, strike=k, expiry=1.0, rate=0.01, params=p,
                                      scheme="full_truncation", n_paths=500, n_steps=8,
                                      seed=3))


@case("mc basket", a(100.0, 95.0, 110.0), a(0.2, 0.25, 0.3), 100.0,
      seconds=[(a(103.0, 92.0, 108.0), a(0.21, 0.24, 0.33), 98.0)])
def _mc_basket(s, v, k):
    return _price(fin.basket_mc_price(spots=s, weights=np.full(3, 1 / 3), strike=k,
                                      expiry=1.0, rate=0.02, vols=v, correlation=CORR,
                                      n_paths=1000, seed=3))


@case("lsm american put", 100.0, 105.0, 0.25)
def _lsm(s, k, v):
    return _price(fin.lsm_price(spot=s, strike=k, expiry=1.0, rate=0.03, vol=v, n_paths=1000,
                                n_steps=8, seed=3))


@case("local vol mc", 100.0, 105.0, 0.2, -0.3)
def _local_vol(s, k, v, skew):
    lv = fin.ParametricLocalVol(atm_vol=v, long_vol=0.25, decay=1.0, skew=skew, smile=0.5,
                                ref_spot=100.0, floor=0.05)
    return _price(fin.local_vol_mc_price(spot=s, strike=k, expiry=1.0, rate=0.01, local_vol=lv,
                                         n_paths=1000, n_steps=8, seed=3))


# ---------------------------------------------------------------- sde
TS = np.linspace(0.0, 1.0, 6)
Y0 = a(0.5, 1.0, 1.5)[:, None]


def _ou():
    return sde.SDE(lambda t, y, p: p[0] * (p[1] - y), lambda t, y, p: p[2] + 0 * y)


def _gbm(calculus="ito"):
    return sde.SDE(lambda t, y, p: p[0] * y, lambda t, y, p: p[1] * y, noise="diagonal",
                   calculus=calculus)


def _additive():
    def diffusion(t, y, p):
        return np.broadcast_to(p[2], (y.shape[0], 2, 2)) + 0.0 * p[2]

    return sde.SDE(lambda t, y, p: p[0] * (p[1] - y), diffusion, noise="additive")


for _method in ("euler", "milstein", "sri", "heun", "euler_heun", "reversible_heun"):
    _calc = "ito" if _method in ("euler", "milstein", "sri") else "stratonovich"
    case(f"sdeint gbm {_method}", Y0, a(0.5, 0.4))(
        lambda y0, p, _m=_method, _c=_calc: sde.sdeint(_gbm(_c), y0, TS, p, method=_m, dt=0.05,
                                                       seed=2))


@case("sdeint additive sra1", np.ones((3, 2)), a(1.5, 0.5), np.array([[0.3, 0.1], [0.0, 0.2]]))
def _sra1(y0, th, s):
    return sde.sdeint(_additive(), y0, TS, (th[0], th[1], s), method="sra1", dt=0.05, seed=2)


@case("sdeint additive euler", np.ones((3, 2)), a(1.5, 0.5), np.array([[0.3, 0.1], [0.0, 0.2]]))
def _sde_additive(y0, th, s):
    return sde.sdeint(_additive(), y0, TS, (th[0], th[1], s), dt=0.05, seed=2)


@case("sdeint checkpoint adjoint", Y0, a(0.5, 0.4))
def _sde_checkpoint(y0, p):
    return sde.sdeint(_gbm(), y0, TS, p, dt=0.05, seed=2, adjoint="checkpoint", snapshots=3)


@case("sdeint adaptive", Y0, a(0.5, 0.4))
def _sde_adaptive(y0, p):
    return sde.sdeint(_gbm("stratonovich"), y0, TS, p, method="heun", dt=0.05, seed=2,
                      adaptive=True,
                      rtol=1e-2, atol=1e-3)


@case("sdeint reversible adjoint", Y0, a(0.5, 0.4))
def _sde_reversible(y0, p):
    return sde.sdeint(_gbm("stratonovich"), y0, TS, p, method="reversible_heun", dt=0.05, seed=2,
                      adjoint="reversible")


@case("sdeint stochastic adjoint", Y0, a(0.5, 0.4))
def _sde_stochastic(y0, p):
    return sde.sdeint(_gbm(), y0, TS, p, dt=0.05, seed=2, adjoint="stochastic")


_OBS = sde.sdeint(_ou(), np.zeros((20, 1)), np.linspace(0.0, 2.0, 21), a(2.0, 1.0, 0.5),
                  dt=0.01, seed=0)


@case("pseudo_loglik", a(2.0, 1.0, 0.5), np.linspace(0.0, 2.0, 21))
def _pseudo_loglik(p, ts):
    return sde.pseudo_loglik(_ou(), ts, _OBS, p)


@case("moment_loss", _OBS[:, :10] * 1.1 + 0.05)
def _moment_loss(ys):
    return sde.moment_loss(ys, _OBS, weights=(1.0, 0.5))


@case("ensemble_stats", _OBS + 0.01 * np.arange(20.0)[None, :, None])
def _ensemble_stats(ys):
    st = sde.ensemble_stats(ys)
    return st.mean, st.var, st.quantiles


_DW = np.random.default_rng(0).normal(0.0, 0.1, (4, 10))


@case("ou paths", np.zeros(4), 2.0, 1.0, 0.3)
def _ou_paths(y0, th, mu, s):
    return sde.ou_paths(y0, th, mu, s, 0.01, _DW)


@case("gbm paths", np.ones(4), 0.05, 0.2)
def _gbm_paths(y0, mu, s):
    t = np.linspace(0.0, 1.0, 11)
    return sde.gbm_paths(y0, mu, s, t, np.concatenate([np.zeros((4, 1)), np.cumsum(_DW, 1)], 1))


@case("cir paths", np.full(4, 0.04), 2.0, 0.04, 0.3)
def _cir_paths(y0, k, th, s):
    return sde.cir_paths(y0, k, th, s, 0.01, _DW)


@case("heston paths", np.ones(4), np.full(4, 0.04), 2.0, 0.04, 0.3, -0.7)
def _heston_paths(s0, v0, k, th, xi, rho):
    return sde.heston_paths(s0, v0, 0.0, k, th, xi, rho, 0.01, _DW, _DW[::-1])


@case("langevin paths", np.ones(4), np.zeros(4), 4.0, -4.0, 0.5, 0.7)
def _langevin_paths(x0, v0, aa, b, g, s):
    return sde.langevin_paths(x0, v0, aa, b, g, s, 0.01, _DW)


# ---------------------------------------------------------------- quantum
_HEA = qm.hardware_efficient(3, 2)
_H = 0.7 * qm.Z(0) + qm.pauli("XX", (1, 2)) - 0.3 * qm.Y(1)
_SE = qm.strongly_entangling(3, 1)
_QAOA = qm.qaoa(qm.maxcut([(0, 1), (1, 2), (0, 2)]), 2)
_NOISY = qm.Circuit(2).ry(0).cnot(0, 1).depolarizing(1, 0.1).rx(1).amplitude_damping(0, 0.2)


def _theta(n, seed=0):
    return np.random.default_rng(seed).uniform(-1.5, 1.5, n)


@case("quantum expval", _theta(_HEA.n_params))
def _q_expval(th):
    return qm.expval(_HEA, th, _H)


@case("quantum expval parameter-shift", _theta(_SE.n_params))
def _q_expval_ps(th):
    return qm.expval(_SE, th, [qm.Z(0), _H], method="parameter-shift")


@case("quantum expval qaoa", _theta(_QAOA.n_params))
def _q_qaoa(th):
    return qm.expval(_QAOA, th, qm.maxcut([(0, 1), (1, 2), (0, 2)]))


@case("quantum probs", _theta(_HEA.n_params))
def _q_probs(th):
    return qm.probs(_HEA, th, wires=(0, 2))


@case("quantum state", _theta(_SE.n_params))
def _q_state(th):
    return qm.state(_SE, th)


@case("quantum var", _theta(_HEA.n_params))
def _q_var(th):
    return qm.var(_HEA, th, _H)


@case("quantum density matrix", _theta(_NOISY.n_params))
def _q_density(th):
    return qm.density_matrix(_NOISY, th)


@case("quantum expval initial state", _theta(_SE.n_params),
      np.array([0.6, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.8]))
def _q_initial(th, psi0):
    return qm.expval(_SE, th, _H, initial_state=psi0 / np.sqrt(np.sum(psi0 ** 2)))


# ---------------------------------------------------------------- raytrace
_MAT = rt.Material(diffuse=(0.0, 1.0, 0.0), specular=(1.0, 1.0, 1.0), exponent=50.0,
                   reflection=0.5, ambient=(0.0, 0.05, 0.0))


def _scene(light, tri0, centre, size=8):
    return rt.Scene(
        rt.Camera(eye=(0.0, 0.0, -5.0), look_at=(0.0, 0.0, 0.0), fov=45.0, width=size,
                  height=size),
        (rt.Triangle(tri0, (1.0, 1.0, 0.0), (-0.5, -1.0, 0.0), material=_MAT),
         rt.Sphere(centre, 0.6, rt.Material(diffuse=(0.8, 0.3, 0.2), reflection=0.3)),
         rt.Plane((0.0, -1.2, 0.0), (0.0, 1.0, 0.0), rt.Material(diffuse=(0.5, 0.5, 0.5)))),
        (rt.PointLight(light, 20000.0), rt.DirectionalLight((-0.3, -1.0, 0.5), 0.5)),
    )


@case("raytrace render", a(5.0, 5.0, -10.0), a(-1.7, 1.0, 0.0), a(0.8, -0.3, 0.5))
def _render(light, tri0, centre):
    return rt.render(_scene(light, tri0, centre), depth=2)


@case("raytrace render, edges", a(5.0, 5.0, -10.0), a(-1.7, 1.0, 0.0), a(0.8, -0.3, 0.5))
def _render_edges(light, tri0, centre):
    return rt.render(_scene(light, tri0, centre), depth=1, edges=True, seed=1)


@case("raytrace render, mixed scene", a(-0.8, 0.1, 0.5), 300.0, a(0.05, 0.1, 0.2))
def _render_mixed(c0, li, bg):
    return rt.render(RP.mixed_scene(dict(RP.mixed_params(), c0=c0, li=li, bg=bg), size=6))


@case("raytrace render, textures, 4 samples", a(0.2, 2.0, -5.0), a(1.5, 4.0, -3.0),
      RP.textured_params()["floor_tex"])
def _render_textured(eye, lp, tex):
    p = dict(RP.textured_params(), eye=eye, lp=lp, floor_tex=tex)
    return rt.render(RP.textured_scene(p, size=6), samples=4)


_TARGET = np.random.default_rng(5).uniform(0.0, 1.0, (4, 4, 3))


@case("raytrace mse", np.random.default_rng(6).uniform(0.0, 1.0, (4, 4, 3)),
      np.random.default_rng(7).uniform(0.5, 1.0, (4, 4, 1)))
def _mse(img, w):
    return rt.mse(img, _TARGET, w)


# ---------------------------------------------------------------- the sweep
def _float_leaves(out):
    return [x for x in tree_leaves(out) if np.asarray(getval(x)).dtype.kind in "fc"]


def _loss_of(f, first):
    """A scalar loss of f's output: every float leaf weighted by fixed numbers."""
    rng = np.random.default_rng(11)
    ws = [rng.uniform(0.5, 1.5, np.shape(x)) for x in _float_leaves(f(*first))]

    def loss(*args):
        total = 0.0
        for x, w in zip(_float_leaves(f(*args)), ws):
            total = total + np.sum(np.real(x) * w) + np.sum(np.imag(x) * w)
        return total
    return loss


def _seconds(first, seconds):
    if seconds is not None:
        return list(seconds)
    rng = np.random.default_rng(1)
    out = []
    for lo, hi in ((0.97, 1.03), (0.99, 1.01), (1 - 1e-7, 1 + 1e-7)):
        probe = _probe_input(list(first), rng, (lo, hi, False), permute=False, integers=False)
        out.append(tuple(probe))
    return out


def _kinds(name):
    f, first, _ = CASES[name]
    return ((f, "f"), (ds.value_and_grad(_loss_of(f, first), argnums=tuple(range(len(first)))),
                       "vg"))


def _close(got, want, what):
    got, want = tree_leaves(got), tree_leaves(want)
    assert len(got) == len(want), what
    for x, y in zip(got, want):
        np.testing.assert_allclose(np.asarray(x), np.asarray(y), rtol=1e-10, atol=1e-12,
                                   err_msg=what)


@pytest.mark.parametrize("name", [n for n in CASES if n not in STRUCTURAL])
def test_one_program_on_a_path(name, python_backend):
    """Traced at a first and at second inputs, the programs are the same on one path (the
    function and its value and gradient), and the function was compared on one path at least
    once."""
    f, first, seconds = CASES[name]
    compared = {"f": 0, "vg": 0}
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        for g, kind in _kinds(name):
            try:
                prog = _trace.program_of(g, first)
            except (NotImplementedError, CannotCompile):
                # a first-order kernel or an in-place buffer: jit runs the gradient eagerly
                assert kind == "vg", name
                continue
            for second in _seconds(first, seconds):
                other = _trace.program_of(g, second)
                what = _trace.twin_difference(prog, other)
                assert what is None, f"{name} {kind}: {what}"
                compared[kind] += _trace.same_path(prog, other)
    assert compared["f"] >= 1, f"{name}: never on the first input's path"


@pytest.mark.parametrize("name", list(CASES))
def test_compiled_equals_eager_at_a_second_input(name, python_backend):
    """``ds.jit(g, check=False)`` traced at the first input (no twin trace, no probe), called
    at a second one: as eager mode, for g and for the value and gradient of a loss of it."""
    f, first, seconds = CASES[name]
    second = _seconds(first, seconds)[0]
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        for g, kind in _kinds(name):
            jg = ds.jit(g, check=False)
            jg(*first)
            _close(jg(*second), g(*second), f"{name} {kind}")
