"""The map-reduce behind ``diffsci.distributed``: one task per shard, a fixed pairwise tree of sums.

``map_sum(fn, payload, shards)`` evaluates ``w_s · fn(payload, shard_s)`` (a pytree) in one Dask
task per shard and adds the results in a binary tree whose shape depends only on the number of
shards: level 0 adds shards (0, 1), (2, 3), …, level 1 adds those sums pairwise, an odd one out
is carried up unchanged. The additions run as tasks on the cluster, each adding up to 8
consecutive partial sums in that binary order (the same bits: ``_fan_in``); the client receives
the root alone, and the whole graph goes to the scheduler in one message. Floating-point
addition is not associative, so fixing the tree is what makes the sum bit-identical whatever
the number of workers, the order tasks finish in, or a retry after a worker died (tasks are pure
functions of the payload and their shard). ``client="serial"`` runs the same tasks and the same
tree in this process: the reference a cluster's result equals.

``value_and_grad`` is ``map_sum`` of ``diffsci.value_and_grad`` per shard.
"""

from __future__ import annotations

import contextlib
import numbers
import os
import sys
import traceback
import uuid
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from tqdm import tqdm

from .. import _api
from .._tree import tree_flatten, tree_unflatten

__all__ = ["SERIAL", "ShardError", "cluster_client", "map_shards", "map_sum", "shard_seeds",
           "value_and_grad"]

#: ``client=SERIAL`` runs every shard in this process in the cluster's tree order.
SERIAL = "serial"

_GOLDEN = 0x9E3779B97F4A7C15
_MASK = (1 << 64) - 1


class ShardError(RuntimeError):
    """A shard's task failed: names the shard (its index and a short repr) and the cause.

    Attributes:
        index: the shard's position in ``shards``.
        cause: the failing exception's type name and message (``"ZeroDivisionError: ..."``).
        remote_traceback: the traceback text on the worker ('' when it is unknown).
    """

    def __init__(self, message, index=None, cause="", remote_traceback=""):
        super().__init__(message)
        self.index = index
        self.cause = cause
        self.remote_traceback = remote_traceback

    def __reduce__(self):  # travels from the worker to the client
        return (type(self), (self.args[0], self.index, self.cause, self.remote_traceback))


def shard_seeds(seed, n_shards):
    """Independent 64-bit seeds for ``n_shards`` shards, a pure function of ``(seed, s)``.

    Seed ``s`` is SplitMix64's finaliser (``diffsci.random.mix64``) of ``seed + (s + 1)·γ``
    (γ the golden-ratio increment) hashed once more, so the shards' counter-based streams do not
    depend on how many shards there are or which worker runs them (Steele, Lea & Flood,
    "Fast splittable pseudorandom number generators", OOPSLA 2014).

    Args:
        seed: a non-negative int (< 2⁶⁴).
        n_shards: an int ≥ 1.

    Returns:
        A list of Python ints in ``[0, 2⁶⁴)`` (usable as the ``seed=`` of the packages' Monte
        Carlo and SDE functions).

    Raises:
        TypeError/ValueError: ``seed`` or ``n_shards`` not as described.

    Example:
        >>> shard_seeds(0, 3) == shard_seeds(0, 5)[:3]
        True
    """
    from ..random import mix64

    for name, v, low in (("seed", seed, 0), ("n_shards", n_shards, 1)):
        if isinstance(v, bool) or not isinstance(v, numbers.Integral):
            raise TypeError(f"shard_seeds: {name} must be an int, got {type(v).__name__} {v!r}")
        if v < low:
            raise ValueError(f"shard_seeds: {name} must be >= {low}, got {v}")
    if seed > _MASK:
        raise ValueError(f"shard_seeds: seed must be < 2**64, got {seed}")
    out = []
    for s in range(int(n_shards)):
        x = (int(seed) + (s + 1) * _GOLDEN) & _MASK
        out.append(int(mix64(np.uint64(mix64(np.uint64(x))))))
    return out


def _import_distributed():
    try:
        import distributed
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise ImportError(
            "diffsci.distributed needs Dask's distributed scheduler: pip install "
            "'dask[distributed]' (or diffsci's 'distributed' extra); client='serial' runs "
            "without it") from e
    return distributed


def _short(obj, limit=80):
    try:
        text = repr(obj)
    except Exception:  # a repr that fails must not hide the real error
        text = f"<{type(obj).__name__}>"
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _aligned(tree):
    """``tree`` with every NumPy array leaf that is not aligned to its itemsize copied.

    Dask deserialises arrays in place inside the received message, at any byte offset; NumPy
    runs its SIMD loops (``tanh``, ``exp`` ... with other last bits than the scalar loops) only
    on aligned arrays, so without this copy a shard's result would depend on where its bytes
    landed (seen here: the same shard's gradient differed by 1 ulp between the worker and the
    client). Arrays hidden inside non-pytree objects are not reached: pass them as pytrees.
    """
    leaves, td = tree_flatten(tree)
    if not any(isinstance(x, np.ndarray) and not x.flags.aligned for x in leaves):
        return tree
    return tree_unflatten(td, [np.array(x) if isinstance(x, np.ndarray) and not x.flags.aligned
                               else x for x in leaves])


def _run_shard(fn, payload, shard, index, weight):
    """One shard: ``weight · fn(payload, shard)``; a failure becomes a ShardError naming it."""
    try:
        out = fn(_aligned(payload), _aligned(shard))
        if weight is not None:
            leaves, tree = tree_flatten(out)
            out = tree_unflatten(tree, [weight * np.asarray(x) for x in leaves])
        return out
    except Exception as e:
        cause = f"{type(e).__name__}: {e}"
        raise ShardError(f"shard {index} ({_short(shard)}) failed: {cause}", index, cause,
                         traceback.format_exc()) from e


def _add(a, b, span_a, span_b):
    """Leaf-wise ``a + b`` of two partial sums over the shard ranges ``span_a`` and ``span_b``."""
    la, ta = tree_flatten(a)
    lb, tb = tree_flatten(b)
    if ta != tb:
        raise ShardError(
            f"the results of shards {span_a[0]}..{span_a[1] - 1} and {span_b[0]}..{span_b[1] - 1} "
            f"have different structures ({ta!r} vs {tb!r}); every shard must return the same "
            f"pytree", span_b[0])
    out = []
    for k, (x, y) in enumerate(zip(la, lb)):
        if np.shape(x) != np.shape(y):
            raise ShardError(
                f"leaf {k} of the results of shards {span_a[0]}..{span_a[1] - 1} and "
                f"{span_b[0]}..{span_b[1] - 1} has shapes {np.shape(x)} and {np.shape(y)}; every "
                f"shard must return the same shapes", span_b[0])
        out.append(np.add(x, y))
    return tree_unflatten(ta, out)


def _tree(items, combine):
    """Reduce ``items`` (with their shard spans) pairwise, level by level, in a fixed order."""
    level = 0
    while len(items) > 1:
        nxt = [combine(items[j], items[j + 1], level, j // 2)
               for j in range(0, len(items) - 1, 2)]
        if len(items) % 2:
            nxt.append(items[-1])
        items = nxt
        level += 1
    return items[0]


#: Partial sums a reduction task adds (a power of two: see ``_fan_in``).
FAN_IN = 8


def _fan_in(items, combine_many, fan_in=FAN_IN):
    """``_tree(items, ...)`` computed ``fan_in`` items per step: each run of ``fan_in``
    consecutive items (the last run maybe shorter; a run of one is carried) goes to one
    ``combine_many(run, level, j)``, which must add its run with :func:`_tree`.

    The same sum bit for bit as the binary tree: with ``fan_in = 2^k``, a run starts at a
    multiple of ``2^k``, so for the ``k`` binary levels inside it every pair the binary tree
    forms lies within one run (a full run never has an odd item to carry; the last run's carry
    stays at its end), and the binary tree over the runs' sums continues exactly where those
    ``k`` levels stopped. Fewer, larger reduction tasks: ``≈ S/(fan_in − 1)`` instead of
    ``S − 1``, depth ``log_fan_in S``.
    """
    if fan_in < 2 or fan_in & (fan_in - 1):
        raise ValueError(f"fan_in must be a power of two >= 2, got {fan_in}")
    level = 0
    while len(items) > 1:
        nxt = []
        for j in range(0, len(items), fan_in):
            run = items[j:j + fan_in]
            nxt.append(run[0] if len(run) == 1 else combine_many(run, level, j // fan_in))
        items = nxt
        level += 1
    return items[0]


def _add_many(parts, spans):
    """The partial sums ``parts`` (over the shard ranges ``spans``) added by :func:`_tree`."""
    items = list(zip(spans, parts))
    return _tree(items, lambda a, b, lv, j: ((a[0][0], b[0][1]), _add(a[1], b[1], a[0], b[0])))[1]


def _check_weights(who, weights, n):
    if weights is None:
        return [None] * n
    try:
        w = np.asarray(weights, dtype=np.float64)
    except (TypeError, ValueError) as e:
        raise TypeError(f"{who}: weights must be a sequence of real numbers, one per shard, got "
                        f"{type(weights).__name__}") from e
    if w.shape != (n,):
        raise ValueError(f"{who}: weights must have one entry per shard, shape ({n},), got shape "
                         f"{w.shape}")
    if not np.all(np.isfinite(w)):
        raise ValueError(f"{who}: weights must be finite, got {w[~np.isfinite(w)][0]} at index "
                         f"{int(np.flatnonzero(~np.isfinite(w))[0])}")
    return [float(x) for x in w]


def _check_shards(who, shards):
    if isinstance(shards, (str, bytes)) or not hasattr(shards, "__len__"):
        raise TypeError(f"{who}: shards must be a sequence (list, tuple, array) with one entry "
                        f"per task, got {type(shards).__name__}")
    shards = list(shards)
    if not shards:
        raise ValueError(f"{who}: shards is empty; pass at least one shard")
    return shards


#: The environment of an embedded cluster's worker processes: one worker per core with one
#: thread each, so every native thread pool is pinned to one thread (Dask's nanny pins
#: OpenMP/MKL/OpenBLAS already; Numba's parallel pool and NumExpr are added) instead of each
#: worker starting a pool as wide as the machine and the pools oversubscribing the cores.
WORKER_ENV = {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1",
              "NUMBA_NUM_THREADS": "1", "NUMEXPR_NUM_THREADS": "1"}


@contextlib.contextmanager
def cluster_client(client, n_tasks=None):
    """The Dask client to run on: ``client`` itself, a Client on the scheduler address
    ``client``, else the existing default client, else a temporary ``LocalCluster`` of worker
    processes (one thread each, ``min(cores, n_tasks)`` workers, native thread pools pinned to
    one thread: ``WORKER_ENV``) closed on exit.

    Yields:
        A ``distributed.Client``, or None for ``client="serial"``.

    Raises:
        TypeError: ``client`` is none of None, ``"serial"``, an address string or a Client.
    """
    if isinstance(client, str) and client == SERIAL:
        yield None
        return
    distributed = _import_distributed()
    if isinstance(client, distributed.Client):
        yield client
        return
    if isinstance(client, str):
        with distributed.Client(client, set_as_default=False) as c:
            yield c
        return
    if client is not None:
        raise TypeError(f"client must be None, 'serial', a scheduler address (str) or a "
                        f"distributed.Client, got {type(client).__name__} {client!r}")
    try:
        yield distributed.default_client()
        return
    except ValueError:  # no default client: start an embedded cluster
        pass
    n = max(1, min(os.cpu_count() or 1, n_tasks or 1))
    with distributed.LocalCluster(n_workers=n, threads_per_worker=1, processes=True,
                                  dashboard_address=":0", env=dict(WORKER_ENV)) as cluster, \
            distributed.Client(cluster, set_as_default=False) as c:
        yield c


def _checked(name, fn, shards):
    """``shards`` checked, and ``fn`` callable."""
    shards = _check_shards(name, shards)
    if not callable(fn):
        raise TypeError(f"{name}: fn must be callable, got {type(fn).__name__}")
    return shards


def _bar(name, n, progress):
    """The progress bar over ``n`` shards: None shows it for runs longer than 2 s, False
    never, True at once."""
    return tqdm(total=n, desc=name, file=sys.stderr, disable=progress is False,
                delay=0.0 if progress else 2.0, dynamic_ncols=True, leave=False)


def map_sum(fn, payload, shards, *, client=None, weights=None, progress=None, name="map_sum"):
    """``Σ_s w_s · fn(payload, shards[s])`` of pytree results, summed by a fixed tree on a cluster.

    ``payload`` is scattered once (to every worker, so a worker's death loses no copy); each
    shard is one task; the partial sums are added pairwise by tasks on the cluster in a tree
    fixed by the shard order (module docstring) and only the root comes back.

    Args:
        fn: ``fn(payload, shard) -> pytree`` of arrays/numbers, the same structure and shapes
            for every shard; a pure function of its arguments (no global random state), so
            that a retried task returns the same bits.
        payload: anything picklable (parameters, the function to differentiate ...).
        shards: a sequence, one entry per task (data, seeds, index ranges, or futures of
            already-scattered data).
        client: None (the default client, else an embedded LocalCluster), a
            ``distributed.Client``, a scheduler address, or ``"serial"`` (this process, the same
            tree: the reference result).
        weights: None or one finite real per shard, multiplying every leaf of its result.
        progress: a tqdm bar over the finished shards on stderr; None shows it for runs
            longer than 2 s, False never, True at once.
        name: shown on the bar and in the task keys.

    Returns:
        The summed pytree.

    Raises:
        ShardError: a shard raised (naming it and the cause, with the worker's traceback in
            ``remote_traceback``), its task killed the workers it ran on too often, or two
            shards returned different structures. Never a partial sum.
    """
    shards = _checked(name, fn, shards)
    ws = _check_weights(name, weights, len(shards))
    bar = _bar(name, len(shards), progress)
    try:
        with cluster_client(client, len(shards)) as c:
            if c is None:
                parts = []
                for i, (s, w) in enumerate(zip(shards, ws)):
                    parts.append(((i, i + 1), _run_shard(fn, payload, s, i, w)))
                    bar.update(1)
                return _tree(parts, lambda a, b, lv, j: (
                    (a[0][0], b[0][1]), _add(a[1], b[1], a[0], b[0])))[1]
            return _retrying(lambda hold: _cluster_sum(c, fn, payload, shards, ws, bar, name,
                                                       hold), bar)
    finally:
        bar.close()


def _retrying(run, bar=None):
    """``run(hold=False)``, once more with ``hold=True`` if Dask cancelled a future of the graph.

    Releasing the futures of finished shard tasks while their sums are pending lets the
    scheduler free the shards' results as soon as they are read; after a worker is lost, Dask
    can then cancel the graph's root as "already forgotten" (dask/distributed#4612, a race in
    its scheduler).  The computation is pure and its reduction tree fixed, so running the graph
    again, this time holding every future until the result is gathered, gives the same bits.
    """
    from concurrent.futures import CancelledError
    try:
        return run(False)
    except CancelledError:
        if hasattr(bar, "reset"):
            bar.reset()
        return run(True)


def _cluster_sum(c, fn, payload, shards, ws, bar, name, hold=False):
    distributed = _import_distributed()
    token = uuid.uuid4().hex[:12]
    tag = "".join(ch if ch.isalnum() else "_" for ch in name)
    [pf] = c.scatter([payload], broadcast=True, hash=False)
    index = {}
    dsk = {}
    leaves = []
    for i, (s, w) in enumerate(zip(shards, ws)):
        key = f"diffsci_{tag}_shard-{token}-{i}"
        index[key] = i
        # a raw graph reads tuples and key-named strings as tasks and references: the shard
        # travels in a box (a Future shard stays visible, so Dask passes its value)
        arg = s if isinstance(s, distributed.Future) else _Box(s)
        dsk[key] = (_run_boxed, fn, pf, arg, i, w)
        leaves.append(((i, i + 1), key))

    def combine(run, level, j):
        key = f"diffsci_{tag}_sum-{token}-{level}-{j}"
        index[key] = run[0][0][0]
        spans = [sp for sp, _ in run]
        dsk[key] = (_add_boxed, [k for _, k in run], _Box(spans))
        return (spans[0][0], spans[-1][1]), key

    # the whole graph in one message to the scheduler (a submit per task costs a round trip
    # and a graph update each; dask.delayed merged the upstream graphs at every reduction)
    root_key = _fan_in(list(leaves), combine)[1]
    return _run_graph(c, dsk, [root_key], [k for _, k in leaves], index, shards, pf, bar,
                      hold)[0]


def _run_graph(c, dsk, out_keys, shard_keys, index, shards, pf, bar, hold=False):
    """Send the raw graph ``dsk`` in one message, follow its shard tasks on the bar (the first
    failure raised as a ShardError naming its shard), and return the values of ``out_keys``
    (one gather); every future, and the scattered payload ``pf``, released on exit (``hold``:
    the shard futures only then, see :func:`_retrying`)."""
    distributed = _import_distributed()
    keys = list(dict.fromkeys(list(out_keys) + list(shard_keys)))
    try:
        futs = dict(zip(keys, c.get(dsk, keys, sync=False)))
    except BaseException:
        pf.release()
        raise
    outs = [futs[k] for k in out_keys]
    watched = [futs[k] for k in shard_keys]
    pending = distributed.as_completed(watched, loop=c.loop)
    held = list(futs.values()) if hold else []
    del futs, watched  # a shard's result is freed on the cluster once its sum has read it
    try:
        for fut in pending:
            if fut.status == "error":
                _raise(fut, index, distributed)
            bar.update(1)
            del fut
        return c.gather(outs)
    except ShardError:
        raise
    except distributed.KilledWorker as e:
        i = _shard_of(e, index)
        raise ShardError(f"shard {i} ({_short(shards[i]) if i is not None else '?'}): its task "
                         f"killed every worker that ran it ({e}); the shard crashes the worker "
                         f"process (memory, a segfault in native code) or the cluster is "
                         f"unstable", i, f"KilledWorker: {e}") from e
    except Exception as e:
        failed = [f.key for f in outs if f.status == "error" and f.key not in index]
        if not failed:
            raise
        cause = f"{type(e).__name__}: {e}"  # the task after the shards (combine) raised
        raise ShardError(f"combining the shards' results failed: {cause}", None, cause) from e
    finally:
        pending.clear()
        for f in outs + held:
            f.release()
        pf.release()


def map_shards(fn: Callable[[Any, Any], Any], payload: Any, shards: Sequence[Any], *,
               client: Any = None, progress: bool | None = None, name: str = "map_shards",
               combine: Callable[[list[Any]], Any] | None = None) -> Any:
    """``[fn(payload, shard) for shard in shards]``, one task per shard, in shard order.

    For sweeps whose results are wanted one by one (a map, not a sum). ``payload`` is scattered
    once; the shard tasks (and the ``combine`` task) go to the scheduler as one graph in one
    message, and the results come back in one gather; errors, retries and ``client`` as in
    :func:`map_sum`.

    Args:
        fn, payload, shards, client, progress, name: as in :func:`map_sum`.
        combine: None, or ``combine(results) -> value`` run as one more task on the cluster on
            the list of results in shard order (e.g. concatenating them), so that only its
            value comes back; a pure function, as ``fn``.

    Returns:
        A list with one result per shard, or ``combine`` of that list.

    Raises:
        ShardError: as in :func:`map_sum`; a failing ``combine`` too (``index`` None).
    """
    if combine is not None and not callable(combine):
        raise TypeError(f"{name}: combine must be None or callable, got "
                        f"{type(combine).__name__}")
    shards = _checked(name, fn, shards)
    bar = _bar(name, len(shards), progress)
    try:
        with cluster_client(client, len(shards)) as c:
            if c is None:
                out = []
                for i, s in enumerate(shards):
                    out.append(_run_shard(fn, payload, s, i, None))
                    bar.update(1)
                if combine is None:
                    return out
                try:
                    return combine(out)
                except Exception as e:
                    cause = f"{type(e).__name__}: {e}"
                    raise ShardError(f"combining the shards' results failed: {cause}", None,
                                     cause, traceback.format_exc()) from e
            return _retrying(lambda hold: _cluster_map(c, fn, payload, shards, bar, name,
                                                       combine, hold), bar)
    finally:
        bar.close()


def _cluster_map(c, fn, payload, shards, bar, name, combine, hold=False):
    """:func:`map_shards` on the cluster: the shard tasks (and the ``combine`` task) as one raw
    graph in one message, as :func:`_cluster_sum` sends its graph."""
    distributed = _import_distributed()
    token = uuid.uuid4().hex[:12]
    tag = "".join(ch if ch.isalnum() else "_" for ch in name)
    [pf] = c.scatter([payload], broadcast=True, hash=False)
    index, dsk, keys = {}, {}, []
    for i, s in enumerate(shards):
        key = f"diffsci_{tag}_shard-{token}-{i}"
        index[key] = i
        arg = s if isinstance(s, distributed.Future) else _Box(s)
        dsk[key] = (_run_boxed, fn, pf, arg, i, None)
        keys.append(key)
    if combine is None:
        return _run_graph(c, dsk, keys, keys, index, shards, pf, bar, hold)
    root = f"diffsci_{tag}_combine-{token}"
    dsk[root] = (_combine_boxed, _Box(combine), keys)
    return _run_graph(c, dsk, [root], keys, index, shards, pf, bar, hold)[0]


class _Box:
    """Carries a value through a raw Dask graph untouched (Dask looks inside tuples, lists and
    dicts only)."""

    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value

    def __reduce__(self):
        return (_Box, (self.value,))


def _unbox(x):
    return x.value if isinstance(x, _Box) else x


def _run_boxed(fn, payload, shard, index, weight):
    return _run_shard(fn, payload, _unbox(shard), index, weight)


def _add_boxed(parts, spans):
    return _add_many(parts, _unbox(spans))


def _combine_boxed(combine, parts):
    return _unbox(combine)(list(parts))


def _shard_of(exc, index):
    text = str(exc)
    for key, i in index.items():
        if key in text:
            return i
    return None


def _raise(fut, index, distributed):
    try:
        fut.result()
    except distributed.KilledWorker:
        raise
    except ShardError:
        raise
    except Exception as e:  # not raised inside _run_shard (e.g. unpickling the shard)
        i = index.get(fut.key)
        raise ShardError(f"shard {i} failed on the cluster: {type(e).__name__}: {e}", i,
                         f"{type(e).__name__}: {e}") from e


def _vg_shard(payload, shard):
    f, params, has_aux = payload
    out, g = _api.value_and_grad(lambda p: f(p, shard), has_aux=has_aux)(params)
    if has_aux:
        value, aux = out
        return (value, aux, g)
    return (out, g)


def value_and_grad(f, params, shards, *, client=None, weights=None, has_aux=False,
                   progress=None):
    """Value and gradient of ``Σ_s w_s · f(params, shards[s])``, one Dask task per shard.

    Each task runs :func:`diffsci.value_and_grad` of ``p ↦ f(p, shard)`` at ``params``; the
    values and gradients (and with ``has_aux`` the auxiliary pytrees) are multiplied by the
    weights and summed by a fixed binary tree of addition tasks on the cluster (never by
    gathering every partial on the client). ``params`` (with ``f``) is scattered once per call.

    Reproducibility: for a given shard layout the result is bit-identical whatever the number
    of workers, the order tasks finish in, or a retry after a worker died, provided ``f`` is a
    pure function of ``(params, shard)`` — seed any randomness from the shard (see
    :func:`shard_seeds`), not from global state. ``client="serial"`` computes the same sum in
    this process (bit-identical on the same machine).

    Running on a real cluster: the code does not change; pass ``client=`` a Client of any Dask
    deployment — ``dask_jobqueue.SLURMCluster(...)`` (or PBS/SGE/LSF) after ``cluster.scale(n)``,
    ``dask_kubernetes``' ``KubeCluster``, or ``Client("tcp://scheduler:8786")`` — or the
    scheduler's address as a string. Workers need diffsci (and whatever ``f`` imports)
    installed; ``f`` itself travels by cloudpickle.

    Args:
        f: ``f(params, shard) -> real scalar`` (with ``has_aux``: ``(scalar, aux)``, aux a pytree
            of numbers/arrays to be summed, e.g. counts or sums of squares), differentiable by
            diffsci.
        params: a pytree of float arrays/numbers (what ``diffsci.value_and_grad`` accepts).
        shards: a sequence with one entry per task.
        client: None (the existing default client, else a LocalCluster of worker processes
            started and closed for this call), a ``distributed.Client``, a scheduler address,
            or ``"serial"``.
        weights: None (all 1) or one finite real per shard; pass ``1/len(shards)`` each for a
            mean.
        has_aux: ``f`` returns ``(value, aux)``.
        progress: tqdm bar on stderr: None after 2 s, True at once, False never.

    Returns:
        ``(value, grad)``, or ``((value, aux), grad)`` with ``has_aux``; ``grad`` has the
        structure of ``params``.

    Raises:
        ShardError: a shard's ``f`` raised (the message names the shard's index and repr and
            the cause; the worker's traceback is in ``remote_traceback``), or shards returned
            different structures.
        TypeError/ValueError: bad ``f``, ``shards``, ``weights`` or ``client``.

    Example:
        >>> import numpy as np
        >>> from diffsci import distributed
        >>> data = [np.array([1.0, 2.0]), np.array([3.0])]
        >>> value, grad = distributed.value_and_grad(lambda w, x: np.sum((w * x - 1.0) ** 2),
        ...                                          0.5, data, client="serial")
        >>> float(value), float(grad)
        (0.5, 2.0)
    """
    if not callable(f):
        raise TypeError(f"value_and_grad: f must be callable, got {type(f).__name__}")
    out = map_sum(_vg_shard, (f, params, bool(has_aux)), shards, client=client, weights=weights,
                  progress=progress, name="value_and_grad")
    if has_aux:
        value, aux, g = out
        return (value, aux), g
    return out[0], out[1]
