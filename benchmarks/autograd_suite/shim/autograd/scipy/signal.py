"""``autograd.scipy.signal`` is ``diffsci.scipy.signal``, except autograd's own ``convolve``
keywords: ``axes=``/``dot_axes=`` (convolve some axes, contract others, an outer product over
the rest), which SciPy's convolve lacks; diffsci has that operation as ``diffsci.nn.conv``."""
from diffsci.nn import conv as _conv
from diffsci.scipy import signal as _signal
from diffsci.scipy.signal import *  # noqa: F403


def convolve(A, B, axes=None, dot_axes=((), ()), mode="full"):
    if axes is None and tuple(map(tuple, dot_axes)) == ((), ()):
        return _signal.convolve(A, B, mode)
    return _conv(A, B, axes, dot_axes, mode)
