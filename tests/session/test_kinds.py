"""Unit tests of the session kinds (:mod:`activetest.session.kinds`) and of the one
estimate policy (:func:`activetest.session.estimate.session_estimate`) on hand-made
stored state: no session file, no model."""

from __future__ import annotations

import math

import numpy as np
import pytest

from activetest.data.generative import FULL_PROMPT, GenTask, Judgment
from activetest.data.task import Item
from activetest.session import estimate as est
from activetest.session.config import NoiseConfig, SessionConfig
from activetest.session.create import resolve_task
from activetest.session.kinds import Classification, Graded, kind_for, kind_for_task
from activetest.session.records import LabelError
from activetest.session.store import SessionError

#: the surrogate's and the target's class probabilities on a pool of 4, 2 classes
S = np.log(np.array([[0.9, 0.1], [0.2, 0.8], [0.5, 0.5], [0.6, 0.4]]))
T = np.log(np.array([[0.7, 0.3], [0.4, 0.6], [0.25, 0.75], [0.8, 0.2]]))


def draws(rows: list[int], y: list[int], n_pool: int = 4) -> est.LabelledDraws:
    """Uniform draws without replacement of ``rows`` labelled ``y``."""
    k = len(rows)
    return est.LabelledDraws(n_pool=n_pool, item_ids=tuple(f"i{r}" for r in rows),
                             steps=tuple(range(1, k + 1)),
                             rows=np.asarray(rows, dtype=np.int64),
                             q=1.0 / (n_pool - np.arange(k)),
                             y=np.asarray(y, dtype=np.int64), n_selected=k)


def gen_task() -> GenTask:
    return GenTask("qa", "Answer.", "Q: {question}\nA:", "Q: {question}\nA: {answer}",
                   judgment=Judgment(("wrong", "partly", "right"), (0.0, 0.5, 1.0)))


def config(**kw):  # type: ignore[no-untyped-def]
    return SessionConfig(task={}, surrogate="s", target="t", metric=kw.pop("metric", "both"),
                         acquisition=kw.pop("acquisition", "ce"), seed=7, **kw)


def test_classification_losses_from_class_logprobs() -> None:
    d = draws([1, 3], [0, 0])
    kind = Classification()
    lp = kind.target_logprobs(d, lambda rows: T)
    assert lp is not None and np.array_equal(lp, T[[1, 3]])
    got = kind.losses(d, ("log_loss", "error_rate"), lp)
    # row 1 labelled 0: p = 0.4, the target guesses 1 (an error); row 3: p = 0.8, right
    assert got["log_loss"] == pytest.approx([-math.log(0.4), -math.log(0.8)], abs=1e-15)
    assert got["error_rate"].tolist() == [1.0, 0.0]
    # an adaptive design learns from the same loss, scored at the rows it is given
    asked = []
    dl = kind.draw_losses("log_loss", np.array([2]), np.array([1]),
                          lambda rows: asked.append(rows.tolist()) or T)
    assert asked == [[2]] and dl == pytest.approx([-math.log(0.75)], abs=1e-15)


def test_classification_estimate_inputs() -> None:
    d = draws([0, 2], [1, 1])
    kind = Classification()
    inp = kind.estimate_inputs(d, ("log_loss",), surrogate_pool=S, target_pool=T,
                               target_lp=T[d.rows], compare={"o": {"log_loss": np.zeros(2)}})
    assert inp.surrogate_nll == pytest.approx([-math.log(0.1), -math.log(0.5)], abs=1e-15)
    assert inp.target_nll == pytest.approx([-math.log(0.3), -math.log(0.75)], abs=1e-15)
    # the control: the surrogate's expected log loss of the target, sum_c p_S(c) (-log p_T(c))
    h = -(np.exp(S) * T).sum(axis=1)
    assert inp.pool_controls["log_loss"] == pytest.approx(h, abs=1e-12)
    assert inp.loss_bounds == {"log_loss": pytest.approx(-math.log(0.2), abs=1e-12)}
    assert list(inp.compare) == ["o"]
    # the target known on labelled rows only (PE): no bound, the control from the surrogate
    part = np.full_like(T, np.nan)
    part[d.rows] = T[d.rows]
    inp = kind.estimate_inputs(d, ("log_loss",), surrogate_pool=S, target_pool=part,
                               target_lp=T[d.rows])
    assert inp.loss_bounds == {}
    assert inp.pool_controls["log_loss"] == pytest.approx(-(np.exp(S) * S).sum(axis=1),
                                                          abs=1e-12)


def test_classification_compares_any_model_on_the_same_labels() -> None:
    d = draws([1, 3], [1, 1])
    got, warnings = Classification().comparisons(
        None, ["other"], d, ("error_rate",),  # type: ignore[arg-type]
        lambda other: (f"spec:{other}", S[d.rows]))
    # the surrogate as the other model: row 1 guesses 1 (right), row 3 guesses 0 (wrong)
    assert warnings == [] and got["spec:other"]["error_rate"].tolist() == [0.0, 1.0]


def test_graded_losses_are_one_minus_the_judged_score() -> None:
    d = draws([0, 1, 2], [2, 1, 0])
    kind = Graded(gen_task())
    assert kind.target_logprobs(d, lambda rows: T) is None
    with pytest.raises(SessionError, match="gives answers, not class log-probs"):
        kind.target_logprobs(d, lambda rows: T, required=True)
    assert kind.losses(d, ("error_rate",), None)["error_rate"].tolist() == [0.0, 0.5, 1.0]
    assert kind.draw_losses("error_rate", d.rows, np.array([1, 1]),
                            lambda rows: T).tolist() == [0.5, 0.5]


def test_graded_estimate_inputs() -> None:
    judge = np.log(np.array([[0.5, 0.25, 0.25], [0.1, 0.1, 0.8], [1 / 3, 1 / 3, 1 / 3]]))
    d = draws([0, 1], [1, 2], n_pool=3)
    inp = Graded(gen_task()).estimate_inputs(d, ("error_rate",), surrogate_pool=judge,
                                             target_pool=None, target_lp=None)
    assert inp.target_nll is None and inp.loss_bounds == {}
    assert inp.surrogate_nll == pytest.approx([-math.log(0.25), -math.log(0.8)], abs=1e-15)
    # the control: the judge's expected loss, sum_l p(l) (1 - score_l)
    assert inp.pool_controls["error_rate"] == pytest.approx(
        [0.5 + 0.125, 0.1 + 0.05, 0.5], abs=1e-12)


def test_graded_comparisons_refuse_a_target_not_stored_at_creation() -> None:
    kind = Graded(gen_task(), compared=["m2"])
    with pytest.raises(SessionError, match="'m3' is not one of them"):
        kind.comparisons(None, ["m3"], draws([0], [0]), ("error_rate",),  # type: ignore[arg-type]
                         lambda other: ("", S))


def test_what_the_labeller_asks_is_the_kinds_decision() -> None:
    """The terminal labeller asks the kind, not ``if graded``: a classification session
    has no compared answers to judge and no full prompt apart (it never reads the store
    for them); a graded item shows its harness log's full prompt where it has one."""
    cls = Classification(resolve_task("sst2"))
    assert cls.pending_judgments(None) == []  # type: ignore[arg-type]
    kept = Item("a", {"text": "good", FULL_PROMPT: "Q: x\nA: y\n\nQ: good\nA:"}, None)
    assert cls.full_prompt(kept) is None
    graded = Graded(gen_task())
    assert graded.full_prompt(kept) == "Q: x\nA: y\n\nQ: good\nA:"
    assert graded.full_prompt(Item("b", {"question": "q"}, None)) is None
    assert graded.full_prompt(Item("c", {"question": "q", FULL_PROMPT: ""}, None)) is None


def test_kinds_are_picked_from_the_config_and_the_task() -> None:
    assert type(kind_for(config())) is Classification
    graded = kind_for(config(kind="graded", compare=("m2",)), gen_task())
    assert type(graded) is Graded and graded.compared_targets == ["m2"]
    assert kind_for_task(gen_task()) is Graded
    assert kind_for_task(resolve_task("sst2")) is Classification
    item = Item("a", {"text": "good"}, None)
    task = resolve_task("sst2")
    # a classification item shows itself, whatever compared target is named
    for target in (None, "m2"):
        assert Classification(task).display(None, item, 0, target) == task.render_item(item)  # type: ignore[arg-type]
    class ConfigOnly:  # what compared_answer reads of the store before refusing: its config
        def config(self) -> SessionConfig:
            return config(kind="graded", compare=("m2",))

    with pytest.raises(LabelError, match="'m3' is not a compared target"):
        graded.compared_answer(ConfigOnly(), 0, "m3")  # type: ignore[arg-type]


def test_session_estimate_applies_the_session_policy() -> None:
    d = draws([0, 2, 1], [1, 1, 0])
    kind = Classification()
    inp = kind.estimate_inputs(d, ("log_loss", "error_rate"), surrogate_pool=S,
                               target_pool=T, target_lp=T[d.rows])
    cfg = config(noise=NoiseConfig(None, 2.0, "all"), proposal_floor=0.25, n_boot=60,
                 level=0.9)
    got = est.session_estimate(cfg, d, inp, warnings=["w"], n_boot=40)
    want = est.estimate_report(
        d, losses=inp.losses, surrogate_nll=inp.surrogate_nll, target_nll=inp.target_nll,
        pool_controls=inp.pool_controls, noise=est.NoiseRule(math.inf, 2.0, "all"), seed=7,
        n_boot=40, level=0.9, acquisition="ce", loss_bounds=inp.loss_bounds,
        q_floor=0.25 / 1.25)
    assert got.warnings == [*want.warnings, "w"]
    for m in ("log_loss", "error_rate"):
        a, b = got.metrics[m], want.metrics[m]
        assert (a.active, a.uniform, a.cv, a.anytime) == (b.active, b.uniform, b.cv, b.anytime)
    assert got.noise_thresholds == (math.inf, 2.0, "all") and got.level == 0.9
    assert got.flagged == want.flagged
    # an adaptive design: its floor (10 % uniform) and its state in the record
    assert est.q_floor(cfg, True) == pytest.approx(0.1) and est.q_floor(cfg, False) == 0.2
    info = est.session_estimate(cfg, d, inp, design_info={"design": "x"})
    assert info.design == {"design": "x"}
