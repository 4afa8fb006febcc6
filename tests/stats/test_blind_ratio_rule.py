"""Which unexplored threshold a new session records (docs/robustness.md, "What new
sessions run"): a fifth for the earned in-run rule, a half for everything else."""

from __future__ import annotations

from activetest.stats.blindspot import BLIND_RATIO, EARNED_BLIND_RATIO, new_blind_ratio


def test_the_earned_rule_gets_a_fifth_and_every_other_design_a_half() -> None:
    assert EARNED_BLIND_RATIO == 0.2 and BLIND_RATIO == 0.5
    assert new_blind_ratio("earned") == 0.2
    assert new_blind_ratio("original") == 0.5
    assert new_blind_ratio(None) == 0.5  # the paper's fixed acquisitions (CE + LURE)
