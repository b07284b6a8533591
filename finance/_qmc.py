"""Randomised quasi-Monte Carlo for GBM European/Asian options (``mc_price(..., qmc=True)``).

Scrambled Sobol points (``scipy.stats.qmc.Sobol``, one dimension per monitoring date) are mapped
to standard normals by the inverse normal CDF (``scipy.special.ndtri``, on plain values: the random
numbers are constants for AD) and turned into Brownian paths by Brownian-bridge construction, so
the first (best-distributed) Sobol coordinate sets the terminal value W(T) and later coordinates
fill in midpoints recursively (Glasserman 2004, §3.1 for the bridge, §5.5 for its use with QMC).
The paths are then written in NumPy over diffsci, so ``ds.grad`` of the price is the pathwise
estimator for every input. The standard error comes from ``R`` independent scramblings: the
replicate means are i.i.d. unbiased estimates, and the reported s.e. is their sample standard
deviation over √R. Derivation: ``finance/DERIVATIONS.md`` §QMC.

References:
    Glasserman, *Monte Carlo Methods in Financial Engineering* (2004), §3.1 (Brownian bridge),
    §5.5 (QMC implementation issues: bridge ordering, randomised QMC error estimates).
    Owen, "Scrambling Sobol' and Niederreiter–Xing points", J. Complexity (1998).
"""

from __future__ import annotations

import numpy as np
from scipy.special import ndtri
from scipy.stats import qmc as _scipy_qmc

import diffsci as ds

__all__ = ["bridge_plan", "brownian_bridge", "qmc_normals", "qmc_replicate_samples"]


def bridge_plan(n_steps):
    """The Brownian-bridge construction order on the unit grid ``u_k = k/n``, ``k = 1..n``.

    Returns a list of ``(m, l, r, a, b, s)`` (grid indices, 0 = time 0): ``B(u_m) = a B(u_l) +
    b B(u_r) + s Z``. The first entry is ``(n, 0, n, 0, 0, 1)`` (terminal value); then each
    index interval ``(l, r)`` with a free interior point is split at ``m = (l + r) // 2``,
    breadth first, so coarse scales take the earlier normals. Any ``n ≥ 1`` (not only powers of
    two): uneven splits use the general conditional mean and variance.
    """
    n = int(n_steps)
    plan = [(n, 0, n, 0.0, 0.0, 1.0)]
    queue = [(0, n)]
    while queue:
        nxt = []
        for lo, hi in queue:
            if hi - lo < 2:
                continue
            m = (lo + hi) // 2
            tl, tm, tr = lo / n, m / n, hi / n
            plan.append((m, lo, hi, (tr - tm) / (tr - tl), (tm - tl) / (tr - tl),
                         np.sqrt((tm - tl) * (tr - tm) / (tr - tl))))
            nxt += [(lo, m), (m, hi)]
        queue = nxt
    assert len(plan) == n
    return plan


def brownian_bridge(z):
    """Standard Brownian motion on ``u_k = k/n`` from normals ``z`` of shape ``(N, n)``.

    Column ``j`` of ``z`` drives the ``j``-th point of :func:`bridge_plan`. Returns ``B`` of
    shape ``(N, n)``, ``B[:, k-1] = B(k/n)``; a linear map, so i.i.d. N(0, 1) input gives
    ``Cov(B(u_j), B(u_k)) = min(u_j, u_k)`` exactly.
    """
    z = np.asarray(z, dtype=np.float64)
    n = z.shape[1]
    b = np.zeros((z.shape[0], n + 1))                   # column 0 is B(0) = 0
    for j, (m, lo, hi, a, c, s) in enumerate(bridge_plan(n)):
        b[:, m] = a * b[:, lo] + c * b[:, hi] + s * z[:, j]
    return b[:, 1:]


def qmc_normals(n_points, n_steps, seed):
    """``(n_points, n_steps)`` normals from one Owen-scrambled Sobol sequence (plain values)."""
    sob = _scipy_qmc.Sobol(d=int(n_steps), scramble=True, seed=seed)
    u = sob.random(int(n_points))
    return ndtri(u)  # scrambled points lie in the open unit cube, so ndtri is finite


def _replicate_seeds(seed, n_rep):
    return [np.random.default_rng(s) for s in np.random.SeedSequence(int(seed)).spawn(n_rep)]


def qmc_paths(n_points, n_steps, seed, n_rep, antithetic):
    """The ``n_rep`` independent scramblings' unit Brownian paths (plain arrays)."""
    out = []
    for rng in _replicate_seeds(seed, n_rep):
        b = brownian_bridge(qmc_normals(n_points, n_steps, rng))
        out.append(np.concatenate([b, -b]) if antithetic else b)
    return out


def qmc_replicate_samples(spot, strike, expiry, rate, dividend, vol, bm, *, w, asian, antithetic):
    """Discounted payoffs on unit Brownian paths ``bm`` (antithetic pairs averaged).

    ``ln S(t_k) = ln S + (r − q − σ²/2) t_k + σ √T B(u_k)``, ``t_k = T u_k``: exact GBM, with
    the paths fixed and every input differentiable.
    """
    n = bm.shape[1]
    u = np.arange(1, n + 1) / n
    x = (rate - dividend - 0.5 * vol**2) * (expiry * u) + (vol * np.sqrt(expiry)) * bm
    if asian:
        under = spot * np.mean(np.exp(x), axis=1)
    else:
        under = spot * np.exp(x[:, -1])
    pay = np.exp(-rate * expiry) * np.maximum(w * (under - strike), 0.0)
    if antithetic:
        half = bm.shape[0] // 2
        pay = 0.5 * (pay[:half] + pay[half:])
    return pay


def check_qmc(who, cfg, n_paths, n_rep, device):
    """Validate the QMC options; return the Sobol points per replicate."""
    from ._mc import Product

    if not (isinstance(n_rep, int | np.integer) and n_rep >= 2):
        raise ValueError(f"{who}: qmc_replicates must be an int >= 2 (the standard error needs "
                         f"independent scramblings), got {n_rep!r}")
    if cfg.product not in (int(Product.EUROPEAN), int(Product.ASIAN)):
        raise ValueError(f"{who}: qmc=True supports Product.EUROPEAN and Product.ASIAN only")
    if device != "cpu":
        raise ValueError(f"{who}: qmc=True runs in NumPy on the CPU; got device={device!r}")
    per = n_paths // n_rep
    pts = per // 2 if cfg.antithetic else per
    if per * n_rep != n_paths or (cfg.antithetic and per % 2) or pts & (pts - 1):
        raise ValueError(
            f"{who}: with qmc=True, n_paths must be qmc_replicates × (a power of two)"
            f"{' × 2 (antithetic)' if cfg.antithetic else ''} so each scrambled Sobol set keeps "
            f"its balance properties; got n_paths={n_paths}, qmc_replicates={n_rep}")
    return pts


def qmc_price(args, cfg, n_paths, n_rep):
    """(price, stderr) over ``n_rep`` scramblings: mean of replicate means, s.e. of that mean."""
    from ._mc import Product

    pts = check_qmc("mc_price", cfg, n_paths, n_rep, cfg.device)
    kw = dict(w=cfg.w, asian=cfg.product == int(Product.ASIAN), antithetic=cfg.antithetic)
    means = [np.mean(qmc_replicate_samples(*args, bm, **kw))
             for bm in qmc_paths(pts, cfg.n_steps, cfg.seed, n_rep, cfg.antithetic)]
    price = sum(means[1:], means[0]) / n_rep
    return price, ds.extend.value_mask(_replicate_stderr, n_rep, *means)  # recomputed under jit


def _replicate_stderr(n_rep, *means):
    plain_means = np.array([float(m) for m in means])
    return float(plain_means.std(ddof=1) / np.sqrt(n_rep))


def qmc_greeks(args, cfg, n_paths, n_rep):
    """Per-replicate price and its gradient in the six inputs; ``(R, 7)`` plain array."""
    from ._mc import Product

    pts = check_qmc("mc_greeks", cfg, n_paths, n_rep, cfg.device)
    kw = dict(w=cfg.w, asian=cfg.product == int(Product.ASIAN), antithetic=cfg.antithetic)
    x = tuple(np.float64(ds.extend.getval(a)) for a in args)
    rows = []
    for bm in qmc_paths(pts, cfg.n_steps, cfg.seed, n_rep, cfg.antithetic):
        def f(*a, bm=bm):
            return np.mean(qmc_replicate_samples(*a, bm, **kw))
        val, grads = ds.value_and_grad(f, argnums=tuple(range(6)))(*x)
        rows.append([float(ds.extend.getval(val)), *(float(g) for g in grads)])
    return np.array(rows)
