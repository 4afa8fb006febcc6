"""Argument checks shared by the statistics modules (raise ValueError, never clip)."""

from __future__ import annotations

import warnings
from collections.abc import Sequence

import numpy as np

# A row of class log-probabilities counts as normalised when logsumexp(row) is
# within this of 0. Float32 model outputs re-normalised in float64 pass easily.
NORM_TOL = 1e-6


def float_array(x: object, name: str, what: str = "a numeric array") -> np.ndarray:
    """``x`` as a float64 array; ValueError naming ``name`` where it is no numbers (QA:
    numpy's "could not convert string to float: 'a'" named no argument; None became a
    NaN array that was refused as "not finite")."""
    try:
        if x is None or isinstance(x, (str, bytes)):
            raise TypeError
        return np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError):
        got = (f"an array of dtype {x.dtype}" if isinstance(x, np.ndarray) else
               type(x).__name__ + (f" {x!r}" if isinstance(x, (str, bytes)) and len(x) <= 40
                                   else ""))
        raise ValueError(f"{name} must be {what}, got {got}") from None


def real_number(x: object, name: str, what: str = "a real number") -> float:
    """``x`` as a float; ValueError naming ``name``, the value's type and what is allowed
    where it is no number (a string, None, a list, an array of more than one value, a
    bool). A 0-d array or a numpy scalar is its value. Not checked for finiteness."""
    if isinstance(x, np.ndarray) and x.ndim == 0:
        x = x.item()
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, (int, float, np.integer,
                                                             np.floating)):
        got = (f"an array of shape {x.shape}" if isinstance(x, np.ndarray) else
               type(x).__name__ + (f" {x!r}" if isinstance(x, (str, bytes, bool, np.bool_))
                                   and len(repr(x)) <= 40 else ""))
        raise ValueError(f"{name} must be {what}, got {got}")
    return float(x)


def open_unit(x: object, name: str) -> float:
    """``x`` as a float in (0, 1) (a coverage ``level``, a miscoverage ``alpha``);
    ValueError naming ``name`` and the value otherwise (a string or None: Python's "'<'
    not supported between instances" before)."""
    if not isinstance(x, (bool, np.bool_)) and isinstance(x, (int, float, np.integer,
                                                              np.floating)) and 0.0 < x < 1.0:
        return float(x)
    raise ValueError(f"{name} must be in (0, 1), got {x!r}")


def is_whole(n: object) -> bool:
    """``n`` is a whole number: a Python or numpy integer, or a finite float equal to
    one; not a bool, a string or None (each raised a TypeError, NaN a ValueError and
    infinity an OverflowError in ``int(n) != n``). A 0-d array is its value."""
    if isinstance(n, np.ndarray) and n.ndim == 0:
        n = n.item()
    if isinstance(n, (bool, np.bool_)) or not isinstance(n, (int, float, np.integer,
                                                             np.floating)):
        return False
    return bool(np.isfinite(n)) and int(n) == n


def as_logprobs(x: object, name: str, n_classes: int | None = None, *,
                row_names: Sequence[str] | None = None) -> np.ndarray:
    """Check an ``(N, C)`` array of normalised, finite class log-probabilities.

    ``row_names``: what the messages call each row (default ``"row i"``), e.g. the pool
    row and item a function's answer row stands for.
    """
    a = float_array(x, name, "a numeric (N, C) array of class log-probabilities")
    if a.ndim != 2:
        raise ValueError(f"{name} must be a 2-D (N, C) array of class log-probabilities, "
                         f"got shape {a.shape}")
    if a.shape[0] == 0:
        raise ValueError(f"{name} is empty: the pool needs at least one item")
    if a.shape[1] < 2:
        raise ValueError(f"{name} must have at least 2 classes (columns), got {a.shape[1]}")
    if n_classes is not None and a.shape[1] != n_classes:
        raise ValueError(f"{name} has {a.shape[1]} classes, expected {n_classes}")
    for start in range(0, a.shape[0], _CHECK_ROWS):  # in blocks: no (N, C) temporaries
        block = a[start:start + _CHECK_ROWS]
        bad = ~np.isfinite(block)
        if bad.any():
            i, j = np.argwhere(bad)[0]
            raise ValueError(f"{name} has a non-finite value ({block[i, j]}) at "
                             f"{row_name(start + i, row_names)}, class {j}: log-probabilities "
                             "must be finite (use a floor such as log(1e-300) for exact "
                             "zeros, or pass logits through log_softmax)")
        lse = _logsumexp(block)
        off = np.abs(lse) > NORM_TOL
        if off.any():
            i = int(np.argmax(off))
            row = block[i]
            # probabilities given where log-probabilities are expected (QA: the message
            # spoke of logits only)
            probs = bool((row >= 0).all() and (row <= 1).all()
                         and abs(float(row.sum()) - 1.0) < 1e-6)
            hint = ("its entries lie in [0, 1] and sum to 1: these are probabilities; pass "
                    "np.log of them" if probs else
                    "pass raw logits through activetest.stats.log_softmax")
            raise ValueError(f"{name} {row_name(start + i, row_names)} is not normalised: "
                             f"logsumexp = {lse[i]:.3g}, expected 0 ({hint})")
    return a


def check_seed(seed: object) -> int | None:
    """A sampler's ``seed``: None (fresh entropy) or an integer in ``0..2**63-1`` (a
    Python or numpy integer, not a bool), returned as an ``int``.

    Raises:
        ValueError: anything else, named as given (a float is refused, not truncated;
            a numpy ``Generator`` is not a seed: the run's seed is what makes it
            repeatable and resumable).
    """
    if seed is None:
        return None
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer)) \
            or not 0 <= int(seed) < 2**63:
        shown = seed.item() if isinstance(seed, np.generic) else seed
        raise ValueError(f"seed must be an integer in 0..2**63-1, or None (left out) for "
                         f"fresh entropy; got {shown!r}")
    return int(seed)


def rng_of(random_state: object, name: str = "random_state") -> np.random.Generator:
    """``numpy.random.default_rng(random_state)`` for a ``random_state`` that is None
    (fresh entropy), a non-negative integer (not a bool), a sequence of them, or a numpy
    ``Generator``/``BitGenerator``/``SeedSequence``.

    Raises:
        ValueError: anything else, naming ``name`` and the value (QA: numpy's
            "SeedSequence expects int or sequence of ints for entropy not a" for a string,
            a float or NaN, and "expected non-negative integer" for -1, naming neither).
    """
    if random_state is None or isinstance(random_state, (np.random.Generator,
                                                         np.random.BitGenerator,
                                                         np.random.SeedSequence)):
        return np.random.default_rng(random_state)
    seq = (random_state if isinstance(random_state, (list, tuple, np.ndarray))
           else [random_state])
    if len(seq) and all(not isinstance(x, (bool, np.bool_)) and isinstance(x, (int, np.integer))
                        and x >= 0 for x in np.ravel(np.asarray(seq, dtype=object))):
        return np.random.default_rng(random_state)  # type: ignore[arg-type]
    shown = random_state.item() if isinstance(random_state, np.generic) else random_state
    shown_text = repr(shown) if len(repr(shown)) <= 60 else type(shown).__name__
    raise ValueError(f"{name} must be a non-negative integer seed, a numpy Generator, or None "
                     f"(fresh entropy); got {shown_text}")


def row_name(i: int, row_names: Sequence[str] | None = None) -> str:
    """What a message calls row ``i`` of an array: ``row_names[i]``, else ``"row i"``."""
    return f"row {i}" if row_names is None else row_names[i]


#: Rows :func:`as_logprobs` checks at a time.
_CHECK_ROWS = 1 << 16


def as_labels(y: object, n: int, n_classes: int, name: str = "labels") -> np.ndarray:
    """Check a length-N integer label vector with values in ``0..C-1``."""
    a = np.asarray(y)
    if a.dtype.kind not in "biuf":  # (QA: strings raised numpy's TypeError of isfinite)
        raise ValueError(f"{name} must hold integer class indices (0..{n_classes - 1}), got "
                         f"dtype {a.dtype}")
    if a.ndim != 1 or a.shape[0] != n:
        raise ValueError(f"{name} must be a 1-D array of length {n}, got shape {a.shape}")
    if a.size and not np.issubdtype(a.dtype, np.integer):
        if not np.all(np.isfinite(a)) or not np.all(a == np.round(a)):
            raise ValueError(f"{name} must hold integer class indices, got dtype {a.dtype}")
        a = a.astype(np.int64)
    bad = (a < 0) | (a >= n_classes)
    if bad.any():
        i = int(np.argmax(bad))
        raise ValueError(f"{name}[{i}] = {a[i]} is outside the class range 0..{n_classes - 1}")
    return a.astype(np.int64)


def as_scores(s: object, name: str = "scores") -> np.ndarray:
    """Check a 1-D array of finite, non-negative acquisition scores."""
    a = float_array(s, name, "a numeric 1-D array (one score per pool item)")
    if a.ndim != 1:
        raise ValueError(f"{name} must be a 1-D array (one score per pool item), "
                         f"got shape {a.shape}")
    if a.size == 0:
        raise ValueError(f"{name} is empty: the pool needs at least one item")
    if not np.all(np.isfinite(a)):
        i = int(np.argmax(~np.isfinite(a)))
        raise ValueError(_not_finite(name, s, a, i))
    if np.any(a < 0):
        i = int(np.argmax(a < 0))
        raise ValueError(f"{name}[{i}] = {a[i]} is negative: acquisition scores must be >= 0")
    return a


def as_vector(x: object, name: str, n: int | None = None) -> np.ndarray:
    """Check a 1-D finite float vector (optionally of length n)."""
    a = float_array(x, name, "a numeric 1-D array")
    if a.ndim != 1:
        raise ValueError(f"{name} must be 1-D, got shape {a.shape}")
    if n is not None and a.shape[0] != n:
        raise ValueError(f"{name} must have length {n}, got {a.shape[0]}")
    if not np.all(np.isfinite(a)):
        i = int(np.argmax(~np.isfinite(a)))
        raise ValueError(_not_finite(name, x, a, i))
    return a


def _not_finite(name: str, given: object, a: np.ndarray, i: int) -> str:
    """The message for the non-finite entry ``i`` of a 1-D vector ``a`` read from
    ``given``: one given as None is named so (numpy reads None as NaN: QA,
    ``observe(losses=[None])`` said "losses[0] = nan is not finite")."""
    if isinstance(given, (list, tuple)) and i < len(given) and given[i] is None:
        return f"{name}[{i}] is None: {name} must all be finite numbers"
    return f"{name}[{i}] = {a[i]} is not finite"


#: The paper's proposal floor (its alpha): the share of the uniform mixed into a proposal.
DEFAULT_FLOOR = 0.1


def check_floor(floor: float) -> float:
    """The proposal floor must lie in (0, 1]."""
    a = (float(floor) if isinstance(floor, (int, float, np.integer, np.floating))
         and not isinstance(floor, (bool, np.bool_)) else float("nan"))
    if not (0.0 < a <= 1.0):
        raise ValueError(f"the proposal floor must be in (0, 1], got {floor!r} (the paper's "
                         f"alpha; it uses 0.1)")
    return a


def floor_arg(proposal_floor: float | None, alpha: float | None, where: str) -> float:
    """The checked proposal floor from ``proposal_floor=`` or its deprecated name
    ``alpha=`` (a :class:`DeprecationWarning` naming ``where``), :data:`DEFAULT_FLOOR`
    when neither is given.

    Raises:
        TypeError: both are given.
        ValueError: the floor is outside (0, 1].
    """
    if alpha is not None:
        if proposal_floor is not None:
            raise TypeError(f"{where}: give proposal_floor= only (alpha= is its deprecated "
                            f"name)")
        warnings.warn(f"{where}(alpha=) is deprecated: it is the proposal floor, now "
                      f"proposal_floor= (alpha names 1 - the confidence level elsewhere)",
                      DeprecationWarning, stacklevel=3)
        proposal_floor = alpha
    return check_floor(DEFAULT_FLOOR if proposal_floor is None else proposal_floor)


def check_budget(m: int, n: int, name: str = "budget") -> int:
    """A label budget must satisfy 1 <= M <= N."""
    if not is_whole(m):  # (a string, None: int()'s errors before)
        raise ValueError(f"{name} must be an integer, got {m!r}")
    m = int(m)
    if m < 1:
        raise ValueError(f"{name} must be >= 1, got {m}")
    if m > n:
        raise ValueError(f"{name} = {m} exceeds the pool size N = {n}")
    return m


def _logsumexp(a: np.ndarray) -> np.ndarray:
    C = a.shape[1]
    if C > 7:
        mx = a.max(axis=1)
        return mx + np.log(np.exp(a - mx[:, None]).sum(axis=1))
    # A few classes: column by column, several times faster than numpy's reductions
    # over a short last axis, and the same numbers (max is exact; below 8 terms numpy
    # adds a row's terms in order, as this loop does).
    mx = a[:, 0].copy()
    for j in range(1, C):
        np.maximum(mx, a[:, j], out=mx)
    total = np.exp(a[:, 0] - mx)
    for j in range(1, C):
        total += np.exp(a[:, j] - mx)
    return mx + np.log(total)
