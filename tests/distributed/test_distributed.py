"""diffsci.distributed on a LocalCluster of 2 worker processes (1 thread each), one per module.

What is promised bit for bit (the same shard layout gives the same bits on the cluster as in
process, whatever the worker count, task order or a retry after a killed worker) is compared with
``==``; sums computed another way (one dense evaluation) with a tolerance.
"""

import os
import signal
import threading
import time

import numpy as np
import pytest

pytest.importorskip("distributed")

import distributed  # noqa: E402

import diffsci as ds  # noqa: E402
from diffsci import distributed as dd  # noqa: E402
from diffsci.testing import check_grads  # noqa: E402


@pytest.fixture(scope="module")
def client():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=":0") as cluster, \
            distributed.Client(cluster, set_as_default=False) as c:
        c.wait_for_workers(2, timeout=120)
        yield c


# The tests marked `kernels` run the packages' Numba kernels inside the workers. `make test`'s
# second pass (NUMBA_BOUNDSCHECK=1, a fresh Numba cache) would compile every kernel again in each
# worker process as well as here (806 s for the quantum test on the loaded 2-core machine); the
# kernels' indexing is bounds-checked by each package's own tests in that pass, and what these
# tests check (sharding, seeds, pooling, the tree) does not depend on bounds checks.
not_in_boundscheck_pass = pytest.mark.skipif(
    os.environ.get("NUMBA_BOUNDSCHECK") == "1",
    reason="the packages' own tests bounds-check these kernels; compiling them again in every "
           "worker process is too slow for CI")


def _leaves_equal(a, b):
    la, ta = ds.tree_flatten(a)
    lb, tb = ds.tree_flatten(b)
    return ta == tb and all(np.array_equal(x, y) and np.asarray(x).dtype == np.asarray(y).dtype
                            for x, y in zip(la, lb))


def lsq(p, shard):
    """A least-squares term with a nonlinearity: Σ (tanh(X w) + b − y)²."""
    x, y = shard
    r = np.tanh(x @ p["w"]) + p["b"] - y
    return np.sum(r * r)


def _data(n_shards=7, rows=5, seed=0):
    rng = np.random.default_rng(seed)
    return [(rng.normal(size=(rows + k % 3, 3)), rng.normal(size=rows + k % 3))
            for k in range(n_shards)]


P0 = {"w": np.array([0.3, -0.2, 0.5]), "b": 0.1}


def test_cluster_equals_serial_bit_for_bit_and_the_fixed_tree(client):
    shards = _data()
    weights = np.linspace(0.5, 2.0, len(shards))
    got = dd.value_and_grad(lsq, P0, shards, client=client, weights=weights)
    ref = dd.value_and_grad(lsq, P0, shards, client="serial", weights=weights)
    assert _leaves_equal(got, ref)
    # the tree, by hand: ((0+1)+(2+3)) + ((4+5)+6), each term weight·(value, grad)
    parts = [ds.value_and_grad(lambda p: lsq(p, s))(P0) for s in shards]
    parts = [(w * v, {"w": w * g["w"], "b": w * g["b"]}) for w, (v, g) in zip(weights, parts)]

    def add(a, b):
        return (a[0] + b[0], {"w": a[1]["w"] + b[1]["w"], "b": a[1]["b"] + b[1]["b"]})

    tree = add(add(add(parts[0], parts[1]), add(parts[2], parts[3])),
               add(add(parts[4], parts[5]), parts[6]))
    assert tree[0] == got[0] and np.array_equal(tree[1]["w"], got[1]["w"])
    assert tree[1]["b"] == got[1]["b"]
    # one dense evaluation over all the rows (another summation order): equal to rounding
    xs = np.concatenate([s[0] for s in shards])
    ys = np.concatenate([s[1] for s in shards])
    wr = np.concatenate([np.full(len(s[1]), w) for s, w in zip(shards, weights)])
    dense = ds.value_and_grad(
        lambda p: np.sum(wr * (np.tanh(xs @ p["w"]) + p["b"] - ys) ** 2))(P0)
    np.testing.assert_allclose(got[0], dense[0], rtol=1e-13)
    np.testing.assert_allclose(got[1]["w"], dense[1]["w"], rtol=1e-12)
    np.testing.assert_allclose(got[1]["b"], dense[1]["b"], rtol=1e-12)


def test_a_graph_cancelled_by_dask_is_run_again_holding_its_futures(client, monkeypatch):
    """Dask can cancel a tree's root as "already forgotten" after a lost worker when the
    finished shards' futures were released (dask/distributed#4612): the graph runs once more,
    holding every future, with the same bits; a second cancellation is raised."""
    from concurrent.futures import CancelledError

    import diffsci.distributed._core as core
    real, calls = core._run_graph, []

    def flaky(*args):
        calls.append(args[-1])  # hold
        if len(calls) == 1:
            raise core._import_distributed().client.FutureCancelledError("root", "forgotten")
        return real(*args)

    monkeypatch.setattr(core, "_run_graph", flaky)
    shards = _data()
    got = dd.value_and_grad(lsq, P0, shards, client=client)
    assert calls == [False, True]
    assert _leaves_equal(got, dd.value_and_grad(lsq, P0, shards, client="serial"))
    calls.clear()
    assert dd.map_shards(lambda p, s: float(np.sum(s[1])), P0, shards, client=client) == \
        [float(np.sum(s[1])) for s in shards]
    assert calls == [False, True]

    def always(*args):
        raise CancelledError("root")

    monkeypatch.setattr(core, "_run_graph", always)
    with pytest.raises(CancelledError):
        dd.value_and_grad(lsq, P0, shards, client=client)


def test_gradient_against_finite_differences_and_closed_form(client):
    shards = _data(n_shards=4)
    loss = dd.sharded_loss(lsq, shards, client=client)
    try:
        check_grads(loss, (P0,), modes=("rev",))
        # closed form: ∂/∂w = Σ 2 r (1 − tanh²) x, ∂/∂b = Σ 2 r
        gw, gb = np.zeros(3), 0.0
        for x, y in shards:
            t = np.tanh(x @ P0["w"])
            r = t + P0["b"] - y
            gw += x.T @ (2 * r * (1 - t * t))
            gb += np.sum(2 * r)
        _, g = ds.value_and_grad(loss)(P0)
        np.testing.assert_allclose(g["w"], gw, rtol=1e-12)
        np.testing.assert_allclose(g["b"], gb, rtol=1e-12)
        with pytest.raises(NotImplementedError, match="first order only"):
            ds.hessian(lambda b: loss({"w": P0["w"], "b": b}))(0.1)
    finally:
        loss.close()


def test_has_aux_sums_aux_and_task_order_does_not_matter(client):
    def f(p, shard):
        k, x = shard
        time.sleep(0.05 * ((7 - k) % 4))  # later shards finish first
        v = np.sum(np.sin(p * x))
        return v, {"n": len(x), "sq": np.sum(x * x)}

    rng = np.random.default_rng(1)
    shards = [(k, rng.normal(size=10 + k)) for k in range(6)]
    (v, aux), g = dd.value_and_grad(f, 0.7, shards, client=client, has_aux=True)
    (v2, aux2), g2 = dd.value_and_grad(f, 0.7, shards, client="serial", has_aux=True)
    assert v == v2 and g == g2 and aux == aux2
    assert aux["n"] == sum(len(x) for _, x in shards)
    np.testing.assert_allclose(aux["sq"], sum(np.sum(x * x) for _, x in shards), rtol=1e-14)


def _maybe_fail(p, x):
    if x[0] == 3.0:
        raise ValueError("negative variance in this shard")
    return np.sum(p * x)


def test_a_raising_shard_names_the_shard_and_the_cause(client):
    shards = [np.array([float(k), 1.0]) for k in range(6)]
    with pytest.raises(dd.ShardError, match=r"shard 3 .*ValueError: negative variance") as e:
        dd.value_and_grad(_maybe_fail, 1.0, shards, client=client)
    assert e.value.index == 3
    assert "_maybe_fail" in e.value.remote_traceback
    with pytest.raises(dd.ShardError, match=r"shard 3 .*ValueError"):
        dd.value_and_grad(_maybe_fail, 1.0, shards, client="serial")
    # shards returning different shapes: an error, never a partial sum
    with pytest.raises(dd.ShardError, match="different structures|shapes"):
        dd.map_sum(lambda _, k: np.ones(1 + (k == 2)), None, list(range(4)), client=client)
    # the cluster is still usable
    assert dd.value_and_grad(_maybe_fail, 1.0, shards[:3], client=client)[0] == 6.0


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match="weights must have one entry per shard"):
        dd.value_and_grad(lsq, P0, _data(3), client="serial", weights=[1.0, 2.0])
    with pytest.raises(ValueError, match="shards is empty"):
        dd.value_and_grad(lsq, P0, [], client="serial")
    with pytest.raises(TypeError, match="client must be"):
        dd.value_and_grad(lsq, P0, _data(2), client=3)
    with pytest.raises(TypeError, match="f must be callable"):
        dd.value_and_grad(None, P0, _data(2), client="serial")
    with pytest.raises(ValueError, match="n_shards must be >= 1"):
        dd.shard_seeds(0, 0)


def test_shard_seeds_are_a_pure_function_of_seed_and_index():
    a = dd.shard_seeds(7, 4)
    assert a == dd.shard_seeds(7, 9)[:4] and len(set(a)) == 4
    assert all(0 <= s < 2**64 for s in a) and dd.shard_seeds(8, 4) != a


def test_embedded_default_client(client, monkeypatch):
    shards = _data(n_shards=3)
    ref = dd.value_and_grad(lsq, P0, shards, client="serial")
    # an existing default client is used, and no cluster is started
    started = []
    real = distributed.LocalCluster

    def spy(*args, **kwargs):
        cluster = real(*args, **kwargs)
        started.append((cluster, kwargs))
        return cluster

    monkeypatch.setattr(distributed, "LocalCluster", spy)
    with client.as_current():
        assert _leaves_equal(dd.value_and_grad(lsq, P0, shards), ref)
    assert not started
    prefixes = client.run_on_scheduler(lambda dask_scheduler: list(dask_scheduler.task_prefixes))
    assert "diffsci_value_and_grad_shard" in prefixes
    # a scheduler address
    assert _leaves_equal(dd.value_and_grad(lsq, P0, shards, client=client.scheduler.address), ref)
    assert not started
    # no default client: a LocalCluster of processes is started for the call and closed (one
    # shard: one worker, so the test starts one process, ≈ the time `import diffsci` takes)
    with pytest.raises(ValueError):
        distributed.default_client()
    one = dd.value_and_grad(lsq, P0, shards[:1], client="serial")
    assert _leaves_equal(dd.value_and_grad(lsq, P0, shards[:1]), one)
    assert len(started) == 1
    cluster, kwargs = started[0]
    assert kwargs["processes"] is True and kwargs["threads_per_worker"] == 1
    assert kwargs["n_workers"] == 1
    assert cluster.status.name == "closed"


def _descendants():
    import psutil

    return {(q.pid, q.create_time()) for q in psutil.Process().children(recursive=True)}


def test_fit_on_an_embedded_cluster_started_once_and_closed(monkeypatch):
    """No client and no default client: fit's sharded_loss starts one LocalCluster for the
    whole fit (not one per step), the result equals the in-process fit bit for bit, and the
    cluster and its processes are gone afterwards."""
    with pytest.raises(ValueError):
        distributed.default_client()
    started = []
    real = distributed.LocalCluster

    def spy(*args, **kwargs):
        cluster = real(*args, **kwargs)
        started.append((cluster, kwargs))
        return cluster

    monkeypatch.setattr(distributed, "LocalCluster", spy)
    before = _descendants()
    shards = _data(n_shards=2)  # two shards: min(cores, 2) workers
    kw = dict(optimizer=ds.optim.Adam(0.05), steps=3, progress=False)
    p_emb, h_emb = dd.fit(lsq, P0, shards, **kw)
    kw["optimizer"] = ds.optim.Adam(0.05)
    p_ref, h_ref = ds.fit(dd.sharded_loss(lsq, shards, client="serial"), P0, **kw)
    assert np.array_equal(h_emb["loss"], h_ref["loss"]) and _leaves_equal(p_emb, p_ref)
    assert len(started) == 1  # one cluster for the 3 steps
    cluster, kwargs = started[0]
    assert kwargs["processes"] is True and kwargs["threads_per_worker"] == 1
    assert kwargs["n_workers"] == min(os.cpu_count(), 2)
    assert kwargs["env"]["NUMBA_NUM_THREADS"] == "1" == kwargs["env"]["OMP_NUM_THREADS"]
    assert cluster.status.name == "closed"
    left, deadline = True, time.monotonic() + 30  # worker processes exit asynchronously
    while left and time.monotonic() < deadline:
        left = _descendants() - before
        time.sleep(0.1)
    assert not left, f"processes left running after the fit: {left}"
    with pytest.raises(ValueError):  # nor was the embedded cluster left as the default client
        distributed.default_client()


def test_fit_and_minimize_with_a_sharded_loss(client):
    shards = _data(n_shards=4)
    kw = dict(optimizer=ds.optim.Adam(0.05), steps=5, progress=False)
    p_cluster, h_cluster = dd.fit(lsq, P0, shards, client=client, **kw)
    kw["optimizer"] = ds.optim.Adam(0.05)
    p_serial, h_serial = ds.fit(dd.sharded_loss(lsq, shards, client="serial"), P0, **kw)
    assert np.array_equal(h_cluster["loss"], h_serial["loss"]) and _leaves_equal(p_cluster,
                                                                                 p_serial)
    # minimize a linear least squares summed over shards: the normal-equations solution
    lin = lambda p, s: np.sum((s[0] @ p - s[1]) ** 2)
    with dd.sharded_loss(lin, shards, client=client) as loss:
        res = ds.optim.minimize(loss, np.zeros(3), options={"gtol": 1e-12})
    xs = np.concatenate([s[0] for s in shards])
    ys = np.concatenate([s[1] for s in shards])
    np.testing.assert_allclose(res.x, np.linalg.lstsq(xs, ys, rcond=None)[0], atol=1e-7)


@pytest.mark.kernels
@not_in_boundscheck_pass
def test_mc_price_greeks_pools_the_standard_errors(client):
    import finance
    from finance import _kernels

    kw = dict(spot=100.0, strike=105.0, expiry=1.0, rate=0.03, dividend=0.01, vol=0.25)
    # in process first: a cold Numba cache is then compiled once, here, and the workers load
    # the cached kernels instead of each compiling them beside this process (3× the work)
    ref = dd.mc_price_greeks(**kw, n_paths=40_000, n_shards=4, seed=5, client="serial")
    got = dd.mc_price_greeks(**kw, n_paths=40_000, n_shards=4, seed=5, client=client)
    assert all(got[k] == ref[k] for k in got)  # bit for bit
    # single process over all the shards' samples at once (the per-path kernel, concatenated)
    cols = []
    for s in dd.shard_seeds(5, 4):
        y, g = _kernels.gbm_samples_adjoint(np.uint64(s), *kw.values(), 1.0, 0, 1, 5_000, True,
                                            0.0)
        cols.append(np.column_stack([y, g]))
    cols = np.concatenate(cols) * np.array([1, 1, 1, -1, 1, 1, 1.0])  # theta = −∂/∂T
    mean = cols.mean(axis=0)
    se = cols.std(axis=0, ddof=1) / np.sqrt(len(cols))
    for j, name in enumerate(dd._domains.MC_NAMES):
        np.testing.assert_allclose(got[name][0], mean[j], rtol=1e-12, err_msg=name)
        np.testing.assert_allclose(got[name][1], se[j], rtol=1e-8, err_msg=name)
        assert got[name].n_samples == 20_000
    # one shard is finance.mc_greeks itself
    one = dd.mc_price_greeks(**kw, n_paths=10_000, n_shards=1, seed=5, client="serial")
    plain = finance.mc_greeks(**kw, n_paths=10_000, seed=dd.shard_seeds(5, 1)[0])
    for name in one:
        np.testing.assert_allclose(one[name], plain[name], rtol=1e-12)
    # and the estimate sits within 4 s.e. of the closed form
    bs = finance.greeks(finance.bsm_price, **kw)
    for name in ("price", "delta", "vega"):
        assert abs(got[name][0] - float(bs[name])) < 4 * got[name][1], name
    with pytest.raises(ValueError, match="multiple of n_shards"):
        dd.mc_price_greeks(**kw, n_paths=1001, n_shards=4, client="serial")


@pytest.mark.kernels
@not_in_boundscheck_pass
def test_sde_ensemble_value_and_grad(client):
    import sde

    ou = sde.SDE(lambda t, y, p: p[0] * (p[1] - y), lambda t, y, p: p[2] * np.ones_like(y),
                 noise="diagonal")
    ts = np.linspace(0.0, 1.0, 5)
    p = np.array([1.5, 0.3, 0.4])
    loss = lambda ys: np.sum((ys[-1] - 0.5) ** 2, axis=-1) + np.mean(ys, axis=(0, 2))
    args = (loss, ou, np.array([1.0]), ts, p)
    kw = dict(n_paths=32, n_shards=4, seed=3, dt=0.05)
    ref = dd.sde_ensemble_value_and_grad(*args, **kw, client="serial")  # compiles (see above)
    got = dd.sde_ensemble_value_and_grad(*args, **kw, client=client)
    assert got[0] == ref[0] and np.array_equal(got[1], ref[1])
    # the same paths in one process: the mean over shards of sdeint with each shard's seed
    def total(q):
        parts = [np.sum(loss(sde.sdeint(ou, np.ones((8, 1)), ts, q, seed=s, dt=0.05)))
                 for s in dd.shard_seeds(3, 4)]
        return sum(parts) / 32

    v, g = ds.value_and_grad(total)(p)
    np.testing.assert_allclose(got[0], v, rtol=1e-14)
    np.testing.assert_allclose(got[1], g, rtol=1e-12)
    check_grads(total, (p,), modes=("rev",))


@pytest.mark.kernels
@not_in_boundscheck_pass
def test_expval_sweep_exact_and_with_shots(client):
    import quantum

    c = quantum.Circuit(2).ry(0).rx(1).cnot(0, 1).ry(1)
    h = quantum.Z(0) @ quantum.Z(1) + 0.5 * quantum.X(1)
    thetas = np.random.default_rng(4).uniform(-np.pi, np.pi, size=(7, c.n_params))
    # in process first (compiles a cold Numba cache once, see the mc_price_greeks test)
    ref = dd.expval_sweep(c, thetas, h, n_shards=3, client="serial")
    again = dd.expval_sweep(c, thetas, h, shots=200, n_shards=2, seed=9, client="serial")
    got = dd.expval_sweep(c, thetas, h, n_shards=3, client=client)
    assert all(np.array_equal(got[k], ref[k]) for k in ref) and got.keys() == ref.keys()
    np.testing.assert_allclose(got["value"], quantum.expval(c, thetas, h), rtol=1e-13)
    for b in range(len(thetas)):  # parameter shift, exact: an independent gradient
        e = quantum.expval_shots(c, thetas[b], h, shots=None, grad=True)
        np.testing.assert_allclose(got["grad"][b], e.grad, atol=1e-12)
    shots = dd.expval_sweep(c, thetas, h, shots=200, n_shards=3, seed=9, client=client)
    for k in shots:  # a row's shots depend on its seed only, not on the sharding
        assert np.array_equal(shots[k], again[k])
    assert np.all(np.abs(shots["value"] - got["value"]) < 6 * shots["stderr"] + 1e-12)


@pytest.mark.kernels
@not_in_boundscheck_pass
def test_multiview_value_and_grad(client):
    import raytrace as rt

    cams = [rt.Camera(eye=(x, 0.5, -5.0), width=6, height=6) for x in (-1.0, 0.0, 1.0)]

    def render(light, cam):
        return rt.render(rt.Scene(cam, (rt.Sphere((0.0, 0.0, 0.0), 1.0),), (light,)))

    truth = rt.PointLight((2.0, 2.0, -5.0), 500.0)
    views = [(cam, np.asarray(render(truth, cam))) for cam in cams]
    view_loss = lambda light, view: rt.mse(render(light, view[0]), view[1])
    guess = rt.PointLight((1.0, 3.0, -4.0), 400.0)
    got = dd.multiview_value_and_grad(view_loss, guess, views, client=client)
    ref = dd.multiview_value_and_grad(view_loss, guess, views, client="serial")
    assert _leaves_equal(got, ref)
    v, g = ds.value_and_grad(lambda light: sum(view_loss(light, vw) for vw in views))(guess)
    np.testing.assert_allclose(got[0], v, rtol=1e-13)
    for a, b in zip(ds.tree_leaves(got[1]), ds.tree_leaves(g)):
        np.testing.assert_allclose(a, b, rtol=1e-12)


class _GraphCounter(distributed.diagnostics.plugin.SchedulerPlugin):
    """Records the keys of the tasks in every graph the scheduler receives (``update_graph``;
    the scattered payload, already in memory, is listed as a dependency and left out)."""

    name = "diffsci-test-graph-counter"

    def __init__(self):
        self.graphs = []

    def update_graph(self, scheduler, *, client, keys, tasks, **kwargs):
        self.graphs.append(sorted(k for k in map(str, tasks) if k.startswith("diffsci_")))


@pytest.fixture
def graphs(client):
    """The graphs the scheduler receives during the test (a list of lists of task keys)."""
    plugin = _GraphCounter()
    # LocalCluster's scheduler runs in this process: the plugin object itself is registered
    scheduler = client.cluster.scheduler
    scheduler.add_plugin(plugin)
    try:
        yield plugin.graphs
    finally:
        scheduler.remove_plugin(name=_GraphCounter.name)


def _pairs(_, k):
    return {"k": np.array([k, 10 * k]), "sq": np.array([k * k])}


def test_every_call_sends_one_graph_with_all_its_tasks(client, graphs):
    shards = list(range(5))
    ref = [_pairs(None, k) for k in shards]
    got = dd.map_shards(_pairs, None, shards, client=client)
    assert len(graphs) == 1 and len(graphs[0]) == 5
    assert all(_leaves_equal(a, b) for a, b in zip(got, ref))
    # with combine: the shard tasks and the combine task in one graph, its value alone back
    cat = lambda parts: {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}
    joined = dd.map_shards(_pairs, None, shards, client=client, combine=cat)
    assert len(graphs) == 2 and len(graphs[1]) == 6
    assert any("combine" in key for key in graphs[1])
    assert _leaves_equal(joined, cat(ref))
    assert _leaves_equal(joined, dd.map_shards(_pairs, None, shards, client="serial",
                                               combine=cat))
    # value_and_grad: 9 shard tasks and 2 reductions (8 + 1 -> a run of 8, then the root)
    dd.value_and_grad(lsq, P0, _data(9), client=client)
    assert len(graphs) == 3 and len(graphs[2]) == 9 + 2
    # expval_sweep is a map_shards with a concatenating combine: one graph too
    pytest.importorskip("quantum")
    import quantum

    c = quantum.Circuit(1).ry(0)
    got = dd.expval_sweep(c, np.array([[0.1], [0.2], [0.3]]), quantum.Z(0), n_shards=3,
                          client=client)
    assert len(graphs) == 4 and len(graphs[3]) == 3 + 1
    np.testing.assert_allclose(got["value"], np.cos([0.1, 0.2, 0.3]), rtol=1e-13)
    np.testing.assert_allclose(got["grad"][:, 0], -np.sin([0.1, 0.2, 0.3]), rtol=1e-13)


def _fail_on_two(_, k):
    if k == 2:
        raise KeyError("no row 2")
    return k


def test_map_shards_errors_name_the_shard_and_the_combine(client):
    for c in (client, "serial"):
        with pytest.raises(dd.ShardError, match=r"shard 2 .*KeyError") as e:
            dd.map_shards(_fail_on_two, None, range(4), client=c)
        assert e.value.index == 2
        with pytest.raises(dd.ShardError, match="combining the shards' results failed: "
                                                "ZeroDivisionError") as e:
            dd.map_shards(lambda _, k: k, None, [0, 1], client=c,
                          combine=lambda parts: 1 / parts[0])
        assert e.value.index is None
    with pytest.raises(TypeError, match="combine must be None or callable, got int"):
        dd.map_shards(lambda _, k: k, None, [0], client="serial", combine=3)
    # the cluster holds nothing of these calls afterwards (releases travel batched: wait)
    left, deadline = True, time.monotonic() + 20
    while left and time.monotonic() < deadline:
        left = [k for k in list(client.cluster.scheduler.tasks) if "map_shards" in str(k)]
        time.sleep(0.05)
    assert not left


def test_fan_in_reduction_equals_the_binary_tree_bit_for_bit():
    from diffsci.distributed._core import _fan_in, _tree

    rng = np.random.default_rng(6)
    for n in list(range(1, 70)) + [127, 128, 129, 515]:
        xs = list(rng.normal(size=n) * 10.0 ** rng.integers(-8, 8, size=n))
        binary = _tree(xs, lambda a, b, lv, j: a + b)
        for fan in (2, 4, 8, 16):
            chunked = _fan_in(xs, lambda run, lv, j: _tree(run, lambda a, b, l2, k: a + b), fan)
            assert chunked == binary, (n, fan)
    with pytest.raises(ValueError, match="power of two"):
        _fan_in([1.0, 2.0], lambda run, lv, j: sum(run), 6)


def test_import_diffsci_does_not_import_dask():
    import subprocess
    import sys

    code = ("import sys, diffsci, diffsci.distributed; "
            "print(sorted(m for m in ('dask', 'distributed') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=300, check=True)
    assert out.stdout.strip() == "[]", out.stdout + out.stderr


def _slow_shard(p, shard):
    """0.25 s of sleep, with start/done marker files naming the worker process."""
    k, x, folder = shard
    open(os.path.join(folder, f"start-{k}-{os.getpid()}"), "w").close()
    time.sleep(0.25)
    v = np.sum(np.cos(p * x) * x)
    open(os.path.join(folder, f"done-{k}-{os.getpid()}"), "w").close()
    return v


# Last in the module: the nanny's replacement worker then starts (importing diffsci) while the
# fixture closes, instead of delaying the next test.
def test_killed_worker_is_retried_and_the_result_is_unchanged(client, tmp_path):
    rng = np.random.default_rng(2)
    shards = [(k, rng.normal(size=20), str(tmp_path)) for k in range(10)]
    ref = dd.value_and_grad(_slow_shard, 0.4, shards, client="serial")
    for f in tmp_path.iterdir():
        f.unlink()
    pids = set(client.run(os.getpid).values())
    killed = []

    def killer():  # kill a worker while it is inside a shard (started, not done)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not killed:
            names = {f.name for f in tmp_path.iterdir()}
            for name in names:
                if name.startswith("start-"):
                    _, k, pid = name.split("-")
                    if int(pid) in pids and f"done-{k}-{pid}" not in names and int(k) >= 2:
                        os.kill(int(pid), signal.SIGKILL)
                        killed.append((int(k), int(pid)))
                        return
            time.sleep(0.01)

    t = threading.Thread(target=killer)
    t.start()
    got = dd.value_and_grad(_slow_shard, 0.4, shards, client=client)
    t.join()
    assert killed, "no worker was killed mid-task"
    k, pid = killed[0]
    names = {f.name for f in tmp_path.iterdir()}
    assert f"done-{k}-{pid}" not in names  # it died inside shard k ...
    assert any(n.startswith(f"done-{k}-") for n in names)  # ... which another process redid
    assert got == ref  # bit for bit
