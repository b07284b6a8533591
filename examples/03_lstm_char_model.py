"""A stacked LSTM character model trained with Adam, with no AD-specific types in the model code.

The paper's deep-learning demonstration: a language model whose code is ordinary
array code (here NumPy and frozen dataclasses) and is still differentiated end to
end. The model reads one-hot characters of the opening of Dickens's "A Tale of Two
Cities" (1859, public domain), runs them through a 2-layer stacked LSTM
(``diffsci.nn.LSTM``) and a Dense readout, and predicts the next character.
``diffsci.fit(..., jit=True)`` trains it with Adam (each step compiled by ``ds.jit``; the
speed-up over eager mode is printed) on the mean next-character cross-entropy
(nats per character) over overlapping windows of the text, with truncated
backpropagation through time inside each window. The trained model then writes
a continuation of a prompt, one character at a time, carrying its LSTM state.
"""

import dataclasses
import time

import matplotlib.pyplot as plt
import numpy as np

import diffsci as ds
from diffsci import nn, optim
from examples._common import parse_args, result, save_figure

TEXT = (
    "it was the best of times, it was the worst of times, it was the age of wisdom, it was "
    "the age of foolishness, it was the epoch of belief, it was the epoch of incredulity, it "
    "was the season of light, it was the season of darkness, it was the spring of hope, it "
    "was the winter of despair, we had everything before us, we had nothing before us, we "
    "were all going direct to heaven, we were all going direct the other way - in short, the "
    "period was so far like the present period, that some of its noisiest authorities "
    "insisted on its being received, for good or for evil, in the superlative degree of "
    "comparison only. "
)


# ---------------------------------------------------------------- the model: plain NumPy
@dataclasses.dataclass(frozen=True)
class CharModel:
    """Characters in, next-character logits out: a stacked LSTM and a Dense readout."""

    lstm: nn.LSTM
    readout: nn.Dense

    @classmethod
    def init(cls, seed, vocab, hidden, layers):
        rng = np.random.default_rng(seed)
        return cls(nn.LSTM.init(rng, vocab, hidden, num_layers=layers),
                   nn.Dense.init(rng, hidden, vocab))

    def __call__(self, xs, carry=None):
        """``xs``: one-hot ``[T, B, V]``; returns logits ``[T, B, V]`` and the final carry."""
        hs, carry = self.lstm(xs, carry)
        return self.readout(hs), carry


def cross_entropy(model, xs, targets):
    """Mean next-character cross-entropy in nats; ``targets`` one-hot ``[T, B, V]``."""
    logits, _ = model(xs)
    return -np.mean(np.sum(nn.log_softmax(logits) * targets, axis=-1))


# ---------------------------------------------------------------- data and sampling
def windows(ids, length, stride, vocab):
    """Overlapping windows of ``length + 1`` characters: one-hot inputs and targets [T, B, V]."""
    starts = np.arange(0, len(ids) - length, stride)
    idx = starts[None, :] + np.arange(length + 1)[:, None]  # [T + 1, B]
    onehot = np.eye(vocab)[ids[idx]]
    return onehot[:-1], onehot[1:]


def sample(model, prompt, n, chars, temperature, rng):
    """Feed ``prompt``, then draw ``n`` characters from softmax(logits / temperature)."""
    index = {ch: k for k, ch in enumerate(chars)}
    eye = np.eye(len(chars))
    logits, carry = model(eye[[index[ch] for ch in prompt]][:, None, :])
    out = []
    for _ in range(n):
        p = nn.softmax(logits[-1, 0] / temperature)
        k = int(rng.choice(len(chars), p=p / p.sum()))
        out.append(chars[k])
        logits, carry = model(eye[[k]][:, None, :], carry)
    return "".join(out)


def main():
    args = parse_args()
    hidden, length, steps = (64, 32, 800) if args.full else (48, 24, 250)
    chars = sorted(set(TEXT))
    vocab = len(chars)
    ids = np.array([chars.index(ch) for ch in TEXT])
    xs, ys = windows(ids, length, stride=6, vocab=vocab)
    print(f"text: {len(TEXT)} characters, vocabulary {vocab}; {xs.shape[1]} windows of "
          f"{length} characters; model: 2-layer LSTM({hidden}) + Dense({hidden}, {vocab})")

    model = CharModel.init(0, vocab, hidden, layers=2)
    n_params = sum(np.size(leaf) for leaf in ds.tree_leaves(model))
    vg = ds.value_and_grad(cross_entropy)  # eager mode's time for one step, for comparison
    vg(model, xs, ys)
    t0 = time.perf_counter()
    for _ in range(2):
        vg(model, xs, ys)
    eager_ms = (time.perf_counter() - t0) / 2 * 1e3
    start = time.perf_counter()
    model, history = ds.fit(cross_entropy, model, optim.Adam(1e-2), steps=steps,
                            args=(xs, ys), jit=True)
    seconds = time.perf_counter() - start
    jit_ms = 1e3 * float(np.median(np.diff(history["time"][1:])))
    print(f"a training step: eager {eager_ms:.0f} ms, ds.jit {jit_ms:.0f} ms "
          f"({eager_ms / jit_ms:.1f}x; first step {history['time'][0]:.1f} s: trace and "
          f"compile, cached on disk for later runs)")
    loss = history["loss"]
    final = float(cross_entropy(model, xs, ys))
    print(f"{n_params} parameters; {steps} Adam steps in {seconds:.1f} s "
          f"({1e3 * seconds / steps:.0f} ms per step, forward and backward)")
    print(f"cross-entropy: {loss[0]:.3f} -> {final:.3f} nats/char (uniform: log {vocab} = "
          f"{np.log(vocab):.3f})")

    prompt = "it was the "
    text = sample(model, prompt, 120 if args.full else 80, chars, temperature=0.5,
                  rng=np.random.default_rng(0))
    print(f"sample (temperature 0.5): {prompt!r} + {text!r}")

    # probability the trained model gives to each actual next character of a line
    line = TEXT[:60]
    lx, ly = windows(np.array([chars.index(ch) for ch in line]), len(line) - 1, 1, vocab)
    probs = nn.softmax(model(lx)[0][:, 0])
    p_true = np.sum(probs * ly[:, 0], axis=-1)

    fig, (ax1, ax2) = plt.subplots(2, 1, figsize=(10, 6.5))
    ax1.plot(history["step"], loss, label="training cross-entropy")
    ax1.axhline(np.log(vocab), color="k", ls=":", label=f"uniform guess, log {vocab}")
    ax1.set_xlabel("Adam step")
    ax1.set_ylabel("nats per character")
    ax1.set_yscale("log")
    ax1.legend()
    ax1.set_title(f"2-layer LSTM({hidden}) character model, {n_params} parameters")
    ax2.bar(np.arange(len(p_true)), p_true, color="tab:green")
    ax2.set_xticks(np.arange(len(p_true)), [ch if ch != " " else "␣" for ch in line[1:]],
                   fontfamily="monospace")
    ax2.set_ylim(0, 1)
    ax2.set_ylabel("p(actual next char)")
    ax2.set_title("what the trained model predicts along the first line")
    fig.tight_layout()
    save_figure(fig)
    result(f"2-layer LSTM({hidden}), {steps} Adam steps in {seconds:.0f} s: cross-entropy "
           f"{loss[0]:.2f} -> {final:.2f} nats/char (log {vocab} = {np.log(vocab):.2f}); "
           f"sample: {prompt + text!r}")


if __name__ == "__main__":
    main()
