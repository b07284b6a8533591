"""``import diffsci.numpy as dnp``: NumPy's names, differentiable.

Every function here behaves exactly like its NumPy namesake on plain arrays and
records itself when given traced values.  Plain ``import numpy as np`` code
works too: traced values implement ``__array_ufunc__`` and
``__array_function__`` and dispatch to the functions of this namespace.
Non-differentiable functions (comparisons, ``floor``, ``argmax`` ...) accept
traced values and return plain results.
"""

import numpy as _np
from numpy import (  # noqa: F401  constants and dtypes are shared with NumPy  # noqa: F401  the rest of NumPy's dtypes, scalar types and type queries
    bool_,
    byte,
    bytes_,
    cdouble,
    character,
    clongdouble,
    complex64,
    complex128,
    complexfloating,
    csingle,
    double,
    dtype,
    e,
    errstate,
    euler_gamma,
    finfo,
    flexible,
    float16,
    float32,
    float64,
    floating,
    generic,
    half,
    iinfo,
    inexact,
    inf,
    int8,
    int16,
    int32,
    int64,
    int_,
    intc,
    integer,
    intp,
    long,
    longdouble,
    longlong,
    nan,
    ndarray,
    newaxis,
    number,
    object_,
    pi,
    short,
    signedinteger,
    single,
    str_,
    ubyte,
    uint,
    uint8,
    uint16,
    uint32,
    uint64,
    uintc,
    uintp,
    ulong,
    ulonglong,
    unsignedinteger,
    ushort,
    void,
)

from .._inplace import buffer_like as _buffer_like
from . import (  # noqa: F401  _jvps, _vjps register the rules; linalg is a submodule
    _jvps,
    _vjps,
    linalg,
)
from ._composite import *  # noqa: F403
from ._more import *  # noqa: F403  more of NumPy (composites)
from ._more import listable as _listable
from ._out import wrap_namespace as _wrap_out
from ._tracer_methods import install as _install
from ._tracer_methods import register_numpy_function  # noqa: F401
from ._wrap import *  # noqa: F403
from ._wrap import _nd

globals().update(_nd)
row_stack = vstack  # noqa: F405  NumPy's (deprecated) alias

# Buffers made from traced arrays are traced constants, so in-place writes can fill them.
zeros_like = _buffer_like(_np.zeros_like)
ones_like = _buffer_like(_np.ones_like)
empty_like = _buffer_like(_np.empty_like)

from .. import fft  # noqa: E402, F401  np.fft dispatch is built from it
from ._extra import fromfunction, vectorize  # noqa: E402, F401
from ._more import (  # noqa: E402, F401  NumPy's in-place writers, into traced arrays
    copyto,
    fill_diagonal,
    place,
    put,
    put_along_axis,
    putmask,
)
from ._sets import *  # noqa: E402, F401, F403  unique, set operations, bin edges, nextafter
from ._views import diag, diagonal  # noqa: E402, F401  read-only views, as NumPy's
from ._weighted import bincount, histogram, histogram2d, histogramdd  # noqa: E402, F401

# out= (by keyword or position) and where= of the functions that are not ufuncs.
_wrap_out(globals())
_install(__import__(__name__, fromlist=["*"]))
del _install
# Called as dnp.<name>, these primitives also take lists of traced values (mean([x, y])).
# Set after _install: operators, methods and np.<name> dispatch keep the bare primitives.
_listable(globals())
