"""Labelling round trips without traps: annotators who disagree, stale estimates,
hidden guesses, labels held back by a skipped draw, and the control-variate line."""

from __future__ import annotations

import copy
import csv
import json
import subprocess
from pathlib import Path

import pytest
from session_support import PoolFiles
from typer.testing import CliRunner

from activetest.cli import app
from activetest.session.annotators import agreement
from activetest.session.workflow import Session

runner = CliRunner()
DATA = Path(__file__).parent / "data"


def run(*args: object, input: str | None = None, code: int = 0) -> str:
    result = runner.invoke(app, [str(a) for a in args], input=input)
    assert result.exit_code == code, (result.exit_code, result.output, result.exception)
    return " ".join(result.output.split())  # rich wraps long lines


def init(pf: PoolFiles, db: Path, *extra: str) -> None:
    run("init", db, "--pool", pf.pool, "--task", "demo", "--surrogate", f"table:{pf.surrogate}",
        "--target", f"table:{pf.target}", "--id-column", "id", "--seed", "5", "--no-progress",
        *extra)


def _drawn(db: Path) -> list[str]:
    with Session.open(db) as s:
        return [a.item_id for a in s.acquisitions()]


def _labelstudio_export(tasks_file: Path, votes: list[list[tuple]]) -> list:
    """A Label Studio 1.x JSON export of our tasks file: per task, (user id, choice, time)
    or (user id, choice, time, ground_truth).

    Built from a real export's task record (tests/session/data), so that every field
    Label Studio writes is there; only data, ids and annotations differ.
    """
    template = json.loads((DATA / "labelstudio_export_sst2.json").read_text())[0]
    out = []
    for t, (task, task_votes) in enumerate(zip(json.loads(tasks_file.read_text()), votes,
                                               strict=True)):
        entry = copy.deepcopy(template)
        entry.update(id=500 + t, data=task["data"], total_annotations=len(task_votes))
        annotations = []
        for a, (user, choice, when, *truth) in enumerate(task_votes):
            ann = copy.deepcopy(template["annotations"][0])
            ann.update(id=900 + 10 * t + a, completed_by=user, task=500 + t,
                       created_at=when, updated_at=when, ground_truth=bool(truth and truth[0]))
            ann["result"][0]["value"] = {"choices": [choice]}
            annotations.append(ann)
        entry["annotations"] = annotations
        out.append(entry)
    return out


def test_two_annotators_disagreeing_do_not_block_the_import(pool_files: PoolFiles,
                                                            tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    init(pool_files, db)
    tasks = tmp_path / "tasks.json"
    run("select", db, "--n", "4", "--out", tasks)
    ids = _drawn(db)
    export = tmp_path / "export.json"
    t1, t2, t3 = "2025-03-04T10:15:02Z", "2025-03-04T11:00:00Z", "2025-03-04T12:00:00Z"
    votes = [[(1, "positive", t1), (2, "negative", t2)],  # disagree: the later says negative
             [(1, "positive", t1), (2, "positive", t2)],  # agree
             [(2, "negative", t1)],                        # one annotator
             []]                                           # not labelled yet
    export.write_text(json.dumps(_labelstudio_export(tasks, votes)))
    out = run("import", db, export)
    assert "imported 2 new label(s)" in out
    assert ("1 item(s) left out: the file labels them differently" in out
            and f"item {ids[0]!r} (draw 1): 'positive' (user 1) vs 'negative' (user 2)" in out)
    assert "--resolve latest" in out
    with Session.open(db) as s:
        assert s.labels() == {ids[1]: 1, ids[2]: 0}  # the rest kept
    # nothing usable yet: draw 1 holds back the labels of draws 2 and 3
    assert f"item {ids[0]!r} (draw 1) has no label yet, so the 2 label(s) of later" in out
    # a tie is not settled by a majority, and the advice is not "--resolve majority"
    # again (QA) ...
    out = " ".join(run("import", db, export, "--resolve", "majority").split())
    assert "1 item(s) left out: ties: no label has more votes" in out
    assert "import again with --resolve latest)" in out and "or --resolve majority" not in out
    # ... a third annotator settles it, and so does the latest answer
    votes[0].append((3, "negative", t3))
    export.write_text(json.dumps(_labelstudio_export(tasks, votes)))
    out = run("import", db, export, "--resolve", "majority")
    assert (f"settled by --resolve majority: item {ids[0]!r} (draw 1): 'positive' (user 1) "
            f"vs 'negative' (user 2) vs 'negative' (user 3) -> 'negative'") in out
    assert "imported 1 new label(s), changed 0, 2 already present" in out
    with Session.open(db) as s:
        assert s.labels()[ids[0]] == 0
        assert s.history(ids[0])[-1].source == "labelstudio:export.json (user 3)"


def test_a_ground_truth_annotation_settles_the_item_and_two_that_differ_do_not(
        pool_files: PoolFiles, tmp_path: Path) -> None:
    """Label Studio's ``"ground_truth": true`` (a reviewer's reference answer) is the
    item's label, whatever --resolve says (as an adjudication on the page); two
    ground-truth annotations that differ leave the item out, reported, even with
    --resolve latest (which reference is right is never guessed)."""
    db = tmp_path / "s.db"
    init(pool_files, db)
    tasks = tmp_path / "tasks.json"
    run("select", db, "--n", "3", "--out", tasks)
    ids = _drawn(db)
    export = tmp_path / "export.json"
    t1, t2, t3 = "2025-03-04T10:15:02Z", "2025-03-04T11:00:00Z", "2025-03-04T12:00:00Z"
    votes = [[(1, "positive", t2), (2, "negative", t1, True)],   # the reference settles it
             [(1, "negative", t1), (2, "negative", t2), (3, "positive", t1, True)],
             [(1, "positive", t1, True), (2, "negative", t2, True)]]  # references differ
    export.write_text(json.dumps(_labelstudio_export(tasks, votes)))
    for resolve in ("skip", "latest", "majority"):  # none of them picks otherwise
        out = run("import", db, export, "--resolve", resolve)
        assert ("2 disagreement(s) settled by the annotation marked ground truth" in out
                and f"item {ids[0]!r} (draw 1): 'positive' (user 1) vs 'negative' (user 2, "
                    f"ground truth) -> 'negative'" in out), out
        assert ("1 item(s) left out: annotations marked ground truth disagree" in out
                and f"item {ids[2]!r} (draw 3): 'positive' (user 1, ground truth) vs "
                    f"'negative' (user 2, ground truth)" in out), out
        assert "settled by --resolve" not in out
        with Session.open(db) as s:
            assert s.labels() == {ids[0]: 0, ids[1]: 1}
            assert s.history(ids[0])[-1].source == "labelstudio:export.json (user 2, ground truth)"
    # the other annotators' votes are kept for agreement; a ground truth is no vote
    with Session.open(db) as s:
        rep = agreement(s, n_boot=0)
    assert rep.annotators == ("user 1", "user 2") and rep.n_overlap == 1  # item 2's votes
    # an agreeing reference is no disagreement, and its label is the reference's
    export.write_text(json.dumps(_labelstudio_export(
        tasks, [[], [], [(1, "positive", t1), (2, "positive", t3, True)]])))
    out = run("import", db, export)
    assert "imported 1 new label(s)" in out and "disagreement" not in out
    with Session.open(db) as s:
        assert s.history(ids[2])[-1].source == "labelstudio:export.json (user 2, ground truth)"


def _ls_convert(export: Path, task: str, fmt: str, out: Path) -> Path:
    """Label Studio's own converter (label_studio_sdk, in the repository's .venv-ls) turns
    a JSON export into its JSON-MIN or CSV export, as the server does on Export."""
    from activetest.data import get_task
    from activetest.session.labelio import labelstudio_config

    exe = Path(__file__).resolve().parents[2] / ".venv-ls" / "bin" / "python"
    if not exe.is_file():
        pytest.skip("Label Studio's converter is not installed (scripts/install_label_studio.sh)")
    out.mkdir(parents=True, exist_ok=True)
    (out / "config.xml").write_text(labelstudio_config(get_task(task)), encoding="utf-8")
    code = ("import sys; from label_studio_sdk.converter import Converter; "
            "c = Converter(open(sys.argv[1]).read(), sys.argv[2], download_resources=False); "
            "c.convert(sys.argv[3], sys.argv[4], sys.argv[5], is_dir=False)")
    subprocess.run([str(exe), "-c", code, str(out / "config.xml"), str(out), str(export),
                    str(out / fmt), fmt], check=True, capture_output=True, timeout=300)
    (found,) = (out / fmt).iterdir()
    return found.rename(out / f"{fmt.lower()}{found.suffix}")


def test_imported_annotators_are_kept_for_agreement_and_named_alike_in_every_export(
        pool_files: PoolFiles, tmp_path: Path) -> None:
    """Each annotator's label of an import is kept (not only the settled one), so that
    `status` shows their agreement; the same project's JSON export and its JSON-MIN and
    CSV exports (written by Label Studio's converter) name each person alike, so
    importing one after the other finds the same two people, not four, and keeps
    nothing twice."""
    db = tmp_path / "s.db"
    init(pool_files, db)
    tasks = tmp_path / "tasks.json"
    run("select", db, "--n", "6", "--out", tasks)
    ids = _drawn(db)
    t1, t2 = "2025-03-04T10:15:02Z", "2025-03-04T11:00:00Z"
    one = ["positive", "negative", "positive", "negative", "positive", "negative"]
    two = ["positive", "negative", "negative", "negative", "negative", "negative"]
    export = tmp_path / "export.json"
    export.write_text(json.dumps(_labelstudio_export(
        tasks, [[(1, a, t1), (2, b, t2)] for a, b in zip(one, two, strict=True)])))
    out = run("import", db, export, "--resolve", "latest")
    assert "kept 12 annotator label(s) for agreement" in out
    st = run("status", db)
    assert ("annotators in imported files: user 1, user 2; 6 answer(s) given by two or "
            "more of them") in st
    assert "agreement: Cohen's kappa 0.333" in st  # agree on 4 of 6, chance 0.5
    assert (f"item {ids[2]} (draw 3): user 1 'positive', user 2 'negative'; now 'negative' "
            f"(labelstudio:export.json (user 2))") in st
    for fmt in ("CSV", "JSON_MIN"):
        sheet = _ls_convert(export, "demo", fmt, tmp_path / fmt)
        out = run("import", db, sheet, "--resolve", "latest")
        assert "kept" not in out and "6 already present" in out, fmt
        assert ("annotators in imported files: user 1, user 2; 6 answer(s)"
                in run("status", db)), fmt


def test_latest_answer_settles_by_time(pool_files: PoolFiles, tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    init(pool_files, db)
    tasks = tmp_path / "tasks.json"
    run("select", db, "--n", "1", "--out", tasks)
    export = tmp_path / "export.json"
    # the file lists the later answer first: time decides, not the order
    later, earlier = "2025-03-05T09:00:00Z", "2025-03-04T09:00:00Z"
    export.write_text(json.dumps(_labelstudio_export(
        tasks, [[(2, "negative", later), (1, "positive", earlier)]])))
    run("import", db, export, "--resolve", "latest")
    with Session.open(db) as s:
        assert list(s.labels().values()) == [0]


def test_status_marks_a_stale_estimate_and_the_cv_line(pool_files: PoolFiles,
                                                       tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    init(pool_files, db, "--metric", "both", "--acquisition", "ce")
    run("label", db, "--n", "6", "--from-data")
    est = run("estimate", db)
    # CE acquisition for log loss: the control variate IS the acquisition score
    assert "log_loss: control-variate LURE equals LURE up to the proposal floor" in est
    assert "error_rate: control-variate LURE 0." in est  # a real second estimate
    st = run("status", db)
    assert "error_rate control-variate LURE" in st and "last estimate" in st
    assert "log_loss control-variate LURE: equals LURE up to the proposal floor" in st
    # the two differ by floating-point rounding here: said so, not as a number to weigh
    # (QA: "(difference -2.2e-16)")
    m = json.loads(run("estimate", db, "--json"))["metrics"]["log_loss"]
    assert abs(m["cv"]["estimate"] - m["active"]["estimate"]) <= 1e-12  # the case at hand
    for text in (est, st):
        assert "up to the proposal floor (the same to rounding): with CE" in text, text
        assert "(difference" not in text, text
    assert "estimate is stale" not in st
    run("label", db, "--n", "7", "--from-data")
    assert "the last estimate is stale: labels were added or changed since" in run("status", db)
    assert json.loads(runner.invoke(app, ["status", str(db), "--json"]).output)[
        "estimate_stale"] is True
    run("estimate", db)
    assert "estimate is stale" not in run("status", db)
    # an undo is a change too
    with Session.open(db) as s:
        s.undo(s.history()[-1])
    assert "estimate is stale" in run("status", db)


def test_sheets_can_hide_the_guess_and_show_the_draw(pool_files: PoolFiles,
                                                     tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    init(pool_files, db)
    sheet = tmp_path / "todo.csv"
    run("select", db, "--n", "4", "--out", sheet, "--no-predictions")
    header = next(csv.reader(sheet.open()))
    assert header == ["item_id", "draw", "content_check", "text", "label"]  # no predicted
    run("export", db, "--out", tmp_path / "with.csv")
    assert "predicted" in next(csv.reader((tmp_path / "with.csv").open()))
    run("export", db, "--out", tmp_path / "ls.json", "--no-predictions")
    assert all("predictions" not in t for t in json.loads((tmp_path / "ls.json").read_text()))
    # label all but the second draw: its gap holds back draws 3 and 4
    rows = list(csv.DictReader(sheet.open()))
    assert [r["draw"] for r in rows] == ["1", "2", "3", "4"]
    for r in rows:
        r["label"] = "" if r["draw"] == "2" else "positive"
    with sheet.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=header)
        w.writeheader()
        w.writerows(rows)
    out = run("import", db, sheet)
    skipped = rows[1]["item_id"]
    assert (f"item {skipped!r} (draw 2) has no label yet, so the 2 label(s) of later draws "
            f"({rows[2]['item_id']!r}, {rows[3]['item_id']!r}) cannot be used") in out
    assert "1 label(s) usable by the estimate" in run("status", db)
    assert f"item {skipped!r} (draw 2) has no label yet" in run("status", db)


def test_latest_orders_answers_by_their_instant_across_time_zones(pool_files: PoolFiles,
                                                                    tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    init(pool_files, db)
    tasks = tmp_path / "tasks.json"
    run("select", db, "--n", "1", "--out", tasks)
    export = tmp_path / "export.json"
    # 10:00 in UTC+2 is 08:00 UTC, an hour BEFORE 09:00 UTC: the second answer is the
    # latest, though its text sorts first
    export.write_text(json.dumps(_labelstudio_export(
        tasks, [[(1, "negative", "2025-03-04T10:00:00+02:00"),
                 (2, "positive", "2025-03-04T09:00:00Z")]])))
    out = run("import", db, export, "--resolve", "latest")
    assert "-> 'positive'" in out
    with Session.open(db) as s:
        assert list(s.labels().values()) == [1]


def test_one_annotators_labels_show_no_agreement_block_until_a_second_one_labels(
        pool_files: PoolFiles, tmp_path: Path) -> None:
    """QA: a session labelled from one annotator's sheet showed, under every `status`,
    "annotators in imported files: ann; 0 answer(s) ..." and "no item has answers from
    two annotators yet": noise, with nobody to agree with. Now nothing until a second
    annotator's labels arrive; then the block, with their agreement."""
    db = tmp_path / "s.db"
    init(pool_files, db)
    run("select", db, "--n", "4")
    ids = _drawn(db)
    one = tmp_path / "ann.csv"
    one.write_text("item_id,label,annotator\n" + "".join(f"{i},positive,ann\n" for i in ids),
                   encoding="utf-8")
    out = run("import", db, one)
    assert "kept 4 annotator label(s) for agreement" in out and "two annotators" in out
    for command in ("status", "estimate"):
        text = run(command, db)
        assert "annotators in imported files" not in text, (command, text)
        assert "agreement:" not in text and "two annotators" not in text, (command, text)
    assert json.loads(run("status", db, "--json"))["agreement"]["annotators"] == ["ann"]
    two = tmp_path / "bob.csv"
    two.write_text("item_id,label,annotator\n" + "".join(f"{i},positive,bob\n" for i in ids),
                   encoding="utf-8")
    run("import", db, two)
    st = run("status", db)
    assert ("annotators in imported files: ann, bob; 4 answer(s) given by two or more of "
            "them") in st
    assert "agreement: Krippendorff's alpha (nominal)" in st


def test_times_without_a_zone_among_zoned_ones_order_by_the_file(pool_files: PoolFiles,
                                                                  tmp_path: Path) -> None:
    """An answer whose time says no zone cannot be placed among zoned ones: the file's
    order decides (the later row), never the text of the times."""
    db = tmp_path / "s.db"
    init(pool_files, db)
    run("select", db, "--n", "1")
    (item,) = _drawn(db)
    sheet = tmp_path / "votes.csv"
    sheet.write_text(f"item_id,label,annotator,time\n{item},positive,ann,2025-03-04T10:00:00\n"
                     f"{item},negative,bob,2025-03-04T09:00:00Z\n")
    run("import", db, sheet, "--resolve", "latest")
    with Session.open(db) as s:
        assert s.labels() == {item: 0}


def test_majority_counts_one_vote_per_annotator(pool_files: PoolFiles, tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    init(pool_files, db)
    tasks = tmp_path / "tasks.json"
    run("select", db, "--n", "2", "--out", tasks)
    ids = _drawn(db)
    export = tmp_path / "export.json"
    t1, t2, t3 = "2025-03-04T09:00:00Z", "2025-03-04T10:00:00Z", "2025-03-04T11:00:00Z"
    export.write_text(json.dumps(_labelstudio_export(tasks, [
        # user 1 submitted twice: one vote, against users 2 and 3
        [(1, "negative", t1), (1, "negative", t2), (2, "positive", t1), (3, "positive", t2)],
        # user 1 changed their mind: their latest answer is their vote (2 against 1)
        [(1, "positive", t1), (2, "negative", t2), (1, "negative", t3), (3, "positive", t1)],
    ])))
    out = run("import", db, export, "--resolve", "majority")
    assert "2 disagreement(s) settled by --resolve majority" in out
    with Session.open(db) as s:
        assert s.labels() == {ids[0]: 1, ids[1]: 0}


def _swap_ids(sheet: Path, a: int, b: int, label: str = "positive") -> None:
    rows = list(csv.DictReader(sheet.open(newline="")))
    rows[a]["item_id"], rows[b]["item_id"] = rows[b]["item_id"], rows[a]["item_id"]
    for r in rows:
        r["label"] = label
    with sheet.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)


def test_a_row_whose_id_was_swapped_is_refused(pool_files: PoolFiles, tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    init(pool_files, db)
    sheet = tmp_path / "todo.csv"
    run("select", db, "--n", "3", "--out", sheet)
    ids = _drawn(db)
    _swap_ids(sheet, 0, 1)
    out = run("import", db, sheet, code=2)
    assert "2 row(s) do not show the item their id names; nothing was imported" in out
    # the file, the row, the item, and both sides: what the row shows, what the item holds
    with Session.open(db) as s:
        text0, text1 = (s.item(i).fields["text"] for i in ids[:2])
        assert s.labels() == {}
    flat = " ".join(out.split())
    assert f"{sheet}, line 2: item {ids[1]!r}: the row's content_check" in flat
    assert f"(the check of item {ids[0]!r})" in flat
    assert f"the row shows text {text0[:20]}" in flat.replace("'", "")
    assert f"in the session has text {text1[:20]}" in flat.replace("'", "")
    # an old sheet (no content_check column) imports as before: the check needs the column
    old = tmp_path / "old.csv"
    old.write_text("item_id,label\n" + "".join(f"{i},positive\n" for i in ids))
    run("import", db, old)
    with Session.open(db) as s:
        assert s.labels() == dict.fromkeys(ids, 1)


def test_an_edit_at_the_end_of_a_long_text_shows_in_the_refusal(pool_files: PoolFiles,
                                                                 tmp_path: Path) -> None:
    """A cell edited after its first 70 characters: the refusal shows both texts around
    the change, in matching quotes (QA: both sides were the same first 65 characters,
    the edit unseen)."""
    rows = list(csv.DictReader(pool_files.pool.open(newline="")))
    for r in rows:  # long texts
        r["text"] = "a long review that goes on and on before it says " + r["text"]
    with pool_files.pool.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    db = tmp_path / "s.db"
    init(pool_files, db)
    sheet = tmp_path / "todo.csv"
    run("select", db, "--n", "2", "--out", sheet)
    rows = list(csv.DictReader(sheet.open(encoding="utf-8-sig", newline="")))
    held = rows[0]["text"]
    assert len(held) > 80
    rows[0]["text"] = held.rstrip() + " EDITED"
    for r in rows:
        r["label"] = "positive"
    with sheet.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    out = run("import", db, sheet, code=2)
    tail = " ".join(held.split())[-20:]
    shows, has = out.split("the row shows text '...", 1)[1].split(
        "', the session's item has text '...", 1)
    assert shows.endswith(f"{tail} EDITED"), out
    assert has.split("'; was the cell edited", 1)[0].endswith(tail), out
    with Session.open(db) as s:
        assert s.labels() == {}


def test_a_hand_made_sheet_is_checked_against_the_text_it_carries(pool_files: PoolFiles,
                                                                   tmp_path: Path) -> None:
    """A sheet without content_check but with a ``text`` column: each row's text must be
    its item's (QA: texts from another pool's row order were imported by id, all 10).
    Blanks may differ (a spreadsheet's line breaks); the text may not."""
    db = tmp_path / "s.db"
    init(pool_files, db)
    run("select", db, "--n", "4")
    ids = _drawn(db)
    with Session.open(db) as s:
        texts = [s.item(i).fields["text"] for i in ids]
    hand = tmp_path / "hand.csv"
    rotated = texts[1:] + texts[:1]  # each id beside the next item's text
    with hand.open("w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["item_id", "text", "label"])
        w.writerows([i, t, "positive"] for i, t in zip(ids, rotated, strict=True))
    out = run("import", db, hand, code=2)
    flat = " ".join(out.split()).replace("'", "")
    assert "4 row(s) do not show the item their id names; nothing was imported" in flat
    assert f"{hand}, line 2: item {ids[0]}: the row (no content_check) shows text" in flat
    assert f"shows text {rotated[0][:20]}" in flat
    assert f"in the session has text {texts[0][:20]}" in flat
    with Session.open(db) as s:
        assert s.labels() == {}
    with hand.open("w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["item_id", "text", "label"])
        w.writerows([i, "  " + t.replace(" ", "\n "),
                     "positive"] for i, t in zip(ids, texts, strict=True))
    run("import", db, hand)
    with Session.open(db) as s:
        assert s.labels() == dict.fromkeys(ids, 1)


def test_a_label_studio_task_whose_id_was_changed_is_refused(pool_files: PoolFiles,
                                                             tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    init(pool_files, db)
    tasks = tmp_path / "tasks.json"
    run("select", db, "--n", "2", "--out", tasks)
    ids = _drawn(db)
    data = json.loads(tasks.read_text())
    data[0]["data"]["item_id"] = ids[1]  # both tasks now name the second item
    tasks.write_text(json.dumps(data))
    export = tmp_path / "export.json"
    export.write_text(json.dumps(_labelstudio_export(
        tasks, [[(1, "negative", "2025-03-04T09:00:00Z")], [(1, "positive",
                                                            "2025-03-04T09:00:00Z")]])))
    out = " ".join(run("import", db, export, code=2).split())
    assert f"{export}, task 0 (item_id {ids[1]!r}), annotation 0: item {ids[1]!r}" in out
    assert "nothing was imported" in out
    with Session.open(db) as s:
        assert s.labels() == {}


def test_a_row_whose_content_check_is_no_drawn_items_asks_about_the_sheet(
        pool_files: PoolFiles, tmp_path: Path) -> None:
    """A row whose fingerprint is another drawn item's asks whether the item_id cell was
    changed; one whose fingerprint is no drawn item's (a sheet of another session or
    task) asks that instead (QA: both asked about the item_id cell)."""
    db = tmp_path / "s.db"
    init(pool_files, db)
    sheet = tmp_path / "todo.csv"
    run("select", db, "--n", "3", "--out", sheet)
    rows = list(csv.DictReader(sheet.open(encoding="utf-8-sig", newline="")))
    for r in rows:
        r["label"] = "positive"
    rows[0]["content_check"] = "c0123456789ab"
    with sheet.open("w", encoding="utf-8", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    out = " ".join(run("import", db, sheet, code=2).split())
    assert "is the sheet from another session or task" in out
    assert "was the item_id cell changed?" not in out


def test_agreement_on_one_item_shows_no_bootstrap_interval(pool_files: PoolFiles,
                                                           tmp_path: Path) -> None:
    """QA: two annotators on one shared item gave "Cohen's kappa 0.000, bootstrap 95%
    interval [0.000, 0.000] (1000 resamples of the 1 items ...)": each resample is that
    item again, a point claiming certainty. The statistic is shown, the interval not;
    with a second shared item the interval is back."""
    db = tmp_path / "s.db"
    init(pool_files, db)
    run("select", db, "--n", "3")
    ids = _drawn(db)
    ann = tmp_path / "ann.csv"
    ann.write_text("item_id,label,annotator\n" + "".join(f"{i},positive,ann\n" for i in ids),
                   encoding="utf-8")
    run("import", db, ann)
    bob = tmp_path / "bob.csv"
    bob.write_text(f"item_id,label,annotator\n{ids[0]},negative,bob\n", encoding="utf-8")
    run("import", db, bob, "--overwrite")
    st = run("status", db)
    assert "agreement: Cohen's kappa 0.000, no bootstrap interval from one item" in st, st
    assert "[0.000, 0.000]" not in st
    stats = json.loads(run("status", db, "--json"))["agreement"]["stats"]
    assert all(x["low"] is None and x["high"] is None for x in stats)
    bob.write_text(f"item_id,label,annotator\n{ids[0]},negative,bob\n{ids[1]},positive,bob\n",
                   encoding="utf-8")
    run("import", db, bob, "--overwrite")
    st = run("status", db)
    assert "bootstrap 95% interval [" in st and "resamples of the 2 items" in st, st
