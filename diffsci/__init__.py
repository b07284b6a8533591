"""diffsci: differentiable programming for scientific Python.

A re-creation, over NumPy, of the ∂P system of Innes et al., "A Differentiable
Programming System to Bridge Machine Learning and Scientific Computing"
(arXiv:1907.07587, 2019).

>>> import diffsci as ds
>>> ds.grad(lambda x: x ** 3)(2.0)
12.0
"""

from . import extend, numpy
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
from ._core import MissingRuleError, Tracer, defjvp, defvjp, primitive
from ._custom import custom_vjp
from ._forward import custom_jvp, forwarddiff, hessian, hvp, jacfwd, jvp
from ._ops import logsumexp, softmax
from ._tree import register_pytree_node, tree_flatten, tree_leaves, tree_map, tree_unflatten

__version__ = "0.1.0.dev0"

__all__ = [
    "MissingRuleError",
    "Tracer",
    "custom_jvp",
    "custom_vjp",
    "defjvp",
    "defvjp",
    "extend",
    "forwarddiff",
    "grad",
    "hessian",
    "hook",
    "hvp",
    "jacfwd",
    "jacobian",
    "jacrev",
    "jvp",
    "logsumexp",
    "numpy",
    "primitive",
    "pullback",
    "register_pytree_node",
    "softmax",
    "stop_gradient",
    "tree_flatten",
    "tree_leaves",
    "tree_map",
    "tree_unflatten",
    "value_and_grad",
    "vjp",
]
