"""The packages' ensembles on a cluster: thin functions over :func:`value_and_grad`/``map_sum``.

Each takes ``client=`` as :func:`diffsci.distributed.value_and_grad` does (None: the default
client, else an embedded LocalCluster; a Client; a scheduler address; ``"serial"``) and imports
its package only when called (``finance``, ``sde``, ``quantum``, ``raytrace``).
"""

from __future__ import annotations

import numbers
import weakref

import numpy as np

from .._core import getval, is_tracer
from .._custom import custom_vjp
from .._tree import tree_flatten, tree_map
from ._core import (
    SERIAL,
    _import_distributed,
    cluster_client,
    map_shards,
    map_sum,
    shard_seeds,
    value_and_grad,
)

__all__ = ["expval_sweep", "fit", "mc_price_greeks", "multiview_value_and_grad",
           "sde_ensemble_value_and_grad", "sharded_loss"]

#: The quantities of :func:`mc_price_greeks`, in ``finance.mc_greeks``' order.
MC_NAMES = ("price", "delta", "dual_delta", "theta", "rho", "dividend_rho", "vega")


def _check_int(who, name, value, low):
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{who}: {name} must be an int, got {type(value).__name__} {value!r}")
    if value < low:
        raise ValueError(f"{who}: {name} must be >= {low}, got {value}")
    return int(value)


def _split(who, n_paths, n_shards):
    n_paths = _check_int(who, "n_paths", n_paths, 2)
    n_shards = _check_int(who, "n_shards", n_shards, 1)
    if n_paths % n_shards:
        raise ValueError(f"{who}: n_paths ({n_paths}) must be a multiple of n_shards "
                         f"({n_shards}) so that every shard simulates as many paths")
    return n_paths // n_shards, n_shards


# ---------------------------------------------------------------------------------------------
# finance: Monte Carlo price and Greeks with pooled standard errors


def _mc_shard(kw, shard):
    import finance

    seed, n = shard
    g = finance.mc_greeks(**kw, n_paths=n, seed=seed)
    est = np.array([g[k][0] for k in MC_NAMES])
    se = np.array([g[k][1] for k in MC_NAMES])
    m = g["price"].n_samples
    # Σx and Σx² of the shard's samples, from their mean and s.e. (s.e.² = s²/m with the
    # ddof=1 variance s²): Σx² = (m − 1)·m·s.e.² + m·x̄².
    return {"n": m, "sum": m * est, "sumsq": (m - 1) * m * se**2 + m * est**2}


def mc_price_greeks(*, spot, strike, expiry, rate=0.0, dividend=0.0, vol, is_call=True,
                    product="european", n_paths=1_000_000, n_shards=8, n_steps=1, seed=0,
                    antithetic=None, smoothing=None, client=None, progress=None):
    """``finance.mc_greeks`` over ``n_shards`` tasks: price and six Greeks with pooled s.e.

    Shard ``k`` runs ``finance.mc_greeks`` (one fused path+adjoint sweep) on
    ``n_paths/n_shards`` paths with seed ``shard_seeds(seed, n_shards)[k]``, and returns the
    sample count and, per quantity, the sum and the sum of squares of its per-sample values
    (payoffs and pathwise adjoints). These are summed by the tree on the cluster; then for
    ``N = Σ n_k``: ``mean = Σx/N``, ``s² = (Σx² − N·mean²)/(N − 1)``, ``s.e. = s/√N`` — the
    standard error of one ``N``-sample estimator over all the shards' samples (not an average
    of the shards' errors). Bit-identical for the same ``(n_paths, n_shards, seed)`` on any
    number of workers.

    Args:
        spot, strike, expiry, rate, dividend, vol, is_call, product, n_steps, antithetic,
            smoothing: as in ``finance.mc_greeks`` (scalars).
        n_paths: total paths, a multiple of ``n_shards`` (each shard's share even with
            antithetics).
        n_shards: tasks.
        seed: the root seed of :func:`shard_seeds`.
        client, progress: as in :func:`value_and_grad`.

    Returns:
        ``{name: finance.MCGreek}`` for ``price, delta, dual_delta, theta, rho, dividend_rho,
        vega`` (``(estimate, stderr)`` pairs with ``n_samples`` = N, ``ci`` ...).

    Example:
        >>> g = mc_price_greeks(spot=100.0, strike=100.0, expiry=1.0, rate=0.05, vol=0.2,
        ...                     n_paths=40_000, n_shards=4, client="serial")
        >>> abs(g["delta"][0] - 0.636831) < 4 * g["delta"][1]
        True
    """
    import finance

    per, n_shards = _split("mc_price_greeks", n_paths, n_shards)
    kw = dict(spot=spot, strike=strike, expiry=expiry, rate=rate, dividend=dividend, vol=vol,
              is_call=is_call, product=product, n_steps=n_steps, antithetic=antithetic,
              smoothing=smoothing)
    # validate the arguments here, with the caller's names, before any task is sent (4 paths)
    finance.mc_price(**kw, n_paths=4, seed=0)
    if antithetic in (None, True) and per % 2:
        raise ValueError(f"mc_price_greeks: each shard's paths (n_paths/n_shards = {per}) must "
                         f"be even with antithetic pairs")
    shards = [(s, per) for s in shard_seeds(_check_int("mc_price_greeks", "seed", seed, 0),
                                            n_shards)]
    tot = map_sum(_mc_shard, kw, shards, client=client, progress=progress,
                  name="mc_price_greeks")
    n = int(tot["n"])
    mean = tot["sum"] / n
    var = np.maximum(tot["sumsq"] - n * mean**2, 0.0) / (n - 1)
    se = np.sqrt(var / n)
    return {k: finance.MCGreek(float(m), float(e), n_samples=n)
            for k, m, e in zip(MC_NAMES, mean, se)}


# ---------------------------------------------------------------------------------------------
# sde: ensemble losses


def sde_ensemble_value_and_grad(loss, model, y0, ts, params, *, n_paths, n_shards=8, seed=0,
                                client=None, progress=None, **sdeint_kwargs):
    """Value and gradient in ``params`` of the ensemble mean of a per-path loss of an SDE.

    The ensemble of ``n_paths`` paths from ``y0`` is split into ``n_shards`` batches; batch
    ``k`` is ``sde.sdeint(model, y0 repeated, ts, params, seed=shard_seeds(seed, n_shards)[k],
    **sdeint_kwargs)`` and contributes ``Σ_paths loss(ys)`` with weight ``1/n_paths``, so the
    value is ``mean_paths loss`` over the whole ensemble and the gradient its exact gradient
    (through whichever ``adjoint=`` is passed).

    Args:
        loss: ``loss(ys) -> (batch,)`` per-path losses, ``ys`` of shape ``(len(ts), batch, d)``
            (NumPy code, differentiable by diffsci).
        model: an ``sde.SDE``.
        y0: the initial state ``(d,)`` of every path.
        ts: the save times.
        params: the pytree differentiated (passed to drift and diffusion).
        n_paths: paths in all, a multiple of ``n_shards``.
        n_shards, seed, client, progress: as in :func:`mc_price_greeks`.
        **sdeint_kwargs: ``dt``, ``method``, ``adjoint`` ... of ``sde.sdeint``.

    Returns:
        ``(value, grad)``, ``grad`` shaped like ``params``.
    """
    per, n_shards = _split("sde_ensemble_value_and_grad", n_paths, n_shards)
    if not callable(loss):
        raise TypeError(f"sde_ensemble_value_and_grad: loss must be callable, got "
                        f"{type(loss).__name__}")
    y0 = np.asarray(y0, dtype=np.float64)
    if y0.ndim != 1:
        raise ValueError(f"sde_ensemble_value_and_grad: y0 must be one state of shape (d,), got "
                         f"shape {y0.shape}")
    ts = np.asarray(ts, dtype=np.float64)
    seeds = shard_seeds(_check_int("sde_ensemble_value_and_grad", "seed", seed, 0), n_shards)

    def shard_loss(p, shard):
        import sde as _sde

        s, n = shard
        ys = _sde.sdeint(model, np.repeat(y0[None, :], n, axis=0), ts, p, seed=s,
                         **sdeint_kwargs)
        per_path = loss(ys)
        if np.shape(getval(per_path)) != (n,):
            raise ValueError(f"loss must return one value per path, shape ({n},), got shape "
                             f"{np.shape(getval(per_path))}")
        return np.sum(per_path)

    return value_and_grad(shard_loss, params, [(s, per) for s in seeds], client=client,
                          weights=[1.0 / (per * n_shards)] * n_shards, progress=progress)


# ---------------------------------------------------------------------------------------------
# quantum: parameter sweeps, exact or with shots


def _quantum_rows(payload, rows):
    import diffsci as ds
    import quantum

    circuit, observable, shots, thetas, seeds = payload
    lo, hi = rows
    if shots is None:
        def total(t):
            e = quantum.expval(circuit, t, observable)
            return np.sum(e), e

        (_, per_row), g = ds.value_and_grad(total, has_aux=True)(thetas[lo:hi])
        return {"value": np.asarray(per_row, np.float64), "grad": np.asarray(g, np.float64),
                "stderr": np.zeros(hi - lo), "grad_stderr": np.zeros(np.shape(g))}
    out = [quantum.expval_shots(circuit, thetas[b], observable, shots, grad=True,
                                seed=int(seeds[b])) for b in range(lo, hi)]
    return {"value": np.array([e.value for e in out]),
            "stderr": np.array([e.stderr for e in out]),
            "grad": np.array([e.grad for e in out]),
            "grad_stderr": np.array([e.grad_stderr for e in out])}


def expval_sweep(circuit, thetas, observable, *, shots=None, n_shards=8, seed=0, client=None,
                 progress=None):
    """``⟨H⟩(θ_b)`` and ``∇_θ⟨H⟩(θ_b)`` for a batch ``θ[B, P]`` of parameter sets, across tasks.

    The rows are split into ``n_shards`` contiguous blocks. Exact (``shots=None``): each block
    is one batched ``quantum.expval`` with its adjoint gradient. With ``shots``: each row is
    ``quantum.expval_shots(..., grad=True)`` (parameter shift on shots) with the row's own seed
    ``shard_seeds(seed, B)[b]``, so a row's estimate does not depend on ``n_shards``. A map:
    the per-row results come back in row order.

    Args:
        circuit: a ``quantum.Circuit``.
        thetas: ``(B, P)`` parameters.
        observable: a ``quantum.Hamiltonian``.
        shots: None (exact) or shots per term and per shifted circuit (see
            ``quantum.expval_shots``).
        n_shards: tasks (at most B are used).
        seed, client, progress: as in :func:`mc_price_greeks`.

    Returns:
        A dict of arrays: ``value`` (B,), ``stderr`` (B,), ``grad`` (B, P), ``grad_stderr``
        (B, P) (standard errors 0 when exact).
    """
    thetas = np.asarray(thetas, dtype=np.float64)
    if thetas.ndim != 2 or thetas.shape[1] != circuit.n_params:
        raise ValueError(f"expval_sweep: thetas must have shape (B, {circuit.n_params}), got "
                         f"shape {thetas.shape}")
    n_shards = min(_check_int("expval_sweep", "n_shards", n_shards, 1), len(thetas))
    seeds = shard_seeds(_check_int("expval_sweep", "seed", seed, 0), len(thetas))
    edges = np.linspace(0, len(thetas), n_shards + 1).round().astype(int)
    blocks = [(int(a), int(b)) for a, b in zip(edges[:-1], edges[1:]) if b > a]
    return map_shards(_quantum_rows, (circuit, observable, shots, thetas, seeds), blocks,
                      client=client, progress=progress, name="expval_sweep",
                      combine=_concat_rows)


def _concat_rows(parts):
    """The blocks' dicts of per-row arrays joined in row order (the last task of the sweep)."""
    return {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}


# ---------------------------------------------------------------------------------------------
# raytrace: a loss summed over views


def multiview_value_and_grad(view_loss, params, views, *, client=None, weights=None,
                             progress=None):
    """Value and gradient of ``Σ_v w_v · view_loss(params, view)`` over views, a task per view.

    For inverse rendering from many cameras: ``view_loss`` builds the scene from ``params``,
    renders it with the view's camera (``raytrace.render``) and compares it with the view's
    target image (``raytrace.mse``); each view is one task. ``params`` may be any pytree,
    ``raytrace`` dataclasses included (the gradient comes back with its structure).

    Args:
        view_loss: ``view_loss(params, view) -> scalar``.
        params: the pytree differentiated (e.g. a ``raytrace.PointLight`` or a dict).
        views: a sequence, one per camera (e.g. ``(camera, target_image)`` pairs).
        client, weights, progress: as in :func:`value_and_grad`.

    Returns:
        ``(value, grad)``.
    """
    return value_and_grad(view_loss, params, views, client=client, weights=weights,
                          progress=progress)


# ---------------------------------------------------------------------------------------------
# fit / minimize: a loss summed over data shards


class sharded_loss:  # noqa: N801 - used like a function: ``loss = sharded_loss(...)``
    """``loss(params) = Σ_s w_s · f(params, shards[s])`` as one differentiable function.

    Calling it plain evaluates the sum on the cluster; under ``diffsci.value_and_grad`` (so in
    ``diffsci.fit`` and ``diffsci.optim.minimize``) one distributed :func:`value_and_grad`
    call gives both the value and the gradient (a ``custom_vjp``; first order only — a second
    derivative raises instead of being silently zero). The shards are scattered to the cluster
    once, at the first call, and reused by every later call; an embedded LocalCluster (no
    client given and no default client) lives until :meth:`close` (or the end of a ``with``
    block) instead of being restarted at every step.

    Args:
        f: ``f(params, shard) -> real scalar``.
        shards: a sequence of data shards.
        client, weights, progress: as in :func:`value_and_grad`.

    Example:
        >>> import numpy as np, diffsci as ds
        >>> xs = [np.array([1.0, 2.0]), np.array([3.0])]
        >>> loss = sharded_loss(lambda w, x: np.sum((w * x - 2.0 * x) ** 2), xs,
        ...                     client="serial")
        >>> res = ds.optim.minimize(loss, 0.0)
        >>> round(float(res.x), 6)
        2.0
    """

    def __init__(self, f, shards, *, client=None, weights=None, progress=None):
        if not callable(f):
            raise TypeError(f"sharded_loss: f must be callable, got {type(f).__name__}")
        self.f = f
        self.shards = list(shards)
        if not self.shards:
            raise ValueError("sharded_loss: shards is empty; pass at least one shard")
        self.weights = weights
        self.progress = progress
        self._client_arg = client
        self._ctx = None
        self._client = None
        self._remote = None
        self._fn = custom_vjp(self._value)
        self._fn.defvjp(self._fwd, self._bwd)
        self._holder = [None]  # the embedded cluster's context, closed at exit if not before
        self._finalizer = weakref.finalize(self, _close_ctx, self._holder)

    def _resolve(self):
        """(client or SERIAL, shards to send): the cluster and its scattered shards, once."""
        if self._remote is not None:
            return self._client, self._remote
        arg = self._client_arg
        if isinstance(arg, str) and arg == SERIAL:
            self._client, self._remote = SERIAL, self.shards
            return self._client, self._remote
        if arg is None:
            distributed = _import_distributed()
            try:
                self._client = distributed.default_client()
            except ValueError:
                holder = self._holder
                self._ctx = cluster_client(None, len(self.shards))
                holder[0] = self._ctx
                self._client = self._ctx.__enter__()
        elif isinstance(arg, str):
            holder = self._holder
            self._ctx = cluster_client(arg)
            holder[0] = self._ctx
            self._client = self._ctx.__enter__()
        else:
            self._client = arg
        self._remote = self._client.scatter(self.shards, broadcast=True, hash=False)
        return self._client, self._remote

    def _value(self, params):
        client, shards = self._resolve()
        return value_and_grad(self.f, params, shards, client=client, weights=self.weights,
                              progress=self.progress)[0]

    def _fwd(self, params):
        if any(is_tracer(x) for x in tree_flatten(params)[0]):
            raise NotImplementedError(
                "sharded_loss: the distributed gradient is first order only; a second "
                "derivative (hessian, grad of grad) of a sharded loss is not supported")
        client, shards = self._resolve()
        value, g = value_and_grad(self.f, params, shards, client=client, weights=self.weights,
                                  progress=self.progress)
        return value, g

    @staticmethod
    def _bwd(g, ct):
        return (tree_map(lambda x: np.asarray(ct * x, dtype=np.result_type(x)), g),)

    def __call__(self, params):
        return self._fn(params)

    def close(self):
        """Release the scattered shards and close an embedded cluster (if one was started)."""
        if self._remote is not None and self._client is not SERIAL:
            for fut in self._remote:
                fut.release()
        self._remote = None
        self._client = None
        ctx, self._ctx = self._ctx, None
        self._holder[0] = None
        if ctx is not None:
            ctx.__exit__(None, None, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def _close_ctx(holder):
    ctx = holder[0]
    if ctx is not None:
        holder[0] = None
        ctx.__exit__(None, None, None)


def fit(f, params, shards, *, client=None, weights=None, **fit_kwargs):
    """``diffsci.fit`` of the loss ``Σ_s w_s · f(params, shards[s])`` on a cluster.

    The shards are scattered once and an embedded cluster is kept for the whole fit (see
    :class:`sharded_loss`); every optimiser step is one distributed :func:`value_and_grad`.

    Args:
        f, shards, client, weights: as in :class:`sharded_loss`.
        params: the initial parameters.
        **fit_kwargs: ``optimizer``, ``steps``, ``progress``, ``callback`` of ``diffsci.fit``.

    Returns:
        ``(params, history)`` as ``diffsci.fit``.
    """
    from .._fit import fit as _fit

    with sharded_loss(f, shards, client=client, weights=weights, progress=False) as loss:
        return _fit(loss, params, **fit_kwargs)
