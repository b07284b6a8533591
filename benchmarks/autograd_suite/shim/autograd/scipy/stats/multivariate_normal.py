import sys as _sys

from diffsci.scipy.stats import multivariate_normal as _d

_sys.modules[__name__] = _d
