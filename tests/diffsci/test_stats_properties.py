"""Property sweeps over every distribution of diffsci.scipy.stats (hypothesis draws the
parameters from each spec's domain): the methods agree with each other, gradients included.

* continuous: d/dx cdf = pdf; cdf + sf = 1 and its gradient in every parameter is 0;
  exp(logpdf) = pdf, exp(logcdf) = cdf, exp(logsf) = sf; ppf inverts cdf, and
  d/ds cdf(ppf(q; s); s) = 0 (the implicit quantile derivatives);
* discrete: the pmf sums to 1 with zero gradient in the parameters; cdf(k) is the sum of
  the pmf up to k, gradient included.
"""

from __future__ import annotations

import numpy as np
import pytest

import diffsci as ds
from diffsci.scipy import stats as D

from .test_stats_dists import CONT, DISC

hyp = pytest.importorskip("hypothesis")
hst = pytest.importorskip("hypothesis.strategies")
SETTINGS = hyp.settings(max_examples=8, deadline=None, derandomize=True)


def _close(a, b, rtol=1e-9, atol=1e-12):
    np.testing.assert_allclose(a, b, rtol=rtol, atol=atol)


@pytest.mark.parametrize("spec", CONT, ids=[s.name for s in CONT])
@SETTINGS
@hyp.given(seed=hst.integers(0, 2 ** 32 - 1))
def test_continuous_methods_agree(spec, seed):
    rng = np.random.default_rng(seed)
    d = getattr(D, spec.name)
    shapes = tuple(float(s(rng, 1)[0]) for s in spec.shapes)
    loc, scale = float(rng.normal()), float(rng.uniform(0.5, 2.0))
    x = loc + scale * spec.z(rng, 3)
    params = shapes + (loc, scale)
    pdf = d.pdf(x, *params)
    _close(ds.grad(lambda x: np.sum(d.cdf(x, *params)))(x), pdf)
    _close(np.exp(d.logpdf(x, *params)), pdf)
    _close(d.cdf(x, *params) + d.sf(x, *params), 1.0, atol=1e-14)
    _close(np.exp(d.logcdf(x, *params)), d.cdf(x, *params))
    _close(np.exp(d.logsf(x, *params)), d.sf(x, *params))
    for i in range(len(params)):
        def total(p, i=i):
            ps = list(params)
            ps[i] = p
            return np.sum(d.cdf(x, *ps) + d.sf(x, *ps))
        _close(ds.grad(total)(params[i]), 0.0, atol=1e-9)
    q = rng.uniform(0.05, 0.95, 3)
    xq = d.ppf(q, *params)
    _close(d.cdf(xq, *params), q)
    _close(ds.grad(lambda q: np.sum(d.ppf(q, *params)))(q), 1 / d.pdf(xq, *params), rtol=1e-8)
    _close(d.isf(q, *params), d.ppf(1 - q, *params), rtol=1e-8, atol=1e-10)
    for i in range(len(params)):
        def roundtrip(p, i=i):
            ps = list(params)
            ps[i] = p
            return np.sum(d.cdf(d.ppf(q, *ps), *ps))
        _close(ds.grad(roundtrip)(params[i]), 0.0, atol=1e-8)


@pytest.mark.parametrize("spec", DISC, ids=[s.name for s in DISC])
@SETTINGS
@hyp.given(seed=hst.integers(0, 2 ** 32 - 1))
def test_discrete_pmf_sums_to_one_and_cdf_is_its_sum(spec, seed):
    rng = np.random.default_rng(seed)
    d = getattr(D, spec.name)
    cont = tuple(float(s(rng, 1)[0]) for s in spec.cont)
    k = np.arange(0.0, 400.0)  # far beyond the mass of every spec's parameters
    for i in range(len(cont)):
        def mass(c, i=i):
            cs = list(cont)
            cs[i] = c
            return np.sum(d.pmf(k, *spec.plain, *cs))
        _close(mass(cont[i]), 1.0, atol=1e-12)
        _close(ds.grad(mass)(cont[i]), 0.0, atol=1e-9)
    kk = float(spec.k(rng, 1)[0])
    upto = k[k <= kk]
    _close(d.cdf(kk, *spec.plain, *cont), np.sum(d.pmf(upto, *spec.plain, *cont)))
    for i in range(len(cont)):
        def cdf(c, i=i):
            cs = list(cont)
            cs[i] = c
            return d.cdf(kk, *spec.plain, *cs)

        def partial(c, i=i):
            cs = list(cont)
            cs[i] = c
            return np.sum(d.pmf(upto, *spec.plain, *cs))
        _close(ds.grad(cdf)(cont[i]), ds.grad(partial)(cont[i]), rtol=1e-8, atol=1e-11)
