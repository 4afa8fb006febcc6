"""Unit tests of the draw room (:mod:`activetest.session.draw`) on a real session store."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from rooms_support import N_ITEMS, make_store

from activetest.session import design, draw
from activetest.session.config import SessionConfig
from activetest.session.records import Waiting
from activetest.session.store import SessionStore
from activetest.stats import ActiveSampler


def test_select_draws_what_the_sampler_draws_and_resumes(tmp_path: Path) -> None:
    want_idx, want_q = ActiveSampler(np.ones(N_ITEMS), proposal_floor=0.1, seed=0).draw(4)
    with make_store(tmp_path) as store:
        first = draw.select(store, 2)
    with SessionStore.open(tmp_path / "s.db") as store:  # stopped and resumed
        later = draw.select(store, 2)
        acq = store.acquisitions()
    assert [a.index for a in first + later] == want_idx.tolist()
    assert [a.q for a in acq] == pytest.approx(want_q.tolist(), abs=1e-15)
    assert [a.step for a in acq] == [1, 2, 3, 4]  # draws count from 1
    assert [a.item_id for a in acq] == [f"r{i}" for i in want_idx]
    # uniform sampling without replacement: q_m = 1 / (N - m + 1)
    assert [a.q for a in acq] == pytest.approx([1 / 6, 1 / 5, 1 / 4, 1 / 3])


def test_select_refuses_bad_counts(tmp_path: Path) -> None:
    with make_store(tmp_path) as store:
        with pytest.raises(ValueError, match="must be a positive integer, got 0"):
            draw.select(store, 0)
        with pytest.raises(ValueError, match="must be a positive integer, got True"):
            draw.select(store, True)
        draw.select(store, 5)
        with pytest.raises(ValueError, match="cannot select 2 items: only 1 of 6 remain"):
            draw.select(store, 2)


@pytest.mark.parametrize("bad", [None, "a", [1, 2], float("nan")])
def test_select_names_a_count_that_is_no_number(tmp_path: Path, bad: object) -> None:
    """QA: Session.select(None) (or "a", [1, 2], NaN) raised int()'s TypeError or
    ValueError ("int() argument must be ... not 'NoneType'"), naming no argument."""
    with make_store(tmp_path) as store:
        with pytest.raises(ValueError, match=r"the number of items to select must be a "
                                             r"positive integer, got "):
            draw.select(store, bad)  # type: ignore[arg-type]
        assert store.acquisitions() == []


@pytest.mark.parametrize("bad", ["0.5", True])
def test_a_busy_timeout_given_as_a_string_or_bool_is_refused(tmp_path: Path,
                                                               bad: object) -> None:
    """QA: SessionStore.open(busy_timeout="0.5") was read as half a second and True as
    one second; a number of seconds is asked for."""
    from activetest.session.store import SessionError

    with make_store(tmp_path):
        pass
    with pytest.raises(SessionError, match=r"--busy-timeout \(busy_timeout\) must be a number "
                                           r"of seconds"):
        SessionStore.open(tmp_path / "s.db", busy_timeout=bad)  # type: ignore[arg-type]
    with SessionStore.open(tmp_path / "s.db", busy_timeout=np.float64(0.5)):
        pass


def test_usable_prefix_and_waiting(tmp_path: Path) -> None:
    with make_store(tmp_path) as store:
        acq = draw.select(store, 3)
        assert draw.waiting(store) == Waiting(acq[0].item_id, 1, ())
        store.set_labels([(acq[1].index, 1), (acq[2].index, 0)], "test")
        used, labels, n_waiting = draw.usable_prefix(store)
        assert (used, n_waiting) == ([], 2)
        assert labels == {acq[1].index: 1, acq[2].index: 0}
        assert draw.waiting(store) == Waiting(acq[0].item_id, 1,
                                              (acq[1].item_id, acq[2].item_id))
        assert [a.step for a in draw.pending(store)] == [1]
        store.set_labels([(acq[0].index, 0)], "test")
        used, _, n_waiting = draw.usable_prefix(store)
        assert ([a.step for a in used], n_waiting) == ([1, 2, 3], 0)
        assert draw.waiting(store) is None and draw.pending(store) == []


def test_acquisition_scores_and_design_names(tmp_path: Path) -> None:
    with make_store(tmp_path) as store:
        assert draw.acquisition_scores_of(store).tolist() == [1.0] * N_ITEMS
    assert design.design_variant("both", "adaptive") == "calibrated-both"
    assert design.design_variant("log_loss", "adaptive") is None
    base = {"task": {}, "surrogate": "s", "target": "t", "acquisition": "adaptive", "seed": 0}
    assert SessionConfig.from_dict({**base, "metric": "error_rate"}).design_metric == "error_rate"
    assert SessionConfig.from_dict({**base, "metric": "both"}).design_loss == "log"
    both = SessionConfig.from_dict({**base, "metric": "both", "design": "calibrated-both"})
    assert both.design_metrics == ("log_loss", "error_rate")
    assert draw.describe_design({"refits": 3, "lam": 0.25, "ridge": 10,
                                 "metrics": ["log_loss", "error_rate"],
                                 "weights": {"a": 0.1234}}) == (
        "one proposal for log loss and error rate, each with its own control, 3 refit(s), "
        "lambda 0.25, ridge 10", "a 0.123")
