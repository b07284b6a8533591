"""Scale-out on Dask: value and gradient of sums over shards, on a laptop or a cluster.

``diffsci.distributed.value_and_grad(f, params, shards)`` is the value and gradient of
``Σ_s w_s · f(params, shard_s)``: one Dask task per shard runs :func:`diffsci.value_and_grad`,
and the partial values and gradients are added by a fixed binary tree of tasks on the cluster
(the client receives only the root); :func:`map_sum` is that sum for any pytree-valued ``fn``,
:func:`map_shards` the map (per-shard results in shard order, or ``combine``-d on the cluster).
Every call sends its whole task graph to the scheduler in one message. With no client, the
existing default client is used, else
a ``LocalCluster`` of worker processes is started and closed for the call; ``client=`` a
``distributed.Client`` (of a dask-jobqueue, Kubernetes or any other deployment) or a scheduler
address scales the same code out. Results are bit-identical for the same shard layout whatever
the workers, the task order or retries (fixed tree; seeds from :func:`shard_seeds`, the
counter-based generator); a task that raises gives :class:`ShardError` naming the shard.

Domain helpers, each with ``client=``: :func:`mc_price_greeks` (finance Monte Carlo price and
Greeks with standard errors pooled across shards), :func:`sde_ensemble_value_and_grad`,
:func:`expval_sweep` (quantum parameter batches and shots), :func:`multiview_value_and_grad`
(raytrace losses summed over cameras), and :class:`sharded_loss` (a loss summed over data shards
usable by ``diffsci.fit`` and ``diffsci.optim.minimize``; :func:`fit` wraps the two).

Dask is imported only when a cluster is used: ``import diffsci`` never imports it, and
``client="serial"`` runs everything in-process without it.

>>> import numpy as np
>>> from diffsci import distributed
>>> shards = [np.arange(3.0), np.arange(3.0, 5.0)]
>>> value, grad = distributed.value_and_grad(lambda w, x: np.sum(w * x), 2.0, shards,
...                                          client="serial")
>>> float(value), float(grad)
(20.0, 10.0)
"""

from ._core import (
    SERIAL,
    ShardError,
    cluster_client,
    map_shards,
    map_sum,
    shard_seeds,
    value_and_grad,
)
from ._domains import (
    expval_sweep,
    fit,
    mc_price_greeks,
    multiview_value_and_grad,
    sde_ensemble_value_and_grad,
    sharded_loss,
)

__all__ = [
    "SERIAL",
    "ShardError",
    "cluster_client",
    "expval_sweep",
    "fit",
    "map_shards",
    "map_sum",
    "mc_price_greeks",
    "multiview_value_and_grad",
    "sde_ensemble_value_and_grad",
    "shard_seeds",
    "sharded_loss",
    "value_and_grad",
]
