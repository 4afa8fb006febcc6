"""The scalar options, checked type first (:mod:`activetest.session.options`): a wrong
type is a ValueError saying what to pass, wherever the option is given (creating a
session, estimating), never a TypeError from comparing a string with a number, and a
float or a string is refused, not truncated."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from session_support import PoolFiles

from activetest.session.options import (
    as_integer,
    check_count,
    check_flag,
    check_level,
    check_n_boot,
    check_target_width,
    compare_specs,
)
from activetest.session.workflow import Session


def test_good_values_come_back_as_python_numbers() -> None:
    assert check_level(np.float32(0.5)) == 0.5 and type(check_level(0.9)) is float
    assert check_n_boot(np.int64(50)) == 50 and type(check_n_boot(np.int64(50))) is int
    assert check_target_width(np.float64(0.1)) == 0.1 and check_target_width(None) is None
    assert check_target_width(1) == 1.0
    assert check_count(None, "shots", "examples") is None
    assert check_count(np.int16(0), "shots", "examples") == 0


@pytest.mark.parametrize("bad", [True, False, np.True_, np.False_, np.bool_(1), 300.0,
                                 np.float64(3.0), "3"])
def test_a_bool_or_a_float_is_no_integer(bad: Any) -> None:
    """numpy's bool (``np.True_``, ``numpy.bool`` in numpy 2) is refused as Python's is
    (the check looked for the type name ``bool_``, numpy 1's), not read as 1; an integer
    of either kind comes back as an int."""
    assert as_integer(bad) is None
    with pytest.raises(ValueError, match=r"^shots must be a whole number of in-context "):
        check_count(bad, "shots", "in-context examples")
    assert as_integer(np.int8(3)) == 3 and type(as_integer(np.uint64(3))) is int
    assert as_integer(7) == 7


@pytest.mark.parametrize("bad", ["0.9", True, None, 0.0, 1, float("nan"), [0.9]])
def test_level_says_what_to_pass(bad: Any) -> None:
    with pytest.raises(ValueError, match=r"level must be a coverage in \(0, 1\), e\.g\. 0\.95"):
        check_level(bad)


@pytest.mark.parametrize("bad", ["5", 10.7, 100.0, True, np.True_, 1, None])
def test_n_boot_is_refused_not_truncated(bad: Any) -> None:
    shown = bad.item() if isinstance(bad, np.generic) else bad
    with pytest.raises(ValueError, match="n_boot must be a whole number of bootstrap") as e:
        check_n_boot(bad)
    assert str(e.value).endswith(f"got {shown!r}")


@pytest.mark.parametrize("bad", ["0.1", True, False, 0, -1, float("nan"), float("inf")])
def test_target_width_says_what_to_pass(bad: Any) -> None:
    # True was a width of 1.0 (QA)
    with pytest.raises(ValueError, match="target width must be a number from 1e-06"):
        check_target_width(bad)


@pytest.mark.parametrize("bad", ["8", 2.0, True, -1])
def test_counts_are_whole_numbers(bad: Any) -> None:
    with pytest.raises(ValueError, match=r"^shots must be a whole number of in-context "
                                         r"examples, 0 or more, got "):
        check_count(bad, "shots", "in-context examples")


def test_a_spec_alone_is_one_compared_target(tmp_path: Path) -> None:
    class _Scorer:  # a model object: one with a score method
        def score(self, *args: Any) -> None:
            return None

    scorer = _Scorer()
    assert compare_specs("table:b.csv") == ["table:b.csv"]  # not its 11 characters
    assert compare_specs(tmp_path) == [tmp_path]
    assert compare_specs(scorer) == [scorer]
    assert compare_specs(["a", "b"]) == ["a", "b"] and compare_specs(("a",)) == ["a"]
    assert compare_specs(None) == [] and compare_specs(()) == [] and compare_specs([]) == []


@pytest.mark.parametrize(("bad", "message"), [
    (0, "compare: 0 is neither a model spec"),
    (False, "compare: False is neither a model spec"),
    (0.0, "compare: 0.0 is neither a model spec"),
    ({}, "compare: {} is neither a model spec"),
    ("", "compare: '' is an empty model spec"),
    (["a", " "], "compare[1]: ' ' is an empty model spec"),
    ([None], "compare[0]: None is neither a model spec"),
])
def test_only_none_or_an_empty_list_means_no_comparison(bad: Any, message: str) -> None:
    """QA: compare_specs(0), (False) and ({}) were read as "no comparison" and ("") as a
    model named ""; each is refused by name, with its value."""
    with pytest.raises(ValueError) as e:
        compare_specs(bad)
    assert message in str(e.value)


@pytest.mark.parametrize("bad", ["no", None, 1, 0])
def test_flags_are_true_or_false(bad: Any) -> None:
    with pytest.raises(ValueError, match=r"^overwrite must be True or False, got "):
        check_flag(bad, "overwrite")
    assert check_flag(np.True_, "overwrite") is True and check_flag(False, "x") is False


def _create(pf: PoolFiles, db: Path, **kw: Any) -> Session:
    return Session.create(db, pool=pf.pool, task="demo", surrogate=f"table:{pf.surrogate}",
                          target=f"table:{pf.target}", seed=0, progress=False,
                          pool_options={"id_column": "id"}, **kw)


@pytest.mark.parametrize(("kw", "message"), [
    ({"level": "0.9"}, "level must be a coverage in (0, 1), e.g. 0.95, got '0.9'"),
    ({"n_boot": "100"}, "n_boot must be a whole number of bootstrap resamples"),
    ({"n_boot": 10.5}, "got 10.5"),  # it was stored as 10
    ({"shots": "8"}, "shots must be a whole number of in-context examples, 0 or more, "
                     "got '8'"),
    ({"target_shots": 1.0}, "target_shots must be a whole number"),
    ({"budget": "100"}, "the planned budget must be a whole number of labels"),
])
def test_session_create_refuses_wrong_types_with_what_to_pass(
        pool_files: PoolFiles, tmp_path: Path, kw: dict[str, Any], message: str) -> None:
    if "shots" in kw or "target_shots" in kw:
        kw = {**kw, "examples": pool_files.examples}
    with pytest.raises(ValueError) as e:
        _create(pool_files, tmp_path / "s.db", **kw)
    assert message in str(e.value)
    assert not (tmp_path / "s.db").exists()


def test_session_create_and_estimate_take_one_compare_spec_as_a_string(
        pool_files: PoolFiles, tmp_path: Path) -> None:
    other = f"table:{pool_files.target2}"
    with _create(pool_files, tmp_path / "s.db", compare=other, acquisition="compare",
                 metric="error_rate") as s:
        # stored by the file's name, not its local path (session/spec_files.py)
        assert s.session_config.compare == (f"table:{pool_files.target2.name}",)
        s.select(10)
        s.label_from_data()
        r = s.estimate(compare=other, record=False, progress=False)
        assert [c.spec for c in r.comparisons] == list(s.session_config.compare)
        for kw, message in (({"target_width": "0.1"}, "target width must be a number"),
                            ({"target_width": True}, "target width must be a number"),
                            ({"n_boot": 10.5}, "n_boot must be a whole number"),
                            ({"n_boot": "5"}, "n_boot must be a whole number"),
                            ({"level": "0.9"}, "level must be a coverage")):
            with pytest.raises(ValueError, match=message):
                s.estimate(record=False, progress=False, **kw)


def test_a_pool_reading_option_given_to_create_names_pool_options(
        pool_files: PoolFiles, tmp_path: Path) -> None:
    """``id_column=`` (``init --id-column``) given to Session.create directly says to pass
    it in ``pool_options`` (QA: "create_session() got an unexpected keyword argument
    'id_column'"), and writes no file; inside pool_options it creates the session."""
    db = tmp_path / "s.db"
    kw: dict[str, Any] = dict(pool=pool_files.pool, task="demo", progress=False,
                              surrogate=f"table:{pool_files.surrogate}",
                              target=f"table:{pool_files.target}")
    with pytest.raises(TypeError, match=r"^Session\.create\(\) got id_column=: an option of "
                                        r"reading the pool file; pass pool_options="
                                        r"\{'id_column': 'id'\} \(as `activetest init "
                                        r"--id-column`\)$"):
        Session.create(db, id_column="id", **kw)
    assert not db.exists()
    with Session.create(db, pool_options={"id_column": "id"}, **kw) as s:
        assert s.items()[0].id == pool_files.ids[0]
