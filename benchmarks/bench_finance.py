"""finance benchmarks: Monte Carlo adjoint cost, path throughput, calibration, key-rate durations.

1. GBM Monte Carlo (European, arithmetic Asian): time of the price alone and of price + all six
   first-order Greeks by reverse-mode AD (``ds.value_and_grad`` through the fused path+adjoint
   kernel), their ratio (target ≤ 2×; Giles & Glasserman), and path-steps per second, on one and
   two Numba threads; beside plain vectorised NumPy (price only) and QuantLib's MCEuropeanEngine
   (pseudo-random, Euler steps, price only) when QuantLib is installed.
   Heston full truncation likewise (Numba kernel with its hand-written reverse sweep: price alone
   vs price + all ten Greeks), beside QuantLib's MCEuropeanHestonEngine.
2. Heston calibration to 25 and 100 implied-vol quotes: L-BFGS-B (exact AD gradient vs SciPy's
   finite differences) and Levenberg–Marquardt (exact AD Jacobian from one reverse sweep vs
   forward-difference Jacobians): time, iterations, evaluations; QuantLib's HestonModel
   calibration (Levenberg–Marquardt, AnalyticHestonEngine) in the same run when installed.
3. Key-rate durations of the paper's 12 par bonds: nested AD (one reverse sweep through the
   bootstrap) vs bump-and-rebootstrap central differences.
4. Implied volatility: quotes inverted per second (batched solver).
5. American put on a CRR tree: price (Numba kernel), and price + all 13 Greeks of
   ``finance.TREE_GREEKS`` (``finance.tree_greeks``: exercise decisions and one path-weight
   sweep), medians of interleaved runs and their ratio, with QuantLib's BinomialVanillaEngine
   (NPV, Δ, Γ) in the same rounds when installed; the AD route through the NumPy tree once.
   (Section 1 also times Heston Monte Carlo, price only.)

Usage: ``python benchmarks/bench_finance.py [--quick] [--no-peers] [--tree]`` (``--tree``: only
section 5). Timings are medians over repeats after a warm-up call (which also compiles the Numba
kernels); the Monte Carlo price and price + Greeks are timed alternately, round by round, and the
minimum kept (the machine is shared).
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"
os.environ.setdefault("NUMBA_NUM_THREADS", "2")

import argparse  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402

import numba  # noqa: E402
import numpy as np  # noqa: E402

import diffsci as ds  # noqa: E402
import finance  # noqa: E402

KW = dict(spot=100.0, strike=100.0, expiry=1.0, rate=0.05, dividend=0.0, vol=0.2)
ARGS = ("spot", "strike", "expiry", "rate", "dividend", "vol")


def timed(fn, repeats):
    fn()  # warm-up (compiles)
    ts = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts)


def interleaved(f, g, repeats):
    """Minimum times of f and g, alternated round by round (fair under a shared machine's load)."""
    f(), g()
    tf, tg = [], []
    for _ in range(repeats):
        for fn, ts in ((f, tf), (g, tg)):
            t0 = time.perf_counter()
            fn()
            ts.append(time.perf_counter() - t0)
    return min(tf), min(tg)


def mc_rows(quick, peers):
    paths, steps = (20_000, 50) if quick else (200_000, 100)
    repeats = 3 if quick else 5
    rows = []
    for product in (finance.Product.EUROPEAN, finance.Product.ASIAN):
        for threads in (1, 2):
            if threads > numba.config.NUMBA_NUM_THREADS:
                continue
            numba.set_num_threads(threads)

            def price(*xs, product=product):
                return finance.mc_price(**dict(zip(ARGS, xs)), product=product, n_paths=paths,
                                        n_steps=steps, seed=1).price

            xs = tuple(KW[a] for a in ARGS)
            vg = ds.value_and_grad(price, argnums=tuple(range(6)))
            t_price, t_greeks = interleaved(lambda: price(*xs), lambda: vg(*xs), repeats)
            rows.append((f"GBM {product.name.lower()}", f"diffsci (Numba, {threads} thr)",
                         paths, steps, t_price, t_greeks, paths * steps / t_price))
    numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)

    def numpy_price():
        rng = np.random.default_rng(0)
        dt = KW["expiry"] / steps
        logs = np.zeros(paths)
        for _ in range(steps):
            logs += (KW["rate"] - 0.5 * KW["vol"] ** 2) * dt + KW["vol"] * np.sqrt(dt) * \
                rng.standard_normal(paths)
        return np.exp(-KW["rate"]) * np.maximum(100 * np.exp(logs) - 100, 0).mean()

    t = timed(numpy_price, repeats)
    rows.append(("GBM european", "plain NumPy (1 thr)", paths, steps, t, None, paths * steps / t))
    hp = finance.HestonParams(kappa=2.0, theta=0.04, sigma=0.3, rho=-0.7, v0=0.04)
    hx = (100.0, 100.0, 1.0, 0.05, 0.0, hp.kappa, hp.theta, hp.sigma, hp.rho, hp.v0)
    for threads in (1, 2):
        if threads > numba.config.NUMBA_NUM_THREADS:
            continue
        numba.set_num_threads(threads)

        def heston(s, k, t, r, q, kappa, theta, sigma, rho, v0):
            p = finance.HestonParams(kappa=kappa, theta=theta, sigma=sigma, rho=rho, v0=v0)
            return finance.heston_mc_price(spot=s, strike=k, expiry=t, rate=r, dividend=q,
                                           params=p, scheme=finance.HestonScheme.FULL_TRUNCATION,
                                           n_paths=paths, n_steps=steps, seed=1).price

        hvg = ds.value_and_grad(heston, argnums=tuple(range(10)))
        t_price, t_greeks = interleaved(lambda: heston(*hx), lambda: hvg(*hx), repeats)
        rows.append(("Heston FT", f"diffsci (Numba, {threads} thr)", paths, steps, t_price,
                     t_greeks, paths * steps / t_price))
    numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
    t = timed(lambda: finance.heston_mc_price(
        spot=100.0, strike=100.0, expiry=1.0, rate=0.05, params=hp, scheme=finance.HestonScheme.QE,
        n_paths=paths, n_steps=steps, seed=1), 1 if not quick else 2)
    rows.append(("Heston QE", "diffsci (NumPy, 1 thr)", paths, steps, t, None, paths * steps / t))
    if peers:
        try:
            import QuantLib as ql
        except ImportError:
            ql = None
        if ql is not None:
            today = ql.Date(15, 1, 2025)
            ql.Settings.instance().evaluationDate = today
            dc = ql.Actual365Fixed()
            proc = ql.BlackScholesMertonProcess(
                ql.QuoteHandle(ql.SimpleQuote(100.0)),
                ql.YieldTermStructureHandle(ql.FlatForward(today, 0.0, dc)),
                ql.YieldTermStructureHandle(ql.FlatForward(today, 0.05, dc)),
                ql.BlackVolTermStructureHandle(ql.BlackConstantVol(today, ql.NullCalendar(), 0.2,
                                                                   dc)))
            opt = ql.VanillaOption(ql.PlainVanillaPayoff(ql.Option.Call, 100.0),
                                   ql.EuropeanExercise(today + 365))
            ql_paths = paths // 10 if not quick else paths // 4

            def ql_price():
                opt.setPricingEngine(ql.MCEuropeanEngine(proc, "PseudoRandom", timeSteps=steps,
                                                         requiredSamples=ql_paths, seed=42))
                return opt.NPV()

            t = timed(ql_price, 1)
            rows.append(("GBM european", "QuantLib MCEuropeanEngine", ql_paths, steps, t, None,
                         ql_paths * steps / t))
            hproc = ql.HestonProcess(
                ql.YieldTermStructureHandle(ql.FlatForward(today, 0.05, dc)),
                ql.YieldTermStructureHandle(ql.FlatForward(today, 0.0, dc)),
                ql.QuoteHandle(ql.SimpleQuote(100.0)), hp.v0, hp.kappa, hp.theta, hp.sigma,
                hp.rho)

            def ql_heston():
                opt.setPricingEngine(ql.MCEuropeanHestonEngine(
                    hproc, "PseudoRandom", timeSteps=steps, requiredSamples=ql_paths, seed=42))
                return opt.NPV()

            t = timed(ql_heston, 1)
            rows.append(("Heston", "QuantLib MCEuropeanHestonEngine", ql_paths, steps, t, None,
                         ql_paths * steps / t))
        else:
            rows.append(("GBM european", "QuantLib: not installed", None, None, None, None, None))
    return rows


def surface(n_side):
    """An n_side × n_side quote grid (25 or 100 quotes) from the reference Heston parameters."""
    if n_side == 5:
        K = np.array([80.0, 90.0, 100.0, 110.0, 120.0])
        T = np.array([0.25, 0.5, 1.0, 2.0, 3.0])[:, None]
    else:
        K = np.linspace(70.0, 130.0, n_side)
        T = np.array([0.1, 0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0, 4.0, 5.0])[:, None]
    iv = finance.implied_vol(price=finance.heston_price(spot=100.0, strike=K, expiry=T, rate=0.03,
                                                        dividend=0.01, params=CAL_TRUE),
                             spot=100.0, strike=K, expiry=T, rate=0.03, dividend=0.01)
    return K, T, iv


CAL_TRUE = finance.HestonParams(kappa=1.5, theta=0.05, sigma=0.5, rho=-0.6, v0=0.03)


def calibration_rows(peers, n_side=5, repeats=3):
    true = CAL_TRUE
    x0 = finance.HestonParams(kappa=2.0, theta=0.04, sigma=0.3, rho=-0.3, v0=0.04)
    K, T, iv = surface(n_side)
    rows = []
    for method, label in ((finance.CalibrationMethod.LBFGSB, "L-BFGS-B"),
                          (finance.CalibrationMethod.LEVENBERG_MARQUARDT, "Lev.-Marquardt")):
        for g in finance.Gradient:
            r = min((finance.calibrate_heston(spot=100.0, strikes=K, expiries=T, implied_vols=iv,
                                              rate=0.03, dividend=0.01, x0=x0, gradient=g,
                                              method=method)
                     for _ in range(repeats)), key=lambda r: r.seconds)
            err = max(abs(getattr(r.params, f) - getattr(true, f))
                      for f in ("kappa", "theta", "sigma", "rho", "v0"))
            what = "gradient" if method is finance.CalibrationMethod.LBFGSB else "Jacobian"
            rows.append((f"diffsci {label}, {g.name.replace('FINITE_DIFFERENCE', 'FD')} {what}",
                         r.seconds, r.nit, r.nfev, err))
    if peers:
        try:
            import QuantLib as ql
        except ImportError:
            return rows + [("QuantLib: not installed", None, None, None, None)]
        today = ql.Date(15, 1, 2025)
        ql.Settings.instance().evaluationDate = today
        dc = ql.Actual365Fixed()
        rts = ql.YieldTermStructureHandle(ql.FlatForward(today, 0.03, dc))
        dts = ql.YieldTermStructureHandle(ql.FlatForward(today, 0.01, dc))
        spot = ql.QuoteHandle(ql.SimpleQuote(100.0))

        def ql_fit():
            proc = ql.HestonProcess(rts, dts, spot, x0.v0, x0.kappa, x0.theta, x0.sigma, x0.rho)
            model = ql.HestonModel(proc)
            engine = ql.AnalyticHestonEngine(model)
            helpers = []
            for j, t in enumerate(T[:, 0]):
                for i, k in enumerate(K):
                    h = ql.HestonModelHelper(ql.Period(int(round(t * 365)), ql.Days),
                                             ql.NullCalendar(), 100.0, float(k),
                                             ql.QuoteHandle(ql.SimpleQuote(float(iv[j, i]))),
                                             rts, dts)
                    h.setPricingEngine(engine)
                    helpers.append(h)
            model.calibrate(helpers, ql.LevenbergMarquardt(1e-8, 1e-8, 1e-8),
                            ql.EndCriteria(500, 50, 1e-10, 1e-10, 1e-10))
            return model.params()

        ts = []
        for _ in range(repeats):
            t0 = time.perf_counter()
            p = ql_fit()
            ts.append(time.perf_counter() - t0)
        t = min(ts)
        # QuantLib's params(): theta, kappa, sigma, rho, v0
        fitted = dict(theta=p[0], kappa=p[1], sigma=p[2], rho=p[3], v0=p[4])
        err = max(abs(fitted[f] - getattr(true, f)) for f in fitted)
        rows.append(("QuantLib HestonModel (LM, analytic engine)", t, None, None, err))
    return rows


def krd_rows():
    m, y = finance.PAPER_MATURITIES, finance.PAPER_PAR_RATES

    def ad():
        return finance.key_rate_durations(maturities=m, par_rates=y, bond_maturities=m,
                                          bond_coupons=y)

    def fd():
        h = 1e-6

        def price(r):
            return finance.bond_price(finance.bootstrap(maturities=m, par_rates=r),
                                      maturities=m, coupons=y)

        return [(price(y + h * e) - price(y - h * e)) / (2 * h) for e in np.eye(m.size)]

    return [("nested AD (jacrev through the Newton bootstrap)", timed(ad, 3)),
            ("bump-and-rebootstrap central differences", timed(fd, 3)),
            ("one bootstrap + pricing (no derivatives)",
             timed(lambda: finance.bond_price(finance.bootstrap(maturities=m, par_rates=y),
                                              maturities=m, coupons=y), 3))]


def iv_rows(quick):
    n = 10_000 if quick else 100_000
    rng = np.random.default_rng(0)
    K = 100 * np.exp(rng.uniform(-0.5, 0.5, n))
    T = rng.uniform(0.05, 5, n)
    vol = rng.uniform(0.05, 1.0, n)
    p = finance.bsm_price(spot=100.0, strike=K, expiry=T, rate=0.02, vol=vol, is_call=K >= 100)
    t = timed(lambda: finance.implied_vol(price=p, spot=100.0, strike=K, expiry=T, rate=0.02,
                                          is_call=K >= 100), 3)
    got = finance.implied_vol(price=p, spot=100.0, strike=K, expiry=T, rate=0.02,
                              is_call=K >= 100)
    return n, t, float(np.abs(got - vol).max())


def american_rows(quick, peers):
    """American put S = K = 100, r = 5%, σ = 20%, T = 1 on a 1000-step CRR tree.

    The price (Numba kernel) and price + every Greek of :data:`finance.TREE_GREEKS` (the
    path-weight sweep, ``finance.tree_greeks``) are timed in turn, round by round, and the medians
    kept; then, when installed, QuantLib's BinomialVanillaEngine (CRR, NPV with its lattice Δ and
    Γ) interleaved with the price the same way (its ratio to the price is the peer column);
    beside them the previous route, AD through the NumPy tree (reverse and forward-over-reverse,
    on traced inputs), timed once.
    """
    n = 200 if quick else 1000
    repeats = 5 if quick else 31
    kw = dict(spot=100.0, strike=100.0, expiry=1.0, rate=0.05, vol=0.2)
    ql_fn = _quantlib_crr(n) if peers else None
    rows = []
    for smooth in (False, True):
        def price(smooth=smooth):
            return finance.tree_price(**kw, n_steps=n, smooth=smooth)

        def every(smooth=smooth):
            return finance.tree_greeks(**kw, n_steps=n, smooth=smooth)

        t_price, t_greeks = interleaved_medians(repeats, price, every)
        label = "BBS last step" if smooth else "plain CRR"
        rows.append((f"diffsci tree ({label}), price", t_price, float(price())))
        rows.append((f"diffsci tree ({label}), price + {len(finance.TREE_GREEKS) - 1} Greeks "
                     f"(path-weight sweep)", t_greeks, None))
        rows.append((f"  ratio (price + Greeks) / price: {t_greeks / t_price:.2f}", None, None))
        if ql_fn is not None and not smooth:
            # a separate pairing: a 20 ms QuantLib call between the two above would leave the
            # next one cold and bias their ratio
            t_p, t_ql = interleaved_medians(repeats, price, ql_fn)
            rows.append((f"  QuantLib BinomialVanillaEngine crr (NPV, Δ, Γ): {t_ql / t_p:.1f}× "
                         f"the price in its rounds", t_ql, ql_fn()[0]))
    if peers and ql_fn is None:
        rows.append(("QuantLib: not installed", None, None))

    def ad():
        def f(s, v, t, r):
            return finance.tree_price(spot=s, strike=100.0, expiry=t, rate=r, vol=v, n_steps=n,
                                      smooth=False)

        x = (np.float64(100.0), np.float64(0.2), np.float64(1.0), np.float64(0.05))
        ds.grad(f, argnums=(0, 1, 2, 3))(*x)
        ds.jvp(lambda s, v: ds.grad(f, argnums=(0, 1))(s, v, x[2], x[3]), (x[0], x[1]),
               (np.float64(1.0), np.float64(0.0)))
        ds.jvp(lambda s, v: ds.grad(f, argnums=(0, 1))(s, v, x[2], x[3]), (x[0], x[1]),
               (np.float64(0.0), np.float64(1.0)))

    t0 = time.perf_counter()
    ad()
    rows.append(("AD through the NumPy tree (plain CRR; 8 Greeks, once)",
                 time.perf_counter() - t0, None))
    return rows


def _quantlib_crr(n):
    """QuantLib's CRR American put (NPV, Δ, Γ from its lattice) as a callable, or None."""
    try:
        import QuantLib as ql
    except ImportError:
        return None
    today = ql.Date(15, 1, 2025)
    ql.Settings.instance().evaluationDate = today
    dc = ql.Actual365Fixed()
    proc = ql.BlackScholesMertonProcess(
        ql.QuoteHandle(ql.SimpleQuote(100.0)),
        ql.YieldTermStructureHandle(ql.FlatForward(today, 0.0, dc)),
        ql.YieldTermStructureHandle(ql.FlatForward(today, 0.05, dc)),
        ql.BlackVolTermStructureHandle(ql.BlackConstantVol(today, ql.NullCalendar(), 0.2, dc)))
    opt = ql.VanillaOption(ql.PlainVanillaPayoff(ql.Option.Put, 100.0),
                           ql.AmericanExercise(today, today + 365))

    def run():
        opt.setPricingEngine(ql.BinomialVanillaEngine(proc, "crr", n))
        return opt.NPV(), opt.delta(), opt.gamma()

    return run


def interleaved_medians(repeats, *fns):
    """Median times of ``fns``, run in turn round by round (all warmed up first)."""
    for fn in fns:
        fn()
    ts = [[] for _ in fns]
    for _ in range(repeats):
        for fn, t in zip(fns, ts):
            t0 = time.perf_counter()
            fn()
            t.append(time.perf_counter() - t0)
    return tuple(statistics.median(t) for t in ts)


def _sections_1_to_4(args, peers):
    print("1. Monte Carlo: price alone vs price + all Greeks by reverse-mode AD (pathwise adjoint "
          "kernels; GBM 6 Greeks, Heston FT 10)")
    print(f"{'product':14} {'implementation':32} {'paths':>8} {'steps':>5} {'price s':>9} "
          f"{'+Greeks s':>9} {'ratio':>6} {'Mpath-steps/s':>13}")
    for prod, impl, paths, steps, tp, tg, rate in mc_rows(args.quick, peers):
        if tp is None:
            print(f"{prod:14} {impl:32}")
            continue
        ratio = f"{tg / tp:6.2f}" if tg else f"{'-':>6}"
        tgs = f"{tg:9.4f}" if tg else f"{'-':>9}"
        print(f"{prod:14} {impl:32} {paths:8d} {steps:5d} {tp:9.4f} {tgs} {ratio} "
              f"{rate / 1e6:13.1f}")

    for n_side in (5,) if args.quick else (5, 10):
        print(f"\n2. Heston calibration to {n_side * n_side} implied-vol quotes (best of "
              f"{1 if args.quick else 3}; LM iterations = Jacobian evaluations)")
        print(f"{'method':46} {'seconds':>8} {'iter':>5} {'evals':>6} {'max |param err|':>16}")
        for name, t, nit, nfev, err in calibration_rows(peers, n_side, 1 if args.quick else 3):
            if t is None:
                print(name)
                continue
            print(f"{name:46} {t:8.3f} {nit if nit is not None else '-':>5} "
                  f"{nfev if nfev is not None else '-':>6} {err:16.1e}")

    print("\n3. Key-rate durations of the paper's 12 par bonds")
    for name, t in krd_rows():
        print(f"{name:50} {1e3 * t:9.2f} ms")

    n, t, err = iv_rows(args.quick)
    print(f"\n4. Implied vol: {n} random quotes in {t:.3f} s ({n / t / 1e3:.0f} k quotes/s), "
          f"max |σ error| {err:.1e}")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes (a smoke test)")
    parser.add_argument("--no-peers", action="store_true", help="skip QuantLib")
    parser.add_argument("--tree", action="store_true", help="section 5 (the CRR tree) only")
    args = parser.parse_args(argv)
    peers = not args.no_peers
    if not args.tree:
        _sections_1_to_4(args, peers)
    print("\n5. American put S = K = 100 on a CRR tree "
          f"({200 if args.quick else 1000} steps; plain CRR 1000 steps = QuantLib's 6.0896, "
          "converged value 6.0904; medians of interleaved runs)")
    for name, t, v in american_rows(args.quick, peers):
        if t is None:
            print(name)
            continue
        print(f"{name:62} {1e3 * t:9.2f} ms" + (f"  price {v:.4f}" if v is not None else ""))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
