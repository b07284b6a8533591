"""The paper's variational quantum eigensolver: the 4-site periodic Heisenberg antiferromagnet.

H = Σ_i (X_i X_{i+1} + Y_i Y_{i+1} + Z_i Z_{i+1}) with i+1 taken mod 4 (Pauli operators), whose
ground energy is exactly -8, i.e. -2 per site. The ansatz is the paper's 2-layer hardware-efficient
circuit: rotor sets Rz·Rx·Rz on every qubit (the first set without the leading Rz, the last without
the trailing Rz) separated by two CNOT rings, 28 angles in all. From random angles, Adam(0.1) runs
200 steps on ⟨H⟩, with gradients by the adjoint method (one forward pass and one backward sweep per
step) through ``diffsci.fit``. The figure shows the energy per site against the step, with the
exact value dashed. Random starts can end in a local minimum (seed 1 stops at -1.704 per site), so
the run also repeats the fit from 10 other random starts and reports how many reach -2.
"""

import time

import matplotlib.pyplot as plt
import numpy as np

import diffsci as ds
from examples._common import parse_args, result, save_figure
from quantum import expval, hardware_efficient, heisenberg

N_SITES = 4
EXACT_PER_SITE = -2.0
SEED = 7
SWEEP_SEEDS = range(100, 110)


def main():
    args = parse_args()
    steps = 1000 if args.full else 200
    H = heisenberg(N_SITES, periodic=True)
    circuit = hardware_efficient(N_SITES, layers=2)
    print(circuit)
    theta0 = np.random.default_rng(SEED).uniform(0.0, 2 * np.pi, circuit.n_params)

    def energy_per_site(theta):
        return expval(circuit, theta, H) / N_SITES

    def run(theta0):
        theta, history = ds.fit(energy_per_site, theta0, optimizer=ds.optim.Adam(0.1),
                                steps=steps, progress=False)
        energies = np.append(history["loss"], energy_per_site(theta))
        within = np.flatnonzero(energies - EXACT_PER_SITE < 1e-3)
        return energies, int(within[0]) if within.size else None

    start = time.perf_counter()
    energies, first = run(theta0)
    seconds = time.perf_counter() - start
    gap = energies - EXACT_PER_SITE
    sweep = [run(np.random.default_rng(s).uniform(0.0, 2 * np.pi, circuit.n_params))
             for s in SWEEP_SEEDS]
    hits = sorted(f for _, f in sweep if f is not None)
    for s, (e, f) in zip(SWEEP_SEEDS, sweep):
        print(f"seed {s}: final E/site = {e[-1]: .8f}, within 1e-3 from step {f}")
    for s in (0, 10, 20, 40, 60, 100, steps):
        print(f"step {s:4d}: E/site = {energies[s]: .10f}")

    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 3.8))
    for e, _ in sweep:
        ax1.plot(e, color="0.8", lw=0.8)
    ax1.plot(energies, label=f"VQE ⟨H⟩ / site (seed {SEED}; grey: other starts)")
    ax1.axhline(EXACT_PER_SITE, color="k", ls="--", label="exact −2")
    ax1.set_xlabel("Adam step")
    ax1.set_ylabel("energy per site (units of J)")
    ax1.set_title("4-site periodic Heisenberg AF, 2-layer HEA")
    ax1.legend(fontsize=10)
    ax2.semilogy(np.maximum(gap, 1e-16))
    ax2.axhline(1e-3, color="gray", ls=":")
    ax2.set_xlabel("Adam step")
    ax2.set_ylabel("E/site − (−2) (units of J)")
    ax2.set_title("distance to the exact ground energy")
    save_figure(fig)
    result(
        f"VQE E/site = {energies[-1]:.8f} after {steps} Adam(0.1) steps (exact -2.0; "
        f"within 1e-3 from step {first}); {steps} value+gradient evaluations in {seconds:.2f} s; "
        f"{len(hits)}/{len(sweep)} other random starts reach it "
        f"(median step {int(np.median(hits)) if hits else None})"
    )


if __name__ == "__main__":
    main()
