import sys as _sys

from diffsci.scipy.stats import beta as _d

_sys.modules[__name__] = _d
