"""``diffsci.scipy``: SciPy's functions, differentiable.

Submodules mirror SciPy's: :mod:`~diffsci.scipy.special`, :mod:`~diffsci.scipy.linalg`,
:mod:`~diffsci.scipy.stats` (``stats.norm``).  On plain arrays each function is
SciPy's own; on traced values it records primitives with reverse- and
forward-mode rules.
"""

from . import linalg, special, stats

__all__ = ["linalg", "special", "stats"]
