"""Fit the parameters of a dataclass model to noisy data with exact gradients.

The model is a frozen dataclass (a damped oscillator, y = A e^(-γt) cos(ωt + φ));
``diffsci.value_and_grad`` differentiates a least-squares loss with respect to
the whole dataclass and returns a gradient of the same dataclass type.  SciPy's
L-BFGS-B does the optimisation, fed exact gradients through
``tree_flatten``/``tree_unflatten``.
"""

import dataclasses

import matplotlib.pyplot as plt
import numpy as np
from scipy.optimize import minimize

import diffsci as ds
from examples._common import parse_args, result, save_figure


@dataclasses.dataclass(frozen=True)
class Oscillator:
    amplitude: float
    decay: float
    omega: float
    phase: float

    def __call__(self, t):
        return self.amplitude * np.exp(-self.decay * t) * np.cos(self.omega * t + self.phase)


def loss(model, t, y):
    return np.mean((model(t) - y) ** 2)


def main():
    args = parse_args()
    rng = np.random.default_rng(0)
    truth = Oscillator(amplitude=2.0, decay=0.3, omega=2.5, phase=0.4)
    t = np.linspace(0.0, 10.0, 2000 if args.full else 400)
    y = truth(t) + 0.05 * rng.standard_normal(t.size)
    start = Oscillator(amplitude=1.0, decay=0.1, omega=2.2, phase=0.0)

    g = ds.grad(loss)(start, t, y)
    print(f"gradient at the start is a {type(g).__name__}: {g}")

    leaves, treedef = ds.tree_flatten(start)
    value_and_grad = ds.value_and_grad(loss)
    history = []

    def objective(theta):
        model = ds.tree_unflatten(treedef, [float(v) for v in theta])
        value, grad = value_and_grad(model, t, y)
        history.append(float(value))
        return float(value), np.array(ds.tree_flatten(grad)[0], dtype=float)

    res = minimize(objective, np.array(leaves, float), jac=True, method="L-BFGS-B")
    fitted = ds.tree_unflatten(treedef, [float(v) for v in res.x])
    print(f"L-BFGS-B: {res.nit} iterations, {res.nfev} evaluations, loss {res.fun:.3e}")
    print(f"truth  {truth}\nfitted {fitted}")

    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 3.8))
    ax1.plot(t, y, ".", ms=2, alpha=0.5, label="data")
    ax1.plot(t, start(t), "--", label="initial guess")
    ax1.plot(t, fitted(t), label="fitted")
    ax1.set_xlabel("t (time, arbitrary units; ω in rad per unit)")
    ax1.set_ylabel("displacement y (arbitrary units)")
    ax1.legend(fontsize=10)
    ax1.set_title("damped oscillator fit")
    ax2.semilogy(history)
    ax2.set_xlabel("loss evaluation")
    ax2.set_ylabel("mean squared error (units of y²)")
    ax2.set_title("loss during L-BFGS-B")
    save_figure(fig)
    fields = ", ".join(
        f"{f.name} {getattr(fitted, f.name):.4f} (true {getattr(truth, f.name)})"
        for f in dataclasses.fields(truth)
    )
    result(f"fitted Oscillator in {res.nit} L-BFGS-B iterations: {fields}")


if __name__ == "__main__":
    main()
