import sys as _sys

from diffsci.scipy.stats import gamma as _d

_sys.modules[__name__] = _d
