"""Ids that look like row numbers on a history join's sides (``data/history_ids.py``)."""

from __future__ import annotations

from activetest.data.history_ids import number_ids, positions_in_disguise


def _s(a: int, b: int) -> list[str]:
    return [str(i) for i in range(a, b)]


def test_number_ids_tell_a_run_from_0_or_1_from_other_whole_numbers() -> None:
    assert number_ids(_s(0, 5)).run_from == 0
    assert number_ids(_s(1, 6)).run_from == 1
    assert number_ids(["3", "0", "2", "1"]).run_from == 0  # shuffled: still row numbers
    assert number_ids(["000", "001", "002"]).run_from == 0  # zero-padded
    assert number_ids(["0.0", "1.0", "2.0"]).run_from == 0  # a float column pandas wrote
    runs = number_ids(_s(7504, 8855))  # MMLU-Pro's question_id: a dataset's own ids
    assert runs is not None and runs.run_from is None and runs.n == 1351
    assert number_ids(["0", "2", "3"]).run_from is None  # filtered: not a run
    assert number_ids(["q0", "q1"]) is None
    assert number_ids(["1", "01"]) is None  # the same number twice: no run is claimed
    d = number_ids(_s(0, 60))
    assert d is not None and d.describe("ids") == "'0'..'59', 60 ids, every whole number from 0"


def test_positions_in_disguise() -> None:
    # both sides row numbers: a join by position
    d = positions_in_disguise(_s(0, 30), _s(0, 30))
    assert d is not None and d.first == "0" and d.shared == 30
    assert positions_in_disguise(_s(1, 31), _s(1, 101)) is not None  # 1..N, a longer matrix
    # one side row numbers, the other whole numbers: still nothing but the number joins
    assert positions_in_disguise(_s(0, 30), ["2", "5", "7", "11"]) is not None
    assert positions_in_disguise(["2", "5", "7", "11"], _s(0, 1000)) is not None
    # a dataset's own whole-number ids on both sides (no run from 0 or 1) join by id
    assert positions_in_disguise(_s(7504, 8855), _s(7504, 8855)) is None
    # ids that are no numbers, a pool with one such id, nothing shared: not this rule's
    assert positions_in_disguise([f"q{i}" for i in range(5)], _s(0, 5)) is None
    assert positions_in_disguise([*_s(0, 4), "extra"], _s(0, 5)) is None
    assert positions_in_disguise(_s(0, 5), [f"X{i}" for i in range(5)]) is None
    assert positions_in_disguise(_s(0, 5), _s(100, 105)) is None


def test_ids_counted_in_blocks_agree_with_number_ids() -> None:
    """The streamed pool's count (constant memory) gives what :func:`number_ids` gives
    for plain whole numbers, and stops (saying why) at another spelling or a word."""
    from activetest.data.history_ids import WholeIdsInBlocks, number_ids

    for ids in (["3", "0", "2", "1"], ["1", "2", "3"], ["7504", "7505"], ["0", "2"]):
        c = WholeIdsInBlocks()
        c.add(ids[:1])
        c.add(ids[1:])
        assert c.result == number_ids(ids), ids
    for ids, spelled in ((["0", "007"], True), (["0", "1.0"], True), (["0", "r1"], False)):
        c = WholeIdsInBlocks()
        c.add(ids)
        assert c.result is None and c.other_spelling == spelled, ids
