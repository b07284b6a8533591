"""Bridges to PyTorch and JAX: diffsci functions as torch/JAX operations, and back.

* :func:`to_torch` turns a diffsci-differentiable function of pytrees of arrays into a
  function of ``torch.Tensor``\\ s that ``torch.autograd`` differentiates (a
  ``torch.autograd.Function`` whose backward runs diffsci's pullback; ``create_graph=True``
  runs a nested one, so double backward works wherever diffsci has second derivatives).
* :class:`TorchModule` is a ``torch.nn.Module`` whose trainable parameters are a pytree
  ``params`` and whose ``forward(*inputs)`` is ``f(params, *inputs)``.
* :func:`to_jax` turns it into a JAX function (``jax.custom_vjp`` over ``jax.pure_callback``,
  or ``jax.custom_jvp`` with ``mode="fwd"``) that works under ``jax.grad``, ``jax.jit`` and
  ``jax.vmap``.
* :func:`from_torch` and :func:`from_jax` go the other way: a torch module/function or a JAX
  function becomes a diffsci primitive whose VJP runs ``torch.autograd`` / ``jax.vjp`` and
  whose JVP runs ``torch.func.jvp`` / ``jax.jvp``, to any order.

torch and jax are optional: they are imported when one of these functions is first used,
never by ``import diffsci``.

Complex numbers: PyTorch's convention is diffsci's (the cotangent of a real loss L at
z = x + iy is ∂L/∂x + i·∂L/∂y), so complex cotangents cross to torch unchanged; JAX's
cotangents are their complex conjugates, so the JAX bridges conjugate them both ways.
"""

from __future__ import annotations

__all__ = ["TorchModule", "from_jax", "from_torch", "to_jax", "to_torch"]


def __getattr__(name):
    # Lazy: the torch/JAX modules (and torch/jax themselves) load on first use.
    if name in ("to_torch", "from_torch", "TorchModule"):
        from . import _torch

        return getattr(_torch, name)
    if name in ("to_jax", "from_jax"):
        from . import _jax

        return getattr(_jax, name)
    raise AttributeError(f"module 'diffsci.interop' has no attribute {name!r}")


def __dir__():
    return sorted(list(globals()) + __all__)
