"""diffsci: differentiable programming for scientific Python.

A re-creation, over NumPy, of the ∂P system of Innes et al., "A Differentiable
Programming System to Bridge Machine Learning and Scientific Computing"
(arXiv:1907.07587, 2019).

>>> import diffsci as ds
>>> ds.grad(lambda x: x ** 3)(2.0)
12.0

Callback arguments follow one rule across the packages: where SciPy has the same function, its
order (``odeint``: ``func(y, t, *args)``, or ``func(t, y, *args)`` with ``tfirst=True``;
``solve_ivp``: ``fun(t, y, *args)``; ``quad``, ``root``, ``minimize``, ``least_squares`` and
``diffsci.optim.minimize``: ``fun(x, *args)``, with ``args`` the third positional argument);
elsewhere, time first, then the state, then the parameters, as in ``solve_ivp``
(``sde.SDE``'s ``drift(t, y, params)`` and ``diffusion(t, y, params)``). Optimisers step as
``opt.update(grads, state, params)``; losses take the parameters first (``fit``:
``loss(params, *args)``).
"""

from . import extend, fft, interop, nn, numpy, optim, scipy, testing
from ._api import (
    grad,
    hook,
    jacobian,
    jacrev,
    pullback,
    stop_gradient,
    value_and_grad,
    vjp,
)
from ._checkpoint import checkpoint, checkpointed_loop
from ._complex import wirtinger
from ._core import (
    MissingRuleError,
    Tracer,
    TracerConversionError,
    UnexpectedTracerError,
    defjvp,
    defvjp,
    primitive,
)
from ._custom import custom_vjp
from ._fit import fit
from ._forward import custom_jvp, forwarddiff, hessian, hvp, jacfwd, jvp
from ._inplace import InPlaceError
from ._jit import jit
from ._ops import logsumexp, softmax
from ._tree import register_pytree_node, tree_flatten, tree_leaves, tree_map, tree_unflatten

__version__ = "0.1.0.dev0"

__all__ = [
    "InPlaceError",
    "MissingRuleError",
    "Tracer",
    "TracerConversionError",
    "UnexpectedTracerError",
    "checkpoint",
    "checkpointed_loop",
    "custom_jvp",
    "custom_vjp",
    "defjvp",
    "defvjp",
    "extend",
    "fft",
    "fit",
    "forwarddiff",
    "grad",
    "hessian",
    "hook",
    "hvp",
    "interop",
    "jacfwd",
    "jacobian",
    "jacrev",
    "jit",
    "jvp",
    "logsumexp",
    "nn",
    "numpy",
    "optim",
    "primitive",
    "pullback",
    "register_pytree_node",
    "scipy",
    "softmax",
    "testing",
    "stop_gradient",
    "tree_flatten",
    "tree_leaves",
    "tree_map",
    "tree_unflatten",
    "value_and_grad",
    "vjp",
    "wirtinger",
]
