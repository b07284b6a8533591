"""Gradient specs of the counting functions, differentiable in their weights."""

import numpy as np

import diffsci.numpy as dnp

from .test_numpy_grads import Spec, positive

_X = np.array([0, 2, 2, 5, 1, 0, 3])
_A = np.linspace(-1.0, 2.0, 7)
_XY = np.array([[0.1, 0.2], [0.5, 0.9], [0.9, 0.1], [0.4, 0.4], [0.45, 0.8], [0.0, 1.0],
                [1.0, 0.0]])

SPECS = [
    Spec("bincount", lambda w: dnp.bincount(_X, weights=w, minlength=8), (positive(7),)),
    Spec("histogram", lambda w: dnp.histogram(_A, 4, weights=w)[0], (positive(7),)),
    Spec("histogram", lambda w: dnp.histogram(_A, 3, density=True, weights=w)[0],
         (positive(7),)),
    Spec("histogram2d", lambda w: dnp.histogram2d(_XY[:, 0], _XY[:, 1], 3, density=True,
                                                  weights=w)[0], (positive(7),)),
    Spec("histogramdd", lambda w: dnp.histogramdd(_XY, (2, 3), weights=w)[0], (positive(7),)),
]
