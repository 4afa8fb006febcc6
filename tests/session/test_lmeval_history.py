"""Other models' lm-eval runs as the history of an lm-eval session (issue 22: the harness
session draws from "surrogate scores, history features, or both").

Every samples file is written by lm-eval's own command line (``tests/lmeval_cli.py``, the
deterministic ``at-hash`` model; ``skill``/``salt`` make other models). The pool is a
cheaper model's full run, the history two more models' full runs, the target's results
the ``lmeval_files`` fixture's full run (0-shot tasks: a subset run's per-item results
are the full run's, tests/session/test_lmeval_loop.py checks that).
"""

from __future__ import annotations

import json
import os
import shutil
import warnings
from pathlib import Path

import numpy as np
import pytest
from session_support import run_cli
from tests.lmeval_harness import HarnessFiles, run_lm_eval, run_lm_evals, subset_of

from activetest.formats.lmeval_results import read_results
from activetest.session.create_history import HistoryTargetNotice
from activetest.session.design import POOL_SIGNAL, history_design, stored_design
from activetest.session.history_neighbours import settings_of
from activetest.session.workflow import Session
from activetest.stats.adaptive import AdaptiveSampler

pytestmark = pytest.mark.slow  # lm-eval runs (about 5 CPU-s a process, 1 a run more)

TASKS = "at_sst2_rev,at_mmlu"


run = run_cli


def full_run(files: HarnessFiles, out: Path, skill: float, salt: str, more: str = "",
             tasks: str = TASKS) -> tuple[str | Path, ...]:
    """One model's full run for :func:`run_lm_evals` (lm-eval's command line; ``more``:
    more ``--model_args``, e.g. ``,pretrained=NAME``)."""
    return (out, tasks, "--model_args",
            f"docs={files.root / 'docs.json'},skill={skill},salt={salt}{more}")


#: The module's runs (:func:`runs`): the pool run, the history's two models, a run of a
#: model at a local path (``/models/ckpt``) and two local checkpoints of one last name.
LOCAL = ",pretrained=/models/ckpt"
CKPTS = ("/runs/a/checkpoint-1000", "/runs/b/checkpoint-1000")


@pytest.fixture(scope="module")
def runs(lmeval_files: HarnessFiles, tmp_path_factory: pytest.TempPathFactory
         ) -> dict[str, list[Path]]:
    """Every model's full run the module reads, written by one lm-eval process (one run
    after another: lm-eval imported once): ``pool``, ``h1`` and ``h2`` (the history) in
    folders of their own names; ``ckpt`` (:data:`LOCAL`, in ``local/``) and ``ckpt_a`` /
    ``ckpt_b`` (:data:`CKPTS`, ``at_sst2_rev`` only, in ``ckpts/a`` and ``ckpts/b``)."""
    root = tmp_path_factory.mktemp("runs")
    f = lmeval_files
    spec = {"pool": full_run(f, root / "pool", 0.6, "cheap"),
            "h1": full_run(f, root / "h1", 1.5, "one"),
            "h2": full_run(f, root / "h2", 0.3, "two"),
            "ckpt": full_run(f, root / "local", 1.5, "t", LOCAL),
            **{f"ckpt_{k}": full_run(f, root / "ckpts" / k, skill, salt, f",pretrained={p}",
                                     tasks="at_sst2_rev")
               for k, skill, salt, p in zip("ab", (1.2, 0.4), ("ca", "cb"), CKPTS,
                                            strict=True)}}
    out = dict(zip(spec, run_lm_evals(f, list(spec.values())), strict=True))
    assert all(len(v) == (1 if k.startswith("ckpt_") else 4) for k, v in out.items())
    return out


def target_results(files: HarnessFiles) -> dict[str, float]:
    """The target's full run: ``<task>/<doc_id>`` -> acc."""
    paths = [files.samples("at_sst2_rev"), *sorted(files.run.glob("samples_at_mmlu_*.jsonl"))]
    return {r.key: r.metrics["acc"] for r in read_results(paths)}


def init(tmp_path: Path, runs: dict[str, list[Path]], surrogate: str, *extra: object,
         code: int = 0) -> tuple[Path, str]:
    db = tmp_path / "eval.db"
    out = run("init", db, "--pool", runs["pool"][0].parent / "samples_*.jsonl", "--task",
              "answers", "--target", "lm-eval", "--surrogate", surrogate, "--seed", 3,
              "--no-progress", *extra, code=code)
    return db, out


def test_history_alone_and_with_the_pool_run_draw_by_the_feature_design(
        runs: dict[str, list[Path]], lmeval_files: HarnessFiles, tmp_path: Path) -> None:
    h1, h2 = runs["h1"][0].parent, runs["h2"][0].parent
    truth = target_results(lmeval_files)
    full = [lmeval_files.samples("at_sst2_rev"),
            *sorted(lmeval_files.run.glob("samples_at_mmlu_*.jsonl"))]
    for surrogate in ("history", "pool-run"):
        d = tmp_path / surrogate
        d.mkdir()
        db, out = init(d, runs, surrogate, "--history", h1, "--history", h2,
                       "--no-history-neighbours")
        assert f"history: 2 model(s) from {h1}, {h2}; 60 of 60 pool items have history" \
            in " ".join(out.split())
        assert "design: history features" in out
        assert ("the pool run's choice features" in out) == (surrogate == "pool-run")
        with Session.open(db) as s:
            cfg = s.session_config
            # the file names the folders and files, never by their local paths (QA)
            # (lm-eval's folders of the two runs share a name: named by a suffix)
            rec = cfg.extra["history"]
            named = ([h1.name, h2.name] if h1.name != h2.name else
                     [f"{h.parent.name}/{h.name}" for h in (h1, h2)])
            assert rec["sources"] == named, rec["sources"]
            assert str(h1.parent) not in json.dumps(rec), rec
            assert sorted(f["name"] for f in rec["files"]) == sorted(
                f"{n}/{p.name}" for n, k in zip(named, ("h1", "h2"), strict=True)
                for p in runs[k])
            assert cfg.design_variant == "features" and cfg.acquisition == "graded_adaptive"
            feats = cfg.extra["history"].get("features") or []
            assert (POOL_SIGNAL in feats) == (surrogate == "pool-run")
            design = stored_design(s.store)
            names = getattr(design, "columns", ())
            assert ("pool run log-prob of the key" in names) == (surrogate == "pool-run")
            assert np.allclose(s.store.scores("acquisition").logprobs[:, 0],
                               design.plan([]).q)
            keys = list(s.store.item_ids())
        # three rounds of select -> (the target's results) -> import
        for k in range(3):
            run("select", db, "--n", 7, "--emit", "lm-eval", "--out", d / f"s{k}.json")
            mapping = json.loads((d / f"s{k}.json").read_text())
            files = subset_of(full, mapping, d / f"round{k}" / "fake")
            run("import", db, *files)
        with Session.open(db) as s:
            draws = s.store.acquisitions()
            order = [a.index for a in draws]
            cfg = s.session_config
            # the same draws as the design itself, refitted on the same labels
            h = s.store.scores("history").logprobs
            f = s.store.scores("features")
            design = history_design(h, "original", None, None, settings_of(cfg.extra["history"]),
                                    features=None if f is None or surrogate == "history"
                                    else f.logprobs,
                                    feature_names=None if f is None else
                                    f.provenance.get("names"))
        losses = np.array([1.0 - truth[k] for k in keys])
        ref = AdaptiveSampler(design, seed=3)
        for batch in (7, 7, 7):
            idx, _ = ref.draw(batch)
            ref.observe(losses=losses[idx].tolist())
        assert order == list(ref.acquired), surrogate
        est = run("estimate", db)
        assert "error rate" in est
        st = " ".join(run("status", db).split())
        assert "design: history features" in st and "target runs spent: 21" in st
        assert ("the pool run's choice features" in st) == (surrogate == "pool-run")
        if surrogate == "pool-run":  # two model folders of one last name: named apart
            run("report", db, "--out", d / "report")
            md = (d / "report" / "report.md").read_text().replace("\\_", "_")
            # named as the session file names them (never by the local paths)
            assert f"2 other model(s) from {named[0]}, {named[1]}; 60 of 60" in md


def test_history_refusals_name_the_file_and_the_item(runs: dict[str, list[Path]],
                                                      tmp_path: Path) -> None:
    h1 = runs["h1"][0].parent
    # --surrogate uniform learns nothing from a history; history needs its folders
    _, out = init(tmp_path, runs, "uniform", "--history", h1, code=2)
    assert "--surrogate uniform" in out and "--surrogate history" in out
    _, out = init(tmp_path, runs, "history", code=2)
    assert "--history DIR" in out
    # lm-eval's results summary, an empty folder: named, with what to give instead
    summary = sorted(h1.glob("results_*.json"))[0]
    _, out = init(tmp_path, runs, "history", "--history", summary, code=2)
    assert "results summary" in out and "--log_samples" in out
    (tmp_path / "empty").mkdir()
    _, out = init(tmp_path, runs, "history", "--history", tmp_path / "empty", code=2)
    assert "no lm-eval samples file in the folder" in " ".join(out.split())
    # a response matrix: its columns would be positions taken on trust
    mat = tmp_path / "matrix.csv"
    mat.write_text("model," + ",".join(f"at_sst2_rev/{i}" for i in range(3)) + "\nm,1,0,1\n")
    _, out = init(tmp_path, runs, "history", "--history", mat, code=2)
    assert "matrix.csv" in out and "position" in out
    assert not (tmp_path / "eval.db").exists()
    # another document under a pool item's id (a reordered dataset)
    moved = tmp_path / "moved" / "m"
    shutil.copytree(h1, moved)
    f = sorted(moved.glob("samples_at_sst2_rev_*.jsonl"))[0]
    recs = [json.loads(x) for x in f.read_text().splitlines()]
    recs[0]["doc"], recs[1]["doc"] = recs[1]["doc"], recs[0]["doc"]
    f.write_text("".join(json.dumps(r) + "\n" for r in recs))
    _, out = init(tmp_path, runs, "history", "--history", moved.parent, code=2)
    assert f.name in out and "line 1" in out and "at_sst2_rev/" in out
    assert "another document than the pool's" in out
    assert not (tmp_path / "eval.db").exists()
    # a record without the session's metric
    nometric = tmp_path / "nometric" / "m"
    shutil.copytree(h1, nometric)
    f = sorted(nometric.glob("samples_at_sst2_rev_*.jsonl"))[0]
    recs = [json.loads(x) for x in f.read_text().splitlines()]
    del recs[2]["acc"]
    recs[2]["metrics"] = []
    f.write_text("".join(json.dumps(r) + "\n" for r in recs))
    _, out = init(tmp_path, runs, "history", "--history", nometric.parent, code=2)
    assert "'acc'" in out and "line 3" in out
    # written but no number: the value is shown (QA: "it has no metric", as if absent)
    recs[2]["acc"] = "yes"
    recs[2]["metrics"] = ["acc"]
    f.write_text("".join(json.dumps(r) + "\n" for r in recs))
    _, out = init(tmp_path, runs, "history", "--history", nometric.parent, code=2)
    assert "line 3" in out and "its acc is \"yes\", not a number" in " ".join(out.split())


def test_a_glob_of_model_folders_is_every_folder(runs: dict[str, list[Path]],
                                                 tmp_path: Path) -> None:
    """``--history 'runs/*/'`` (QA: the folders were dropped and only stray files read)."""
    root = runs["h1"][0].parents[2]
    (root / "notes.log").write_text("not a log\n")  # a stray file beside the folders
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", HistoryTargetNotice)
        _, out = init(tmp_path, runs, "history", "--history", f"{root}/h*/")
    assert "history: 2 model(s)" in out


def test_the_targets_own_run_is_named_or_said(runs: dict[str, list[Path]],
                                              tmp_path: Path) -> None:
    h1, h2 = runs["h1"][0].parent, runs["h2"][0].parent
    (tmp_path / "a").mkdir()
    with pytest.warns(HistoryTargetNotice, match="--history-exclude NAME"):
        init(tmp_path / "a", runs, "history", "--history", h1, "--history", h2)
    (tmp_path / "b").mkdir()
    with warnings.catch_warnings():
        warnings.simplefilter("error", HistoryTargetNotice)
        _, out = init(tmp_path / "b", runs, "history", "--history", h1, "--history", h2,
                       "--history-exclude", str(h2))
    assert "not used (named by --history-exclude)" in out and "history: 1 model(s)" in out


def test_an_import_says_when_a_history_row_is_the_targets_own_run(
        runs: dict[str, list[Path]], lmeval_files: HarnessFiles, tmp_path: Path) -> None:
    """The target has no results before its first round, so its own run in the history
    folders cannot be recognised at init; once imports show a row equal to its results on
    every labelled item (20 or more), import says so and how to leave it out."""
    own = tmp_path / "own" / "target"
    own.mkdir(parents=True)
    full = [lmeval_files.samples("at_sst2_rev"),
            *sorted(lmeval_files.run.glob("samples_at_mmlu_*.jsonl"))]
    for f in full:
        shutil.copy(f, own / f.name)
    db, _ = init(tmp_path, runs, "history", "--history", runs["h1"][0].parent, "--history",
                 own.parent)
    said = []
    for k in range(4):
        run("select", db, "--n", 8, "--emit", "lm-eval", "--out", tmp_path / f"s{k}.json")
        mapping = json.loads((tmp_path / f"s{k}.json").read_text())
        files = subset_of(full, mapping, tmp_path / f"round{k}" / "fake")
        said.append(run("import", db, *files))
    # 8 and 16 labels: too few to tell; 24 and 32: the row is named, with the way out
    assert not any("the target's results" in t for t in said[:2])
    for text in said[2:]:
        # (named by its folder's name, not its local path)
        assert f"history row {own.name!r} agrees with the target's results" in " ".join(
            text.split()), text
        assert "--history-exclude" in text


def test_an_import_names_a_history_run_of_the_targets_local_model(
        runs: dict[str, list[Path]], lmeval_files: HarnessFiles, tmp_path: Path) -> None:
    """QA: a target at a local path (``pretrained=/models/ckpt``, as the README's bundled
    model) whose earlier run lies in a --history folder was never recognised by name: its
    results name it ``ckpt`` (a local path is never a name), the history names the row by
    the folder lm-eval wrote it in (``__models__ckpt``), so import and status said nothing
    until 20 labels agreed. The row is named by the model's public name (``ckpt``; by a
    distinguishing suffix where another local model shares it): import and status say so
    from the first round."""
    past = runs["ckpt"]
    assert past[0].parent.name == "__models__ckpt"
    hist = past[0].parents[1]
    db, _ = init(tmp_path, runs, "pool-run", "--history", hist, "--history",
                 runs["h1"][0].parent)
    run("select", db, "--n", 6, "--emit", "lm-eval", "--out", tmp_path / "s.json")
    mapping = json.loads((tmp_path / "s.json").read_text())
    docs = lmeval_files.root / "docs.json"
    # this round of the target, and one of another local model (one lm-eval process)
    got, other = run_lm_evals(lmeval_files, [
        (tmp_path / "round1", ",".join(mapping), "--samples", tmp_path / "s.json",
         "--model_args", f"docs={docs},skill=1.5,salt=t{LOCAL}"),
        (tmp_path / "other", ",".join(mapping), "--samples", tmp_path / "s.json",
         "--model_args", f"docs={docs},pretrained=/models/other")])
    row = "ckpt"  # the model's public name (never the path lm-eval's folder is named by)
    for text in (run("import", db, *got), run("status", db)):
        text = " ".join(text.split())
        assert f"the history holds a run of the target's own model ({row!r})" in text, text
        assert f"--history-exclude {row!r}" in text
    # another local model's round is not taken for it
    (tmp_path / "b").mkdir()
    db2, _ = init(tmp_path / "b", runs, "pool-run", "--history", hist,
                  "--history", runs["h1"][0].parent)
    run("select", db2, "--n", 6, "--emit", "lm-eval", "--out", tmp_path / "s.json")
    assert json.loads((tmp_path / "s.json").read_text()) == mapping  # the same seed
    assert "target's own model" not in run("import", db2, *other)


def test_counts_and_design_names_with_other_tasks_and_neighbours_until(
        runs: dict[str, list[Path]], lmeval_files: HarnessFiles, tmp_path: Path) -> None:
    """A history folder holding other tasks (one of them with two lm-eval filters) says
    those records are of documents the pool does not have, not of other filters (QA: an
    other task's records were counted as "other lm-eval filters"); and a session with
    ``--history-neighbours-until`` is described by ``estimate`` as the history design it
    is, its weights named as its columns (QA: described as the graded design, the
    history's weights named "mean log-prob", ...)."""
    full = [lmeval_files.samples("at_sst2_rev"),
            *sorted(lmeval_files.run.glob("samples_at_mmlu_*.jsonl"))]
    # the fixture's run: the pool's tasks, and at_sst2, _unl, _mi, _filt (2 filters) and
    # at_gen, 40 documents each, none of them the pool's
    db, out = init(tmp_path, runs, "pool-run", "--history", lmeval_files.run,
                   "--history-neighbours-until", 10)
    text = " ".join(out.split())
    assert "240 record(s) of documents the pool does not have" in text
    assert "other lm-eval filters" not in text
    assert "updated until 10 labels, then dropped" in text
    for k in range(2):  # the design is refitted between rounds: its weights are named
        run("select", db, "--n", 8, "--emit", "lm-eval", "--out", tmp_path / f"s{k}.json")
        mapping = json.loads((tmp_path / f"s{k}.json").read_text())
        run("import", db, *subset_of(full, mapping, tmp_path / f"round{k}" / "fake"))
    est = " ".join(run("estimate", db).split())
    assert ("design graded_adaptive: history features + the pool run's choice features + "
            "neighbours (eps") in est
    assert "weights difficulty log-odds" in est and "pool run log-prob of the key" in est
    assert "mean log-prob" not in est and "prior log-odds" not in est


def test_history_exclude_names_a_folder_however_it_is_written(
        runs: dict[str, list[Path]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A run whose results name no model is a row named by its folder as --history wrote
    it; --history-exclude naming that folder otherwise (absolute where --history was
    relative, a trailing '/') names the same row (QA: refused as matching no row)."""
    h1, h2 = runs["h1"][0].parent, runs["h2"][0].parent
    monkeypatch.chdir(h2.parents[1])
    rel = os.path.relpath(h2.parent, Path.cwd())
    _, out = init(tmp_path, runs, "history", "--history", h1, "--history", rel,
                  "--history-exclude", f"{h2}/")
    text = " ".join(out.split())
    # named without the local path: the folder's name, where another folder shares it its
    # shortest distinguishing suffix (QA: stored and reported as the whole path)
    assert h1.name == h2.name
    assert f"row {h2.parent.name + '/' + h2.name!r} not used (named by --history-exclude)" \
        in text
    assert "history: 1 model(s)" in text
    with Session.open(tmp_path / "eval.db") as s:
        assert s.session_config.extra["history"]["models"] == [f"{h1.parent.name}/{h1.name}"]
    # written relative with './' and a trailing '/', or by its row name: the same row
    for k, name in enumerate((f"./{rel}/{h2.name}/", f"{h2.parent.name}/{h2.name}")):
        (tmp_path / f"x{k}").mkdir()
        _, out = init(tmp_path / f"x{k}", runs, "history", "--history", h1, "--history",
                      h2, "--history-exclude", name)
        assert f"row {h2.parent.name + '/' + h2.name!r} not used" in " ".join(out.split())
    # a name that is no row and no folder is refused as before, nothing written
    (tmp_path / "b").mkdir()
    _, out = init(tmp_path / "b", runs, "history", "--history", h1, "--history-exclude",
                  "no-such-model", code=2)
    assert "'no-such-model' matches no history row" in out
    assert not (tmp_path / "b" / "eval.db").exists()


def test_two_models_named_by_local_paths_with_one_last_name_are_two_rows(
        runs: dict[str, list[Path]], lmeval_files: HarnessFiles, tmp_path: Path) -> None:
    """Two local checkpoints of one name (``pretrained=/runs/a/checkpoint-1000`` and
    ``/runs/b/checkpoint-1000``) are two history rows, named by their shortest
    distinguishing suffix, never a whole local path (QA: one model ``checkpoint-1000``,
    refused as giving an item two values; then named by lm-eval's folders as whole paths,
    ``/tmp/.../hist/a/__runs__a__checkpoint-1000``); an import of a round of one of them
    names that row as the target's own model's run."""
    hist = runs["ckpt_a"][0].parents[2]
    assert sorted(p.name for p in hist.iterdir()) == ["a", "b"]
    db, out = init(tmp_path, runs, "pool-run", "--history", hist)
    text = " ".join(out.split())
    assert "history: 2 model(s)" in text and "40 of 60 pool items have history" in text
    with Session.open(tmp_path / "eval.db") as s:
        models = s.session_config.extra["history"]["models"]
    assert sorted(models) == ["a/checkpoint-1000", "b/checkpoint-1000"]
    # the history reader of other sessions (a folder of logs, one model per file) names
    # them alike across the command's files
    from activetest.formats.history import read_history_run
    from activetest.formats.model_ids import distinct_names

    stated = [read_history_run(f).stated for f in sorted(hist.rglob("samples_*.jsonl"))]
    assert sorted(set(distinct_names(stated).values())) == sorted(models)
    run("select", db, "--n", 6, "--emit", "lm-eval", "--out", tmp_path / "s.json")
    mapping = json.loads((tmp_path / "s.json").read_text())
    got = run_lm_eval(lmeval_files, tmp_path / "round1", ",".join(mapping), "--samples",
                      str(tmp_path / "s.json"), "--model_args",
                      f"docs={lmeval_files.root / 'docs.json'},skill=0.4,salt=cb,"
                      f"pretrained=/runs/b/checkpoint-1000")
    for said in (run("import", db, *got), run("status", db)):
        said = " ".join(said.split())
        assert ("the history holds a run of the target's own model ('b/checkpoint-1000')"
                in said), said


def test_the_pool_runs_own_files_in_the_history_are_said_with_pool_run(
        runs: dict[str, list[Path]], tmp_path: Path) -> None:
    """``--surrogate pool-run --history`` where the history holds the pool run itself (its
    folder, or a copy of its files): that run serves twice, as the pool signal and as a
    history row; init says so, naming the row and how to use it once. With ``--surrogate
    history`` it is just another model's run, and nothing is said."""
    pool, h1 = runs["pool"][0].parent, runs["h1"][0].parent
    copy = tmp_path / "copied" / "pool"
    shutil.copytree(pool, copy)
    said = {}
    for k, (surrogate, where) in enumerate((("pool-run", pool), ("pool-run", copy),
                                            ("history", pool), ("pool-run", None))):
        d = tmp_path / f"s{k}"
        d.mkdir()
        extra = ["--history", h1, *(["--history", where] if where else [])]
        _, out = init(d, runs, surrogate, *extra, "--no-history-neighbours")
        said[k] = " ".join(out.split())
    for k in (0, 1):
        assert "are read from the pool run's own samples files: with --surrogate pool-run " \
               "that run serves twice" in said[k], said[k]
        assert "uses it once" in said[k] and "--history-exclude '" in said[k]
    assert "serves twice" not in said[2] and "serves twice" not in said[3]


def test_a_history_folder_given_twice_is_read_once(runs: dict[str, list[Path]],
                                                    tmp_path: Path) -> None:
    """The same folder given twice (or a folder and a samples file in it) is read once,
    said (its files were dropped without a word)."""
    h1 = runs["h1"][0].parent
    _, out = init(tmp_path, runs, "history", "--history", h1, "--history", f"{h1}/",
                  "--history", runs["h1"][0])
    text = " ".join(out.split())
    assert f"history: 5 samples file(s) are given twice ({h1}" in text
    assert "read once" in text and "history: 1 model(s)" in text


def _renamed(src: Path, dest: Path, model: str, nshot: int | None = None) -> Path:
    """A copy of a run's folder whose results file names ``model`` (and, given ``nshot``,
    states that n-shot for every task)."""
    shutil.copytree(src, dest)
    for f in dest.glob("results_*.json"):
        doc = json.loads(f.read_text())
        doc["model_name"] = model
        doc["config"]["model_args"] = f"pretrained={model}"
        if nshot is not None:
            doc["n-shot"] = {k: nshot for k in doc.get("n-shot", {})}
        f.write_text(json.dumps(doc))
    return dest


def test_one_models_runs_at_other_n_shots_are_two_rows(runs: dict[str, list[Path]],
                                                       tmp_path: Path) -> None:
    """One model's runs whose results files state other n-shots are two systems, named
    apart by it (QA: SmolLM2's 1- and 3-shot runs of one task were refused as "two
    results" of one model, so a user's past runs of one model could not be used); at the
    same n-shot they are still refused as two runs of one model."""
    h = tmp_path / "h"
    _renamed(runs["h1"][0].parent, h / "a", "org/m", nshot=1)
    _renamed(runs["h2"][0].parent, h / "b", "org/m", nshot=3)
    db, out = init(tmp_path, runs, "history", "--history", h)
    text = " ".join(out.split())
    assert "history: 2 model(s)" in text, text
    assert "'org/m [n-shot=1]', 'org/m [n-shot=3]'" in text, text
    with Session.open(db) as s:
        assert sorted(s.config["history"]["models"]) == ["org/m [n-shot=1]",
                                                          "org/m [n-shot=3]"]
    same = tmp_path / "same"
    _renamed(runs["h1"][0].parent, same / "a", "org/m", nshot=3)
    _renamed(runs["h2"][0].parent, same / "b", "org/m", nshot=3)
    db.unlink()
    _, out = init(tmp_path, runs, "history", "--history", same, code=2)
    assert "model 'org/m' has two results for" in out and out.count("error:") == 1


def test_an_import_keeps_a_row_of_the_targets_model_at_other_settings_another_system(
        runs: dict[str, list[Path]], lmeval_files: HarnessFiles, tmp_path: Path) -> None:
    """A history row of the target's model at other settings than the target's
    (``org/m [n-shot=0]`` beside a 3-shot target, its 3-shot run left out by
    --history-exclude) is another system, as ``init --history`` keeps such a run (QA:
    import and status said "the history holds a run of the target's own model
    ('org/m [n-shot=0]')" of a single such row); beside a 0-shot target it is the target's
    own run, and said (real lm-eval files: the runs' results files state the model and
    its n-shot)."""
    h = tmp_path / "h"
    _renamed(runs["h1"][0].parent, h / "a", "org/m", nshot=0)
    _renamed(runs["h2"][0].parent, h / "b", "org/m", nshot=3)
    for shots in (3, 0):
        where = tmp_path / f"s{shots}"
        where.mkdir()
        db, _ = init(where, runs, "history", "--history", h, "--history-exclude",
                     "org/m [n-shot=3]")
        with Session.open(db) as s:
            assert s.config["history"]["models"] == ["org/m [n-shot=0]"]
        target = _renamed(lmeval_files.run, where / "target", "org/m", nshot=shots)
        run("select", db, "--n", 8, "--emit", "lm-eval", "--out", where / "s.json")
        got = subset_of(sorted(target.glob("samples_*.jsonl")),
                        json.loads((where / "s.json").read_text()), where / "round1")
        for f in target.glob("results_*.json"):  # the run's results file: model, n-shot
            shutil.copy(f, where / "round1" / f.name)
        said = [" ".join(run("import", db, *got).split()), " ".join(run("status", db).split())]
        for text in said:
            if shots == 3:
                assert "target's own model" not in text, text
            else:
                assert ("the history holds a run of the target's own model "
                        "('org/m [n-shot=0]')") in text, text
