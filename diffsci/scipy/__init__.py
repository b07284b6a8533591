"""``diffsci.scipy``: SciPy's functions, differentiable.

Submodules mirror SciPy's: :mod:`~diffsci.scipy.special`, :mod:`~diffsci.scipy.linalg`,
:mod:`~diffsci.scipy.stats` (``stats.norm``), :mod:`~diffsci.scipy.integrate`
(``odeint``) and :mod:`~diffsci.scipy.optimize` (implicit-function-theorem
gradients).  On plain arrays each function is SciPy's own (or computes the same
values); on traced values it records primitives with reverse- and forward-mode rules.
"""

from . import integrate, linalg, optimize, special, stats

__all__ = ["integrate", "linalg", "optimize", "special", "stats"]
from . import interpolate, signal  # noqa: E402, I001
__all__ += ["interpolate", "signal"]
