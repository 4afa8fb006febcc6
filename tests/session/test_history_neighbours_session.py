"""The neighbours' column in history sessions (``init --history``; issue 21): what is
stored, that the draws are the design's own with the labels the refits saw, replay and
``kill -9`` lose nothing, and ``--no-history-neighbours`` keeps the numbers of sessions
made before the column existed (real files, real SQLite, real CLI)."""

from __future__ import annotations

import csv
import io
import json
import math
import random
import sqlite3
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from session_support import cli_env, run_cli_process, run_select_label_loop

from activetest.session import checkpoint, draw
from activetest.session.design import history_design, stored_design
from activetest.session.history_neighbours import (
    KEY,
    ROLE,
    NeighbourSettings,
    NeighbourUpdate,
    settings_of,
    stored_responses,
)
from activetest.session.store import SessionError
from activetest.session.workflow import Session
from activetest.stats import adaptive_lure
from activetest.stats.adaptive import AdaptiveSampler, simulate_design
from activetest.stats.neighbours import EPS_CANDIDATES

DATA = Path(__file__).parent / "data" / "history_before_neighbours"
sys.path.insert(0, str(DATA))
import make_expected as mx  # noqa: E402

EXPECTED = json.loads((DATA / "expected.json").read_text(encoding="utf-8"))
KINDS = ("graded", "classification")


@pytest.fixture(scope="module")
def hist(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return mx.write_history(tmp_path_factory.mktemp("history"))


def _truth(kind: str) -> tuple[list[str], np.ndarray]:
    """The pool's ids (pool order) and the target's loss per item."""
    if kind == "graded":
        recs = [json.loads(x) for x in (mx.INPUTS / "graded.jsonl").read_text().splitlines()]
        return [r["id"] for r in recs], np.array([r["judgment"] != "correct" for r in recs],
                                                 dtype=float)
    with open(mx.INPUTS / "pool.csv", newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    with open(mx.INPUTS / "target.csv", newline="", encoding="utf-8") as f:
        t = list(csv.DictReader(f))
    classes = ["negative", "neutral", "positive"]
    pred = [max(classes, key=lambda c, r=r: float(r[c])) for r in t]
    return [r["id"] for r in rows], np.array([p != r["label"] for p, r in
                                              zip(pred, rows, strict=True)], dtype=float)


def _csv_matrix(path: Path, ids: list[str]) -> tuple[list[str], np.ndarray]:
    """The history file read here, joined to the pool by id (not by position); the
    target's row 'me' left out."""
    with open(path, newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    where = {c: k for k, c in enumerate(rows[0])}
    models = [r[0] for r in rows[1:] if r[0] != "me"]
    M = np.full((len(models), len(ids)), np.nan)
    for h, r in enumerate(r for r in rows[1:] if r[0] != "me"):
        for i, item in enumerate(ids):
            if item in where:
                M[h, i] = float(r[where[item]])
    return models, M


def _hex_draws(s: Session) -> list[list[Any]]:
    return [[a.index, float(a.q).hex()] for a in s.acquisitions()]


@pytest.mark.parametrize("kind", KINDS)
def test_without_neighbours_the_numbers_are_those_before_the_column(
        kind: str, hist: dict[str, Path], tmp_path: Path) -> None:
    """``history_neighbours=False``: the draws, design rows and estimate of a session made
    by the version before the column (expected.json, make_expected.py): the same items drawn
    in the same order, every number to 1e-9 relative."""
    with mx.create(kind, tmp_path / "s.db", hist[kind], history_neighbours=False) as s:
        assert KEY not in s.config["history"] and s.store.scores(ROLE) is None
        got = mx.run(s)
    want = EXPECTED[kind]
    # The same items in the same order; every number to 1e-9 relative, not to the last bit:
    # expected.json was written on another machine, and the features' SVD and numpy's
    # vectorised sums may round the last bit differently on another CPU or BLAS (seen: a
    # draw's q differing in its last hex digit on AMD EPYC with numpy 2.4.6).
    assert [d[0] for d in got["draws"]] == [d[0] for d in want["draws"]]
    _assert_close([d[1] for d in got["draws"]], [d[1] for d in want["draws"]], "q")
    assert len(got["design"]) == len(want["design"])
    for i, (g_row, w_row) in enumerate(zip(got["design"], want["design"], strict=True)):
        assert len(g_row) == len(w_row), i
        for g, w in zip(g_row, w_row, strict=True):
            if isinstance(w, str) and w.startswith(("0x", "-0x")):
                _assert_close([g], [w], f"design row {i}")
            else:
                assert g == w, (i, g, w)
    assert set(got["estimate"]) == set(want["estimate"])
    for k, w in want["estimate"].items():
        _assert_close([got["estimate"][k]], [w], k)


def _assert_close(got: list[str], want: list[str], what: str) -> None:
    """Hex floats equal to 1e-9 relative (an absolute 1e-12 floor near zero)."""
    for g, w in zip(got, want, strict=True):
        gf, wf = float.fromhex(g), float.fromhex(w)
        assert abs(gf - wf) <= 1e-9 * abs(wf) + 1e-12, (what, g, w)


@pytest.mark.parametrize("kind", KINDS)
def test_new_history_sessions_draw_by_the_neighbour_design(
        kind: str, hist: dict[str, Path], tmp_path: Path) -> None:
    """The default: the response matrix stored (joined by id), eps recorded, and every
    draw the one a sampler of the neighbour design makes with the same labels; the
    estimate is adaptive LURE of those draws; a reopened session goes on the same."""
    ids, loss = _truth(kind)
    models, M = _csv_matrix(hist[kind], ids)
    with mx.create(kind, tmp_path / "s.db", hist[kind]) as s:
        rec = s.config["history"][KEY]
        nb = settings_of(s.config["history"])
        assert nb is not None and nb.eps in EPS_CANDIDATES and nb.prior_weight == 1.0
        assert rec["role"] == ROLE and len(rec["eps_scores"]) == len(EPS_CANDIDATES)
        stored = s.store.scores(ROLE)
        assert stored is not None and stored.provenance["models"] == models
        np.testing.assert_array_equal(stored_responses(s.store), M)  # NaN where none
        assert np.isnan(M[:, 0]).all() and not np.isnan(M[:, 1:]).any()
        s_lp = s.store.scores("surrogate").logprobs if kind == "classification" else None
        ref_design = history_design(s.store.scores("history").logprobs, "original", s_lp,
                                    M, NeighbourSettings(nb.eps, 1.0))
        assert ref_design.name == "features+neighbours"
        assert stored_design(s.store).spec() == ref_design.spec()
        ref = AdaptiveSampler(ref_design, seed=s.config["seed"])
        got = []
        for b in mx.BATCHES:
            got += s.select(b)
            s.label_from_data()
            idx, _ = ref.draw(b)
            ref.observe(losses=loss[idx].tolist())
        assert [a.index for a in got] == ref.acquired
        np.testing.assert_allclose([a.q for a in got], ref.q, rtol=1e-12, atol=0)
        dd = s.store.design_draws()
        np.testing.assert_allclose([d[0] for d in dd], ref.control, rtol=1e-12, atol=1e-15)
        assert ref.refits[-1] >= 5  # the design (and its column) did learn
        info = draw.design_info(s.store)
        assert info["model"].startswith("history features + " + (
            "surrogate + " if kind == "classification" else "") + "neighbours (eps ")
        assert "neighbours" in info["weights"] and "difficulty log-odds" in info["weights"]
        est = s.estimate(record=False, progress=False).metrics["error_rate"].active.estimate
        want = adaptive_lure(loss[ref.acquired], np.array(ref.q), len(loss),
                             np.array(ref.control), np.array(ref.control_rest))
        assert est == pytest.approx(float(want), rel=1e-12)
    # the column changed the draws (against the design without it, expected.json)
    assert _hex_draws_of(got) != EXPECTED[kind]["draws"]
    with Session.open(tmp_path / "s.db") as s:  # reopened: replays, then goes on the same
        more = s.select(4)
        idx, _ = ref.draw(4)
        assert [a.index for a in more] == idx.tolist()
        s.label_from_data()
        ref.observe(losses=loss[idx].tolist())
        est2 = s.estimate(record=False, progress=False).metrics["error_rate"].active.estimate
    want = adaptive_lure(loss[ref.acquired], np.array(ref.q), len(loss),
                         np.array(ref.control), np.array(ref.control_rest))
    assert est2 == pytest.approx(float(want), rel=1e-12)


def _hex_draws_of(acq: list[Any]) -> list[list[Any]]:
    return [[a.index, float(a.q).hex()] for a in acq]


def test_one_label_at_a_time_is_the_simulated_run(hist: dict[str, Path],
                                                  tmp_path: Path) -> None:
    """Selecting one item at a time, each labelled before the next: the session's draws
    are those of ``simulate_design`` (one run, the session's seed) on the same losses,
    so the column is updated from exactly the labels each refit sees."""
    _, loss = _truth("graded")
    with mx.create("graded", tmp_path / "s.db", hist["graded"]) as s:
        for _ in range(24):
            s.select(1)
            s.label_from_data()
        got = [a.index for a in s.acquisitions()]
        runs = simulate_design(stored_design(s.store), losses=loss, labels=None, budget=24,
                               n_runs=1, random_state=s.config["seed"])
    assert got == runs.indices[0].tolist()


@pytest.mark.parametrize("after", ["drop", "freeze"])
def test_a_limited_update_is_the_simulated_limited_design(hist: dict[str, Path],
                                                          tmp_path: Path, after: str) -> None:
    """``history_neighbours=NeighbourUpdate(K, after)``: the record holds the limit, the
    stored design is ``neighbour_design(..., update_until=K, after=...)`` (its name says
    so) and one label at a time its draws are that design's simulated run; they leave the
    unlimited design's once the limit bites."""
    _, loss = _truth("graded")
    got = {}
    for name, opt in (("limited", NeighbourUpdate(6, after)), ("unlimited", True)):
        with mx.create("graded", tmp_path / f"{name}.db", hist["graded"],
                       history_neighbours=opt) as s:
            rec = s.config["history"][KEY]
            design = stored_design(s.store)
            for _ in range(24):
                s.select(1)
                s.label_from_data()
            got[name] = [a.index for a in s.acquisitions()]
            runs = simulate_design(stored_design(s.store), losses=loss, labels=None,
                                   budget=24, n_runs=1, random_state=s.config["seed"])
            assert got[name] == runs.indices[0].tolist()
        if name == "limited":
            assert rec["update_until"] == 6 and rec["after"] == after
            assert design.name.endswith(f"+neighbours-{after}6")
            assert settings_of({KEY: rec}).update == NeighbourUpdate(6, after)
        else:
            assert "update_until" not in rec and design.name.endswith("+neighbours")
    assert got["limited"] != got["unlimited"]


@pytest.mark.parametrize("args, message", [
    (("--history-neighbours-until", "5", "--no-history-neighbours"), "no column to limit"),
    (("--history-neighbours-after", "drop"), "needs --history-neighbours-until"),
    (("--history-neighbours-until", "-1"), "count of labels >= 0"),
    (("--history-neighbours-until", "5", "--history-neighbours-after", "melt"),
     "one of drop, freeze"),
])
def test_bad_limited_update_options_are_one_message(hist: dict[str, Path], tmp_path: Path,
                                                    args: tuple[str, ...],
                                                    message: str) -> None:
    db = tmp_path / "s.db"
    base = ("--task", "squad", "--pool", mx.INPUTS / "graded.jsonl", "--target", "pool",
            "--surrogate", "history", "--history", hist["graded"], "--history-exclude", "me",
            "--seed", "11", "--no-progress")
    out = run_cli_process("init", db, *base, *args, code=2)
    assert message in out and "Traceback" not in out
    assert not db.exists()


def test_cli_sets_and_names_a_limited_update(hist: dict[str, Path], tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    out = run_cli_process("init", db, "--task", "squad", "--pool", mx.INPUTS / "graded.jsonl",
                          "--target", "pool", "--surrogate", "history", "--history",
                          hist["graded"], "--history-exclude", "me", "--seed", "11",
                          "--no-progress", "--history-neighbours-until", "60",
                          "--history-neighbours-after", "freeze")
    assert "updated until 60 labels, then frozen" in out
    with Session.open(db) as s:
        assert stored_design(s.store).name.endswith("+neighbours-freeze60")
    out = run_cli_process("status", db)
    assert "updated until 60 labels, then frozen" in out


def test_a_limited_update_without_history_is_refused(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    out = run_cli_process("init", db, "--task", "squad", "--pool", mx.INPUTS / "graded.jsonl",
                          "--target", "pool", "--surrogate", "uniform",
                          "--history-neighbours-until", "5", "--no-progress", code=2)
    assert "give --history" in out and not db.exists()


def test_a_bad_stored_limited_update_is_refused() -> None:
    good = {"eps": 0.1, "prior_weight": 1.0, "update_until": 4, "after": "freeze"}
    assert NeighbourSettings.from_record(good).update == NeighbourUpdate(4, "freeze")
    for bad in ({**good, "update_until": -2}, {**good, "after": "melt"},
                {**good, "update_until": 2.5}):
        with pytest.raises(SessionError, match="update_until"):
            NeighbourSettings.from_record(bad)


_SCRATCH = ("nkeep", "nwv", "nacc", "ncol")  # the column's work arrays (never read first)


def _same_bits(a: Any, b: Any) -> None:
    m, k = len(b.acquired), len(b.losses)
    for name in ("acquired", "q", "control", "control_rest", "lam", "n_known", "labels",
                 "losses", "refits", "model_var"):
        x = np.asarray(getattr(a, name), dtype=np.float64)
        y = np.asarray(getattr(b, name), dtype=np.float64)
        assert x.tobytes() == y.tobytes(), name
    assert set(a._st) == set(b._st) and {"X", "nlw", "ncnt"} <= set(b._st)
    for key, y in b._st.items():
        if key in _SCRATCH:
            continue
        x = a._st[key]
        if key in ("hy", "hL"):
            x, y = x[:k], y[:k]
        elif key.startswith("h") or key == "absres":
            x, y = x[..., :m], y[..., :m]
        assert x.dtype == y.dtype and x.tobytes() == y.tobytes(), key


def _both_paths(s: Session) -> tuple[Any, Any]:
    store = s.store
    row = store.sampler_row()
    assert row is not None
    design = stored_design(store)
    acq, dd = store.acquisitions(), store.design_draws()
    return (checkpoint.load(store, design, row[1], row[2], acq, dd),
            draw._full_replay(store, design, row[1], row[2], acq, dd))


def test_checkpoint_and_full_replay_are_the_same_sampler(
        hist: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The checkpoint (with the column's state: its matrix column, the log-weights) is
    the full replay's sampler, and the estimate is the same either way."""
    with mx.create("graded", tmp_path / "s.db", hist["graded"]) as s:
        for b in mx.BATCHES:
            s.select(b)
            if b != 2:  # once, a batch waits for its labels over the next select
                s.label_from_data()
        s.label_from_data()
        ck, full = _both_paths(s)
        assert ck is not None
        _same_bits(ck, full)
        # its per-item arrays were not stored but recomputed by the last refit run again
        # (on the matrix with the column as that refit computed it)
        (raw,), = s.store._conn.execute("SELECT state FROM adaptive_checkpoints").fetchall()
        with np.load(io.BytesIO(bytes(raw)), allow_pickle=False) as z:
            assert int(z["per_item"][0]) == 3 and int(ck._st["ist"][1]) > 1
        texts = []
        for use in ("1", "0"):
            monkeypatch.setenv("ACTIVETEST_CHECKPOINTS", use)
            texts.append(repr(s.estimate(record=False, progress=False)))
        assert texts[0] == texts[1]




@pytest.mark.skipif(sys.platform == "win32", reason="needs SIGKILL")
def test_kill_9_mid_session_loses_nothing(hist: dict[str, Path], tmp_path: Path) -> None:
    """A real child drawing and labelling, killed at a random moment: every label it
    wrote is kept, and the session goes on with the draws of one never interrupted."""
    n = 24
    env = cli_env(tmp_path)
    ref_db, db = tmp_path / "ref.db", tmp_path / "k.db"
    for p in (ref_db, db):
        mx.create("graded", p, hist["graded"]).close()
    run_select_label_loop(ref_db, n, env)
    with Session.open(ref_db) as s:
        ref = [(a.index, a.q) for a in s.acquisitions()]
    run_select_label_loop(db, n, env, kill_at=random.Random(21).randint(3, 15))
    with Session.open(db) as s:
        before = [(a.index, a.q) for a in s.acquisitions()]
        assert before == ref[: len(before)]
        ck, full = _both_paths(s)
        if ck is not None:
            _same_bits(ck, full)
        s.label_from_data()
        while len(s.acquisitions()) < n:
            s.select(1 + len(s.acquisitions()) % 3)
            s.label_from_data()
        assert [(a.index, a.q) for a in s.acquisitions()] == ref


def test_cli_names_the_design_and_the_flag_turns_it_off(hist: dict[str, Path],
                                                         tmp_path: Path) -> None:
    base = ("init", "--task", "squad", "--pool", mx.INPUTS / "graded.jsonl", "--target",
            "pool", "--surrogate", "history", "--history", hist["graded"],
            "--history-exclude", "me", "--seed", "11", "--no-progress")
    on, off = tmp_path / "on.db", tmp_path / "off.db"
    out = run_cli_process(base[0], on, *base[1:])
    assert "design: history features + neighbours (eps " in out
    out = run_cli_process(base[0], off, *base[1:], "--no-history-neighbours")
    assert "design: history features (no neighbours)" in out
    with Session.open(off) as s:
        assert KEY not in s.config["history"]
    with Session.open(on) as s:
        s.select(12)
        s.label_from_data()
        s.select(3)  # the design refits on the 12 labels
    out = run_cli_process("status", on)
    assert "design: history features + neighbours" in out
    out = run_cli_process("status", off, "--json")
    assert '"history_design": "history features (no neighbours)"' in out
    out = run_cli_process("estimate", on)
    # named as init and status name it (QA: estimate dropped the features' details)
    assert "design graded_adaptive: history features + neighbours (eps " in out
    assert "prior weight 1), 1 refit(s)" in out
    assert "neighbours " in out.split("weights", 1)[1]  # its fitted weight, named


def test_the_neighbours_data_is_built_once_per_open_store(
        hist: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every select/estimate rebuilds the design; the neighbours' data of the stored
    matrix is built once per open store (SessionStore.derived) and is, byte for byte,
    what neighbour_history made of the stored matrix before (numpy steps). Built again:
    after a write of the matrix through the store, after another writer changed its row,
    and in a newly opened store."""
    import activetest.stats.neighbours as sn

    calls: list[int] = []
    orig = sn.neighbour_history
    monkeypatch.setattr(sn, "neighbour_history",
                        lambda *a, **k: calls.append(1) or orig(*a, **k))
    db = tmp_path / "s.db"
    with mx.create("graded", db, hist["graded"]) as s:
        nb = settings_of(s.config["history"])
        assert nb is not None
        calls.clear()
        for b in (1, 2, 1):
            s.select(b)
            s.label_from_data()
        s.estimate(record=False, progress=False)
        assert len(calls) == 1
        nh = stored_design(s.store).neighbours
        p = s.store.scores("history").logprobs[:, 0]
        ref = sn._make(sn._filled(stored_responses(s.store), p), nb.eps)
        for k in ("PT", "base", "log_p", "log_1mp"):
            assert getattr(nh, k).tobytes() == getattr(ref, k).tobytes(), k
        assert stored_design(s.store).neighbours is nh and len(calls) == 1
        R = s.store.scores(ROLE)
        s.store.put_scores(ROLE, R.spec, R.logprobs, R.provenance, predictions=False)
        assert stored_design(s.store).neighbours is not nh and len(calls) == 2
        con = sqlite3.connect(db)  # another writer: the role's row changes
        con.execute("UPDATE scores SET updated = 'later' WHERE role = ?", (ROLE,))
        con.commit()
        con.close()
        s.select(1)
        assert len(calls) == 3
        s.select(1)
        assert len(calls) == 3
    with Session.open(db) as s:
        s.select(1)
        s.estimate(record=False, progress=False)
    assert len(calls) == 4


def test_a_missing_response_matrix_is_one_message(hist: dict[str, Path],
                                                   tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    with mx.create("graded", db, hist["graded"]) as s:
        s.select(3)
    con = sqlite3.connect(db)
    con.execute("DELETE FROM scores WHERE role = ?", (ROLE,))
    con.commit()
    con.close()
    with Session.open(db) as s, pytest.raises(SessionError, match="response matrix"):
        s.select(1)
    out = run_cli_process("select", db, "--n", "1", code=2)
    assert "response matrix" in out and ROLE in out


@pytest.mark.parametrize("rec", [{"eps": 0.6}, {"eps": "x"}, {"eps": 0.1, "prior_weight": None},
                                 [0.1]])
def test_a_bad_stored_record_is_refused(rec: Any) -> None:
    with pytest.raises(SessionError, match=r"config\.history\.neighbours"):
        NeighbourSettings.from_record(rec)
    assert math.isfinite(NeighbourSettings.from_record({"eps": 0.1}).prior_weight)


SHARED = Path(__file__).resolve().parents[3] / "shared" / "datasets" / "history" / \
    "bbh_shuffled_objects_5.csv"


@pytest.mark.skipif(not SHARED.exists(), reason="the shared history matrices are absent")
def test_a_real_matrix_is_stored_joined_by_id(tmp_path: Path) -> None:
    """A slice of the shared BBH matrix (150 models): the pool lists the items in reverse
    and the history file's columns are shuffled; the stored matrix is the slice's cells
    by item id."""
    from activetest.formats.history import read_response_matrix

    M = read_response_matrix(SHARED)
    rng = np.random.default_rng(5)
    rows = rng.choice(M.scores.shape[0], 151, replace=False)
    order = np.arange(len(M.item_ids))[::-1]  # the pool's order
    pool = tmp_path / "pool.jsonl"
    pool.write_text("".join(json.dumps({"id": M.item_ids[i], "question": f"q {i}?",
                                        "answer": "yes" if M.scores[rows[0], i] == 1 else "no",
                                        "references": ["yes"]}) + "\n" for i in order))
    cols = rng.permutation(len(M.item_ids))
    hist = tmp_path / "h.csv"
    hist.write_text("model," + ",".join(M.item_ids[c] for c in cols) + "\n" + "".join(
        f"{M.models[h]}," + ",".join(f"{M.scores[h, c]:g}" for c in cols) + "\n"
        for h in rows[1:]))
    with Session.create(tmp_path / "s.db", pool=str(pool), task="answers", target="pool",
                        surrogate="history", history=[hist], seed=0, progress=False) as s:
        got = stored_responses(s.store)
        np.testing.assert_array_equal(got, M.scores[rows[1:]][:, order])
        assert s.store.scores(ROLE).provenance["models"] == [M.models[h] for h in rows[1:]]
        s.select(5)
        s.label_from_data()
        s.select(5)  # refitted with the column
        assert draw.design_info(s.store)["model"].startswith(
            "history features + neighbours (eps ")


def test_a_history_too_large_for_the_column_leaves_it_out_and_says_so(
        hist: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from activetest.session import history_neighbours as hn

    monkeypatch.setattr(hn, "MAX_CELLS", 1000)  # 25 models x 120 items is over it
    with mx.create("graded", tmp_path / "s.db", hist["graded"]) as s:
        h = s.config["history"]
        assert KEY not in h and s.store.scores(ROLE) is None
        assert any("neighbours' column is left out: 25 models x 120 items" in m
                   for m in h["messages"])
        got = mx.run(s)
    assert got["draws"] == EXPECTED["graded"]["draws"]  # the design without it


def test_an_lmeval_session_refuses_a_history_it_would_not_use(tmp_path: Path) -> None:
    """``--target lm-eval --surrogate uniform`` draws uniformly: a ``--history`` is refused,
    not silently dropped (with ``--surrogate history`` or ``pool-run`` it is the design's:
    tests/session/test_lmeval_history.py)."""
    from activetest.session.harness import create_lmeval_session

    with pytest.raises(SessionError, match=r"--surrogate uniform draws uniformly"):
        create_lmeval_session(tmp_path / "s.db", pool=tmp_path / "none.jsonl", task="answers",
                              target="lm-eval", surrogate="uniform",
                              history=[tmp_path / "h.csv"])
    assert not (tmp_path / "s.db").exists()
