"""A PyTorch classifier with a quantum-circuit layer, trained with torch.optim.Adam.

The data: two interleaved half-moons in the plane (400 points, Gaussian noise σ = 0.15; 300 to
train, 100 held out). The model, a ``torch.nn.Sequential``: Linear(2, 4) → π·tanh (angles) →
a 4-qubit circuit layer → Linear(4, 1) (a logit). The circuit layer is a
``diffsci.interop.TorchModule`` around ``quantum.expval``: RY(angle_w) on each wire w encodes
the features, then 3 layers of trainable RY·RZ rotations and a ring of CNOTs, and the layer
returns ⟨Z_w⟩ for every wire, for the whole batch at once (θ of shape (B, P)). Its gradient
comes from quantum's adjoint method through diffsci, handed to torch.autograd by to_torch;
every parameter (the torch Linear layers and the 24 circuit angles) is trained by one
``torch.optim.Adam(lr=0.05)`` on the binary cross-entropy, full batch. Default run: 60 steps;
``--full``: 200.

The figure shows the learned decision function over the plane with the training and test
points, and the loss and accuracies over the steps. The RESULT line gives the train and test
accuracy and the loss before and after, and checks the circuit layer's parameter gradient
against torch's finite differences (torch.autograd.gradcheck on a small batch).
"""

import time

import matplotlib.pyplot as plt
import numpy as np
import torch

from diffsci.interop import TorchModule, to_torch
from examples._common import parse_args, result, save_figure
from quantum import Circuit, Z, expval

QUBITS = 4
LAYERS = 3


def moons(n, noise, rng):
    """Two interleaved half circles (the classic "moons" toy set), labels 0 and 1."""
    t = rng.uniform(0.0, np.pi, n)
    upper = rng.random(n) < 0.5
    x = np.where(upper, np.cos(t), 1.0 - np.cos(t))
    y = np.where(upper, np.sin(t), 0.5 - np.sin(t))
    pts = np.stack([x, y], axis=1) + noise * rng.standard_normal((n, 2))
    return (pts - pts.mean(0)) / pts.std(0), (~upper).astype(np.float64)


def circuit():
    c = Circuit(QUBITS)
    for w in range(QUBITS):
        c = c.ry(w)  # the encoded features: slots 0..3
    for _ in range(LAYERS):
        for w in range(QUBITS):
            c = c.ry(w).rz(w)
        for w in range(QUBITS):
            c = c.cnot(w, (w + 1) % QUBITS)
    return c


CIRCUIT = circuit()
OBS = [Z(w) for w in range(QUBITS)]


def quantum_layer(weights, angles):
    """⟨Z_w⟩ for each wire and each row of ``angles`` (B, 4); ``weights`` (LAYERS, 4, 2)."""
    b = angles.shape[0]
    theta = np.concatenate([angles, np.broadcast_to(np.reshape(weights, (1, -1)),
                                                    (b, weights.size))], axis=1)
    return expval(CIRCUIT, theta, OBS)


class Angles(torch.nn.Module):
    def forward(self, x):
        return np.pi * torch.tanh(x)


def accuracy(model, x, y):
    with torch.no_grad():
        return float(((model(x)[:, 0] > 0).double() == y).double().mean())


def main():
    args = parse_args()
    steps = 200 if args.full else 60
    torch.set_num_threads(1)  # small tensors: intra-op threads only add overhead
    rng = np.random.default_rng(0)
    pts, labels = moons(400, 0.15, rng)
    x, y = torch.tensor(pts), torch.tensor(labels)
    xtr, ytr, xte, yte = x[:300], y[:300], x[300:], y[300:]

    torch.manual_seed(0)
    qlayer = TorchModule(quantum_layer, rng.uniform(0.0, 2 * np.pi, (LAYERS, QUBITS, 2)))
    model = torch.nn.Sequential(torch.nn.Linear(2, QUBITS, dtype=torch.float64), Angles(),
                                qlayer, torch.nn.Linear(QUBITS, 1, dtype=torch.float64))

    # the circuit layer's gradients against finite differences, by torch itself
    w = qlayer.params[0].detach().clone().requires_grad_()
    a = torch.tensor(rng.uniform(-3, 3, (3, QUBITS)), requires_grad=True)
    gradcheck_ok = torch.autograd.gradcheck(to_torch(quantum_layer), (w, a))

    opt = torch.optim.Adam(model.parameters(), lr=0.05)
    lossf = torch.nn.BCEWithLogitsLoss()
    history = {"loss": [], "train": [], "test": []}
    t0 = time.perf_counter()
    for step in range(steps):
        opt.zero_grad()
        loss = lossf(model(xtr)[:, 0], ytr)
        loss.backward()
        opt.step()
        history["loss"].append(loss.item())
        history["train"].append(accuracy(model, xtr, ytr))
        history["test"].append(accuracy(model, xte, yte))
        if (step + 1) % 20 == 0:
            print(f"step {step + 1}/{steps}: loss {loss.item():.4f}, train accuracy "
                  f"{history['train'][-1]:.3f}", flush=True)
    train_s = time.perf_counter() - t0
    with torch.no_grad():
        final_loss = lossf(model(xtr)[:, 0], ytr).item()

    fig, axes = plt.subplots(1, 2, figsize=(13, 5))
    gx, gy = np.meshgrid(np.linspace(-2.6, 2.6, 60), np.linspace(-2.6, 2.6, 60))
    grid = torch.tensor(np.stack([gx.ravel(), gy.ravel()], axis=1))
    with torch.no_grad():
        prob = torch.sigmoid(model(grid)[:, 0]).numpy().reshape(gx.shape)
    ax = axes[0]
    cs = ax.contourf(gx, gy, prob, levels=20, cmap="RdBu_r", alpha=0.7)
    fig.colorbar(cs, ax=ax, label="P(class 1)")
    for data, lab, marker, name in ((pts[:300], labels[:300], "o", "train"),
                                    (pts[300:], labels[300:], "^", "test")):
        ax.scatter(data[:, 0], data[:, 1], c=lab, cmap="RdBu_r", marker=marker, s=18,
                   edgecolors="k", linewidths=0.4, label=name)
    ax.set_xlabel("feature 1 (standardised)")
    ax.set_ylabel("feature 2 (standardised)")
    ax.set_title(f"decision function after {steps} Adam steps")
    ax.legend(loc="lower right")
    ax = axes[1]
    ax.plot(history["loss"], label="training loss (BCE)")
    ax.plot(history["train"], label="train accuracy")
    ax.plot(history["test"], label="test accuracy")
    ax.set_xlabel("Adam step")
    ax.set_ylabel("loss (nats) / accuracy (fraction)")
    ax.set_title("training")
    ax.legend()
    fig.suptitle("torch model with a 4-qubit diffsci circuit layer (TorchModule over "
                 "quantum.expval)")
    fig.tight_layout()
    save_figure(fig)
    result(
        f"{steps} torch.optim.Adam steps in {train_s:.1f} s: BCE {history['loss'][0]:.3f} -> "
        f"{final_loss:.3f}, train accuracy {accuracy(model, xtr, ytr):.3f}, test accuracy "
        f"{accuracy(model, xte, yte):.3f}; circuit layer gradcheck "
        f"{'passed' if gradcheck_ok else 'FAILED'}"
    )


if __name__ == "__main__":
    main()
