"""The bootstrap intervals of LURE and of the plain mean of the same labels.

A session shows both: LURE's (the estimate) and the plain mean's (the
"uniform-equivalent", for contrast). Sessions created before the config key
``shared_resamples`` drew each from its own generator (seeded by the session's seed,
the label count and ``"lure:<metric>"`` or ``"mean:<metric>"``), so under uniform
sampling, where LURE *is* the plain mean (every weight is 1), the same number was shown
with two different intervals (QA).

Sessions recording ``shared_resamples`` resample the labelled items once, for both:
the plain mean's bootstrap takes LURE's generator (``"lure:<metric>"``). Why LURE's:
LURE's interval is the session's own (the estimate's), shown since the first version
and repeated by the report's history, so its numbers stay what they were; only the
plain mean's, a contrast, moves to the shared resamples. The two intervals then differ
by the weights alone (a paired comparison on the same resampled label sets), and
where every draw was made at the uniform rate (no adaptive design's controls) LURE's
terms are the losses themselves: LURE's weights are 1 in exact arithmetic, and its
formula's rounding (1 +- one unit in the last place) is not let in, so both are one
computation and the same interval, bit for bit.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from activetest.session.estimate_base import bootstrap_rng
from activetest.stats import BootstrapResult, bootstrap

__all__ = ["PairedBootstraps", "at_uniform_rate", "paired_bootstraps"]


@dataclass(frozen=True)
class PairedBootstraps:
    """LURE's (``active``) and the plain mean's (``uniform``) bootstrap results, not
    yet clipped to the metric's range."""

    active: BootstrapResult
    uniform: BootstrapResult


def at_uniform_rate(q: np.ndarray, n_pool: int) -> bool:
    """Whether every draw of ``q`` (in draw order) was made at the uniform rate,
    ``1 / (N - m + 1)``: LURE's weights are then all 1."""
    k = int(np.size(q))
    if k == 0:
        return False
    rate = 1.0 / (n_pool - np.arange(k))
    return bool(np.allclose(np.asarray(q, dtype=np.float64), rate, rtol=1e-9, atol=0))


def paired_bootstraps(terms: np.ndarray, losses: np.ndarray, *, metric: str, seed: int,
                      n_boot: int, level: float, shared: bool,
                      uniform_terms: bool = False) -> PairedBootstraps:
    """Bootstrap LURE's ``terms`` and the plain mean of ``losses`` (the same K labels).

    Args:
        shared: the session records ``shared_resamples``: one set of resamples for
            both (module docstring); False: each its own generator, as older sessions.
        uniform_terms: with ``shared``, the terms are the losses in exact arithmetic
            (every draw at the uniform rate, :func:`at_uniform_rate`, and no adaptive
            design's controls): LURE is bootstrapped on the losses themselves, so the
            two results are one.
    """
    k = int(np.size(losses))
    if shared and uniform_terms:
        both = bootstrap(losses, n_boot=n_boot, level=level,
                         random_state=bootstrap_rng(seed, k, f"lure:{metric}"))
        return PairedBootstraps(both, both)
    active = bootstrap(terms, n_boot=n_boot, level=level,
                       random_state=bootstrap_rng(seed, k, f"lure:{metric}"))
    uniform = bootstrap(losses, n_boot=n_boot, level=level,
                        random_state=bootstrap_rng(seed, k, ("lure:" if shared else "mean:")
                                                   + metric))
    return PairedBootstraps(active, uniform)
