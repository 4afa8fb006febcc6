"""Few errors: when the CLT intervals of an error rate cannot be trusted (issue 20).

The fixed-budget interval and the asymptotic confidence sequence rest on a variance
estimated from the labels. For an error rate (0/1 losses) that estimate is built from
the labels that show an error: with none, the estimate and its standard error are 0 and
the "interval" is a point (three correct labels gave ``[0, 1e-12]``); with one or two,
the variance is badly underestimated in most runs. On the near-constant pool of
:mod:`activetest.experiments.hostile` (2.2 % errors) the fixed-budget interval covered
0.60 at 50 labels and the anytime CS 0.39-0.51 (uniform sampling alike).

**The rule** (sessions that record ``clt_min_errors`` = k, new ones 5): at a budget M,
the CLT intervals are reported only if the first M labels show at least k errors
(non-zero losses) *and* at least k labels without one (losses below the upper end 1:
the same failure mirrored, for an error rate near 1), and, where the losses take values
between (a graded judgment's partial credit), at least k labels whose loss is not the
most common one (labels all judged at one middle level show no spread either: QA
2026-12-06, ``benchmarks/coverage_hunt.py --case graded-interior-sure``, fixed-budget
coverage 0.71 at 20 labels, anytime 0.875). Otherwise the **exact betting CS**
(:func:`activetest.stats.betting.exact_cs`; no asymptotics, valid at every budget at
once) stands in:

* the **fixed-budget interval** at M is the exact anytime CS at M (valid at a fixed budget
  because it is valid at every budget; conservative);
* the **anytime CS** is the exact anytime CS at the budgets with few errors and the
  anytime CS (asymptotic) at the others, intersected over budgets
  (:func:`switch_to_exact`). Why not the anytime CS (asymptotic) alone: it fails exactly
  where the fixed interval fails (its variance is the same). Why not the exact anytime
  CS throughout: it is wide (the designs' proposal floor 0.1 bounds its bets), 2-10x the
  anytime CS (asymptotic) once errors are seen. The switch is at a stopping time (the
  k-th error), so the combined sequence misses only if the exact anytime CS misses at
  some budget before the switch or the anytime CS (asymptotic) misses at some budget
  after it: at most the sum of their miscoverages by the union bound (exact: alpha by
  Ville's inequality; CLT: alpha asymptotically), and in practice about alpha (measured
  in docs/robustness.md: 0.93-1.00 time-uniform coverage on the near-constant pool,
  where the anytime CS (asymptotic) alone gave 0.43). Splitting alpha between the two
  would make that bound exact at the price of a ~14 % wider anytime CS (asymptotic) on
  every session.

**Two targets compared on the same labels** (``estimate --compare``): the paired
difference of their error rates has per-item values in {-1, 0, 1} (graded: steps of the
judgment scores), and its CLT intervals fail the same way when the labels show few items
where the two losses differ (two models that agree on every labelled item give a
difference of 0 with a standard error of 0: a point, whatever they do elsewhere). The
rule there (:func:`few_differences`): at least ``k`` labels away from the most common
value so far (for 0/1 losses that is the rarer of errors and labels without one, the
rule above), else the exact anytime CS of the difference
(:func:`activetest.stats.betting.paired_difference_exact_cs`) stands in.

The log loss is not switched: its losses are continuous and never exactly 0, and the
failure it has (rare large losses the draws never met) is what
:mod:`activetest.stats.blindspot` widens for.

Measured (docs/robustness.md, ``benchmarks/few_errors.py``): on the near-constant pool
the rule gives fixed-budget coverage 0.975-1.00 at 50-400 labels and anytime 0.93-1.00;
on pools with many errors it never switches after the first few labels.
"""

from __future__ import annotations

import numpy as np

__all__ = ["MIN_ERRORS", "count_outcomes", "few_differences", "few_differences_reason",
           "few_errors", "few_errors_reason", "few_errors_what", "switch_to_exact"]

#: The errors (and non-errors) a CLT interval of an error rate needs: new sessions
#: record it as ``clt_min_errors``. Measured on the near-constant pool
#: (``benchmarks/few_errors.py``): from 1 error the anytime coverage is 0.925, from 5
#: 0.93-1.00 with fixed-budget 0.975-1.00; from 10 the same, with the exact anytime CS in use
#: far longer.
MIN_ERRORS = 5


def count_outcomes(losses: np.ndarray, *, high: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """``(errors, non_errors)`` among the first m labels, at every m: ``(..., K)`` integer
    arrays of the labels with a non-zero loss and with a loss below ``high``."""
    L = np.asarray(losses, dtype=np.float64)
    return np.cumsum(L > 0, axis=-1), np.cumsum(np.less(L, high), axis=-1)


def few_errors(losses: np.ndarray, min_errors: int, *, high: float = 1.0) -> np.ndarray:
    """``(..., K)``: True at the budgets M whose first M labels show fewer than
    ``min_errors`` errors (non-zero losses) or fewer than ``min_errors`` labels without
    one (losses below ``high``); there the CLT intervals are not reported (module
    docstring).

    Losses between 0 and ``high`` (a graded judgment's partial credit) can show no
    spread without being 0 or ``high``: labels all judged at one middle level (loss 0.3
    each) have a zero SE, the same point interval as labels all right. Where the losses
    take such values, the budgets whose first M labels show fewer than ``min_errors``
    away from the most common loss are few too (:func:`few_differences`' count). For 0/1
    losses that count is the smaller of the two above, so the rule is unchanged there;
    elsewhere it is only ever stricter (a loss away from the most common one is an
    error or a label without one)."""
    if isinstance(min_errors, bool) or not isinstance(min_errors, (int, np.integer)) \
            or min_errors < 1:
        raise ValueError(f"min_errors must be a positive integer, got {min_errors!r}")
    L = np.asarray(losses, dtype=np.float64)
    err, ok = count_outcomes(L, high=high)
    few = (err < min_errors) | (ok < min_errors)
    if L.size and np.any((L > 0) & np.less(L, high)):  # partial credit: a middle level
        away = (_away_from_mode(L) if L.ndim == 1 else
                np.apply_along_axis(_away_from_mode, -1, L))
        few = few | (away < min_errors)
    return few


def few_errors_reason(losses: np.ndarray, min_errors: int, *, high: float = 1.0
                      ) -> str | None:
    """Why the exact interval stands in after all ``(K,)`` labels (None: it does not),
    e.g. ``"exact interval: fewer than 5 errors labelled (2 of 40)"``."""
    L = np.asarray(losses, dtype=np.float64)
    if L.size == 0 or not bool(few_errors(L, min_errors, high=high)[-1]):
        return None
    err, ok = (int(c[-1]) for c in count_outcomes(L, high=high))
    if err < min_errors:
        return (f"exact interval: fewer than {min_errors} errors labelled ({err} of "
                f"{L.size})")
    if ok < min_errors:
        return (f"exact interval: fewer than {min_errors} labels without an error ({ok} of "
                f"{L.size})")
    vals, counts = np.unique(L, return_counts=True)
    usual = float(vals[np.argmax(counts)])
    return (f"exact interval: fewer than {min_errors} labels whose loss is not the usual "
            f"{usual:g} ({int(_away_from_mode(L)[-1])} of {L.size})")


def few_errors_what(losses: np.ndarray, min_errors: int, *, high: float = 1.0) -> str | None:
    """What the ``(K,)`` labels showed too few of at the budgets where the exact interval
    stood in (:func:`few_errors`), in words for a name such as "... while few errors":
    ``"errors"``, ``"labels without an error"`` (an error rate near 1: the mirrored
    failure), ``"labels off the usual loss"`` (partial credit all at one level), or those
    that held at some budget joined by "or"; None where it never stood in.

    A cause is named where it alone held at some such budget (errors below
    ``min_errors`` with labels without one not, or the reverse, or neither with the losses
    off the most common one too few); where both were below at every such budget (the
    first few labels only), the rarer at the last of them (errors on a tie, as
    :func:`few_errors_reason` names them first). QA: a session at an error rate of 0.88
    had its bands named "exact anytime CS while few errors"."""
    L = np.asarray(losses, dtype=np.float64).ravel()
    if L.size == 0:
        return None
    few = few_errors(L, min_errors, high=high)
    if not few.any():
        return None
    err, ok = count_outcomes(L, high=high)
    low_err, low_ok = err < min_errors, ok < min_errors
    causes = [w for w, hit in (("errors", (few & low_err & ~low_ok).any()),
                               ("labels without an error", (few & low_ok & ~low_err).any()),
                               ("labels off the usual loss", (few & ~low_err & ~low_ok).any()))
              if hit]
    if causes:
        return " or ".join(causes)
    last = int(np.flatnonzero(few)[-1])  # both below at every such budget (the first few)
    return "errors" if err[last] <= ok[last] else "labels without an error"


def _away_from_mode(values: np.ndarray) -> np.ndarray:
    """``(K,)``: among the first m values, how many differ from the most common one."""
    v = np.asarray(values, dtype=np.float64).ravel()
    if v.size == 0:
        return np.zeros(0, dtype=np.int64)
    _, inv = np.unique(v, return_inverse=True)
    inv = inv.ravel()
    n_values = int(inv.max()) + 1
    if n_values <= 32:  # few distinct values (the differences this is for): vectorised
        seen = np.zeros((v.size, n_values), dtype=np.int64)
        seen[np.arange(v.size), inv] = 1
        return np.arange(1, v.size + 1) - np.cumsum(seen, axis=0).max(axis=1)
    counts = np.zeros(n_values, dtype=np.int64)
    out = np.empty(v.size, dtype=np.int64)
    best = 0
    for m, j in enumerate(inv):
        counts[j] += 1
        best = max(best, int(counts[j]))
        out[m] = m + 1 - best
    return out


def few_differences(differences: np.ndarray, min_errors: int) -> np.ndarray:
    """``(K,)``: True at the budgets M whose first M paired differences (one target's
    loss minus another's at the same labelled item, few distinct values: error rates,
    judgment scores) show fewer than ``min_errors`` values away from the most common one;
    there the CLT intervals of the difference are not reported (module docstring). For
    0/1 losses this is :func:`few_errors`."""
    if isinstance(min_errors, bool) or not isinstance(min_errors, (int, np.integer)) \
            or min_errors < 1:
        raise ValueError(f"min_errors must be a positive integer, got {min_errors!r}")
    return _away_from_mode(differences) < min_errors


def few_differences_reason(differences: np.ndarray, min_errors: int) -> str | None:
    """Why the exact interval of a paired difference stands in after all ``(K,)`` labels
    (None: it does not), e.g. ``"exact interval: fewer than 5 labelled items where the
    two losses differ from the usual difference (0 of 30)"``."""
    D = np.asarray(differences, dtype=np.float64).ravel()
    if D.size == 0 or not bool(few_differences(D, min_errors)[-1]):
        return None
    away = int(_away_from_mode(D)[-1])
    vals, counts = np.unique(D, return_counts=True)
    usual = float(vals[np.argmax(counts)])
    what = ("where the two targets' losses differ" if usual == 0.0 else
            f"whose difference is not the usual {usual:+g}")
    return (f"exact interval: fewer than {min_errors} labelled items {what} ({away} of "
            f"{D.size})")


def switch_to_exact(low: np.ndarray, high: np.ndarray, exact_low: np.ndarray,
                    exact_high: np.ndarray, few: np.ndarray, *, intersect: bool = True
                    ) -> tuple[np.ndarray, np.ndarray]:
    """The intervals with the exact anytime CS where ``few`` (``(..., K)`` each): the fixed-budget
    interval (``intersect=False``) or, intersected over budgets, the anytime CS (module
    docstring)."""
    lo = np.where(few, exact_low, low)
    hi = np.where(few, exact_high, high)
    if not intersect:
        return lo, hi
    from activetest.stats.confseq import running_intersection

    return running_intersection(lo, hi)
