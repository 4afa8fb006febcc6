"""Many simulated runs of one design at once (:func:`simulate_design`, :class:`DesignRuns`)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from activetest.stats import _adaptive_kernels as ak
from activetest.stats.adaptive.design import AdaptiveDesign
from activetest.stats.estimators import (
    adaptive_lure_curve,
)
from activetest.stats.validate import as_vector, check_budget, is_whole, rng_of

__all__ = [
    "DesignRuns",
    "simulate_design",
]


@dataclass
class DesignRuns:
    """R simulated sequential runs of one design.

    Attributes:
        indices, q, control, control_rest, lam: ``(R, M)`` per draw.
        refits: ``(R,)`` refits per run.
        model_var: ``(R, M)`` ``N^2 Var(theta_m | past)`` as the design's model
            predicts it (NaN before a learnt design's first fit); None unless asked
            for (``simulate_design(..., model_var=True)``).
        control2, control_rest2, model_var2: the same for the second metric of a
            two-metric design (None otherwise; ``model_var2`` only when asked for).
        losses: the losses the design serves, in that order.
    """

    indices: np.ndarray
    q: np.ndarray
    control: np.ndarray
    control_rest: np.ndarray
    lam: np.ndarray
    refits: np.ndarray
    model_var: np.ndarray | None = None
    control2: np.ndarray | None = None
    control_rest2: np.ndarray | None = None
    model_var2: np.ndarray | None = None
    losses: tuple[str, ...] = ()

    def controls(self, loss: str | None = None
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
        """``(g, G, V)`` of one of the design's losses (default the first), ``(R, M)`` each."""
        if loss is None or not self.losses or loss == self.losses[0]:
            return self.control, self.control_rest, self.model_var
        if loss not in self.losses or self.control2 is None or self.control_rest2 is None:
            raise ValueError(f"the design serves {', '.join(self.losses)}, not {loss!r}")
        return self.control2, self.control_rest2, self.model_var2

    def curve(self, losses: np.ndarray, *, use_control: bool = True,
              loss: str | None = None) -> np.ndarray:
        """``(R, M)`` adaptive-LURE estimates after every label (``use_control=False``:
        the same draws with g = 0); ``loss``: whose control (a two-metric design's
        second loss; ``losses`` must then be that loss per item)."""
        L = np.asarray(losses, dtype=np.float64)[self.indices]
        n = int(np.asarray(losses).shape[0])
        if use_control:
            g, G, _ = self.controls(loss)
            return adaptive_lure_curve(L, self.q, n, g, G)
        return adaptive_lure_curve(L, self.q, n)

def simulate_design(design: AdaptiveDesign, *, losses: np.ndarray,
                    labels: np.ndarray | None, budget: int, n_runs: int,
                    random_state: int | np.random.Generator | None = 0,
                    model_var: bool = False) -> DesignRuns:
    """R independent sequential runs of ``design`` on a pool whose labels are known.

    Args:
        losses: ``(N,)`` the target's true per-item loss (what each label reveals).
        labels: ``(N,)`` true classes (needed by the calibrated design; else may be None).
        random_state: seed or Generator; the uniforms are drawn up front as an
            ``(R, M)`` array, row r for run r (as :func:`activetest.stats.sample` does).
        model_var: also record the design's variance prediction per draw
            (:attr:`DesignRuns.model_var`, for intervals); it costs one more pass over
            the pool per draw (up to 2x for the fixed designs), so studies of the
            error alone leave it off. The draws are the same either way.
    """
    n = design.n
    budget = check_budget(budget, n)
    L = as_vector(losses, "losses", n)
    if labels is None:
        if design.kind in (ak.KIND_LOGIT, ak.KIND_BOTH):
            raise ValueError("the calibrated design needs the labels")
        y = np.zeros(n, dtype=np.int64)
    else:
        y = np.asarray(labels, dtype=np.int64)
        if y.shape != (n,):
            raise ValueError(f"labels must have shape ({n},), got {y.shape}")
    if not is_whole(n_runs) or n_runs < 1:  # type: ignore[operator]
        raise ValueError(f"n_runs must be a positive integer, got {n_runs!r}")
    rng = rng_of(random_state)
    U = rng.random((int(n_runs), budget))
    R = int(n_runs)
    out = DesignRuns(np.empty((R, budget), dtype=np.int64), np.empty((R, budget)),
                     np.empty((R, budget)), np.empty((R, budget)), np.empty((R, budget)),
                     np.empty(R, dtype=np.int64),
                     np.empty((R, budget)) if model_var else None, losses=design.losses)
    own = getattr(design, "_simulate_runs", None)  # a design with its own kernel
    if own is not None:
        own(L, y, U, out, np.empty((0, 0)) if out.model_var is None else out.model_var)
        return out
    aux = np.empty((design._aux0.shape[0], R, budget))
    lam_fixed = -1.0 if design.lam is None else float(design.lam)
    ak.simulate_runs(design.kind, design._F, design._ktab, design._Phi, design._w0,
                    design.rhos, design.lambdas, lam_fixed, design._rule, design.schedule,
                    design._s0, design._g0, design._fitted0, design._lam0, L, y, U, out.indices,
                    out.q, out.control, out.control_rest, out.lam, out.refits,
                    np.empty((0, 0)) if out.model_var is None else out.model_var,
                    design._aux0, aux)
    if aux.shape[0] and design.kind == ak.KIND_BOTH:
        out.control2, out.control_rest2 = aux[0], aux[1]
        out.model_var2 = aux[2] if model_var else None
    return out
