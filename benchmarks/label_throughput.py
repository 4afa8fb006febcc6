"""Label throughput: what a single-label commit costs on a large session, with the
journal folded into the file after each commit and without.

    nice -n 10 python benchmarks/label_throughput.py --n-items 200000 --labels 300 --repeats 3

A session of ``--n-items`` items (an SST-2-like pool and two ``table:`` prediction
tables, written once into ``--workdir``) is made with :meth:`Session.create` (its wall
and CPU seconds printed: the init time), ``--labels`` items are drawn
(:meth:`Session.select`), and then each variant labels them on a fresh copy of that
file, one label per transaction, as ``activetest label`` and the labelling page save an
answer (:meth:`SessionStore.set_labels` with one answer, source ``cli``). Variants:

- ``fold``: the store as it is (each commit, then the journal folded into the file:
  :meth:`SessionStore._fold_journal`);
- ``no fold``: the same with the fold switched off (the baseline: what a commit costs
  in SQLite's WAL with the store's ``synchronous`` setting, the journal left to grow);
- with ``--all``, also each with the writer's ``PRAGMA synchronous`` set to ``FULL``
  and to ``NORMAL`` (``fold, FULL``, ``no fold, NORMAL``, ...), whichever the store's
  own is (:data:`activetest.session.store.SYNCHRONOUS`).

The variants run interleaved, ``--repeats`` times, each on its own copy; per variant
the median wall and CPU milliseconds per label are printed, and the ratio of each to
``no fold``'s, of the same run. Wall time is what a person waits (it is mostly the
disk's ``fdatasync``); CPU time is this process's. The machine may be shared: the
ratios, measured side by side, are the numbers to read. ``--write`` puts the table in
docs/benchmarks.md ("Label throughput").

``--page`` measures instead what one answer on the labelling page costs on a large
paired session (:func:`page_case`)::

    git worktree add /tmp/at-before <commit>   # the version to compare with
    nice -n 10 python benchmarks/label_throughput.py --page --baseline /tmp/at-before/src

A graded session of ``--page-items`` items (default 20,000) with a compared target's
answers (the paired layout) is drawn and answered (annotator ``alice``, as the page
stores answers: the ``annotations`` rows, the items' stored order, the settled labels
and judgments), ``--page-answers`` more items drawn and left open; then each version
(this checkout's ``src``, and ``--baseline SRC``'s) answers those on a fresh copy of
the file, in a child process of its own (:mod:`_page_answers`), the versions
interleaved, ``--repeats`` times. Printed: the median CPU and wall seconds per answer,
the ratio of each to the baseline's of the same run, and whether an undo with nothing
to undo moved the file's write mark (a commit). ``--write`` puts the table in
docs/benchmarks.md ("Label throughput: the labelling page").
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "benchmarks"))

from _docs import write_section  # noqa: E402
from activetest.session.store import SYNCHRONOUS, SessionStore  # noqa: E402
from activetest.session.workflow import Session  # noqa: E402

#: variant name -> (fold the journal, the writer's ``synchronous`` setting; None: the
#: store's own)
VARIANTS = {"fold": (True, None), "no fold": (False, None),
            "fold, FULL": (True, "FULL"), "no fold, FULL": (False, "FULL"),
            "fold, NORMAL": (True, "NORMAL"), "no fold, NORMAL": (False, "NORMAL")}


#: What the table decided (2026-12-07), written under it in docs/benchmarks.md.
DECISION = """Why the store writes with `synchronous = NORMAL` (since 2026-12-07; `FULL`
before): the guarantee is that after any committed label a `kill -9` leaves no committed
label only in a `-wal` (a backup copied over the file later would be read with it), so
each commit is folded into the file (`wal_checkpoint(TRUNCATE)`). Counted with `strace
-f -c -e trace=fdatasync` over 20 folded single-row commits (SQLite 3.40.1, ext4): 4.25
disk syncs per commit with `FULL`, 3.2 with `NORMAL` (the fold syncs the journal, then
the file; the commit that starts the emptied journal syncs its header; `FULL`'s own sync
of the commit's frames is a second sync of the same bytes). Where a fold does not
complete (a reader holding an old snapshot) the store syncs the `-wal` itself, so a
label said to be saved is on the disk as with `FULL`. Not taken, because they do not
keep the guarantee: a `PASSIVE` or `RESTART` checkpoint (the folded frames stay valid in
the `-wal`, and are read over a file copied there), a fold every k labels (k-1 labels
only in the `-wal`), `NORMAL` without a fold (no sync at all: 0.4-0.5 ms a label, and a
power loss loses labels said to be saved). A rollback journal keeps the guarantee but
costs as many syncs (4.4 per commit for `journal_mode=DELETE` with `FULL`, 3.35 with
`NORMAL`; 5.5 for `TRUNCATE`) and takes away what WAL gives a session: readers beside
the writer (the labelling page's progress reader, `status` while `label` runs) and the
shared lock by which `init --overwrite` tells that another process has the file open.
Measured, the gain is smaller than the count's quarter: `fold` (NORMAL) took 0.71x and
0.93x of `fold, FULL`'s median wall time per label in the two runs of 2026-12-07 (loads
about 10, and 13-16), so what the fold costs is the disk's syncs, and no setting that
keeps the guarantee removes them. The disk's sync time moves with the other jobs on the
machine (one variant's runs spanned 3-25 ms a label at load 10): read the ratios of the
runs side by side, and the sync counts. The fold's CPU (about 0.4 ms a label more,
against 20 ms of wall time) includes the check that no file was copied over the session
(:mod:`activetest.session.store_marks`)."""


def make_session(workdir: Path, n_items: int, n_labels: int) -> tuple[Path, float, float]:
    """Write the pool and tables, create the session and draw ``n_labels`` items;
    returns (the session file, init wall seconds, init CPU seconds)."""
    sys.path.insert(0, str(ROOT))
    from bench_sessions import make_inputs

    pool, sur, tgt = make_inputs(workdir / f"inputs-{n_items}", n_items, "parquet")
    db = workdir / "base.db"
    for suffix in ("", "-wal", "-shm"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)
    w0, c0 = time.perf_counter(), time.process_time()
    s = Session.create(db, pool=pool, task="sst2", surrogate=f"table:{sur}",
                       target=f"table:{tgt}", acquisition="uniform", seed=0,
                       pool_options={"id_column": "id"}, progress=False)
    wall, cpu = time.perf_counter() - w0, time.process_time() - c0
    s.select(n_labels)
    s.close()
    return db, wall, cpu


def label_run(db: Path, copy: Path, fold: bool, synchronous: str | None
              ) -> tuple[float, float]:
    """Label every drawn item of a fresh copy of ``db``, one label per transaction;
    returns (wall seconds, CPU seconds) of the labels' writes."""
    for suffix in ("", "-wal", "-shm"):
        Path(f"{copy}{suffix}").unlink(missing_ok=True)
    shutil.copyfile(db, copy)
    store = SessionStore.open(copy)
    try:
        if synchronous is not None:
            store._conn.execute(f"PRAGMA synchronous = {synchronous}")
        if not fold:
            store._fold_journal = lambda: None  # type: ignore[method-assign]
        pending = store.acquisitions()
        ys = {r: (it.label == "positive") for r, it in
              store.items_at(a.index for a in pending).items()}
        w0, c0 = time.perf_counter(), time.process_time()
        for a in pending:
            store.set_labels([(a.index, int(ys[a.index]))], "cli")
        wall, cpu = time.perf_counter() - w0, time.process_time() - c0
        assert store.n_labelled() == len(pending)
    finally:
        store.close()
    return wall, cpu


#: What ``--page`` measured (2026-12-08), written under its table in docs/benchmarks.md.
PAGE_NOTE = """What the baseline (4074d7ea) read for each answer, all of it growing with the
session: to show the next item, every stored answer of both roles (`display_items`:
40,000 answers decoded from JSON an item shown); to check that two answers of the same
text keep one judgment, every answer, label and judgment (`alike_conflict`); in the label
checks of the settled answer, every label, judgment and draw (`check_labels`); to find
the next item, one `annotation_items` row per drawn item (20,000 queries an answer). Now
each reads the item's own rows by the tables' keys (`SessionStore.labels_at`,
`judgments_at`, `answers_at`, `acquisition_steps`; an item's answers by
`annotations_idx`) and the stored needs once a search; the numbers are those of the
whole-table reads (tests/web/test_annotators_reads.py). What still grows with the drawn
items is the search for the next item (`Annotators._pick`): it walks every drawn item in
draw order with its answerers, label and claims, read once a search (most of the 0.1 CPU
s an answer left at 20,000). An undo with nothing to undo now only reads."""


def make_paired_session(workdir: Path, n_items: int, n_open: int) -> Path:
    """A paired graded session of ``n_items + n_open`` items (the target's answers in
    the pool, a compared target's in a second file; a uniform surrogate), every item
    drawn, the first ``n_items`` drawn answered by ``alice`` as the labelling page stores
    an answer (one ``annotations`` row per answer shown, the item's stored need and
    shown order, the settled label and judgment with the page's source), written in one
    transaction; the last ``n_open`` left open. Returns the file (made once per size)."""
    from activetest.session.annotators import Annotators
    from activetest.session.compare_graded import shown_order
    from activetest.session.store import now

    db = workdir / f"paired-{n_items}-{n_open}.db"
    if db.exists():
        return db
    n = n_items + n_open
    pool = workdir / f"paired-pool-{n}.jsonl"
    other = workdir / f"paired-other-{n}.jsonl"
    with pool.open("w", encoding="utf-8") as fp, other.open("w", encoding="utf-8") as fo:
        for i in range(n):
            ref = f"answer {i % 97}"
            fp.write(json.dumps({"id": f"q{i}", "question": f"question {i}?",
                                 "context": f"context {i}", "references": [ref],
                                 "answer": ref if i % 3 else "banana"}) + "\n")
            fo.write(json.dumps({"id": f"q{i}", "question": f"question {i}?",
                                 "answer": ref if i % 2 else "cherry"}) + "\n")
    tmp = db.with_suffix(".tmp.db")
    for suffix in ("", "-wal", "-shm"):
        Path(f"{tmp}{suffix}").unlink(missing_ok=True)
    s = Session.create(tmp, pool=pool, task="squad", target="pool", surrogate="uniform",
                       seed=1, progress=False, compare=[f"answers:{other}"])
    try:
        s.select(n)
        roles = Annotators(s).roles  # (makes the page's tables)
        seed = int(s.session_config.seed)
        texts = {r: s.store.answers(r) for r in roles}
        at = now()
        rows, items, levels = [], [], {r: [] for r in roles}
        for a in s.store.acquisitions()[:n_items]:
            for r in roles:
                y = int(texts[r][a.index][0].startswith("answer"))
                rows.append((a.index, r, "alice", y, "answer", at))
                levels[r].append((a.index, y))
            items.append((a.index, a.step, 1,
                          json.dumps(list(shown_order(seed, a.step, roles))), at))
        with s.store.transaction() as c:
            c.executemany("INSERT INTO annotations (idx, role, annotator, label, kind, at) "
                          "VALUES (?, ?, ?, ?, ?, ?)", rows)
            c.executemany("INSERT INTO annotation_items (idx, step, need, shown_order, at) "
                          "VALUES (?, ?, ?, ?, ?)", items)
            s.store.set_labels(levels["target"], "web (alice)")
            for r in roles[1:]:
                s.store.set_judgments(r, levels[r], "web (alice)")
    finally:
        s.close()
    tmp.rename(db)
    return db


def page_run(src: Path, db: Path, copy: Path, n_answers: int) -> dict[str, float]:
    """:mod:`_page_answers` with ``src`` first on ``PYTHONPATH``, on a fresh copy of
    ``db``; returns its JSON line (CPU and wall seconds of the answers, ...)."""
    for suffix in ("", "-wal", "-shm"):
        Path(f"{copy}{suffix}").unlink(missing_ok=True)
    shutil.copyfile(db, copy)
    env = {**os.environ, "PYTHONPATH": str(src)}
    out = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "_page_answers.py"),
                          str(copy), str(n_answers)], env=env, capture_output=True,
                         text=True, check=False)
    if out.returncode:
        raise SystemExit(f"{src}: the page's answers failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def page_case(args: argparse.Namespace) -> str:
    """The labelling page's answer on a paired session of ``--page-items`` answered
    items: this checkout against ``--baseline`` (module docstring); returns the
    section's text."""
    load0 = os.getloadavg()
    c0 = time.process_time()
    fresh = not (args.workdir / f"paired-{args.page_items}-{args.page_answers}.db").exists()
    db = make_paired_session(args.workdir, args.page_items, args.page_answers)
    made = f"made in {time.process_time() - c0:.1f} CPU s" if fresh else "made by an " \
        "earlier run"
    versions = {"this checkout": ROOT / "src"}
    if args.baseline is not None:
        versions["baseline"] = args.baseline.resolve()
    res: dict[str, list[dict[str, float]]] = {v: [] for v in versions}
    names = list(versions)
    for r in range(args.repeats):
        for v in names[r % len(names):] + names[:r % len(names)]:  # order rotated
            res[v].append(page_run(versions[v], db, args.workdir / "page.db",
                                   args.page_answers))
    load1 = os.getloadavg()
    k = args.page_answers
    med = {v: (statistics.median(x["cpu"] for x in xs) / k,
               statistics.median(x["wall"] for x in xs) / k) for v, xs in res.items()}
    base = "baseline" if "baseline" in med else "this checkout"
    lines = ["| version | CPU s/answer (runs) | wall s/answer | CPU / baseline | "
             "wall / baseline | undo with nothing to undo |", "|---|---|---|---|---|---|"]
    for v in names:
        c, w = med[v]
        runs = ", ".join(f"{x['cpu'] / k:.3f}" for x in res[v])
        moved = {bool(x["undo_moved_mark"]) for x in res[v]}
        undo = "a commit (the mark moved)" if moved == {True} else (
            "nothing written" if moved == {False} else "mixed")
        lines.append(f"| {v} | {c:.3f} ({runs}) | {w:.3f} | {c / med[base][0]:.2f}x | "
                     f"{w / med[base][1]:.2f}x | {undo} |")
    cond = (f"{datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC, {os.cpu_count()} cores "
            f"(shared), load {load0[0]:.1f} before, {load1[0]:.1f} after; SQLite "
            f"{__import__('sqlite3').sqlite_version}; session file "
            f"{db.stat().st_size / 1e6:.0f} MB")
    base_arg = " --baseline SRC" if args.baseline is not None else ""
    return "\n".join([
        "## Label throughput: the labelling page",
        "",
        f"`nice -n 10 python benchmarks/label_throughput.py --page --page-items "
        f"{args.page_items} --page-answers {k} --repeats {args.repeats}{base_arg}` "
        f"({cond}; SRC: {args.baseline_name or 'none'}). A paired graded session (a "
        f"compared target's answers) of {args.page_items + k:,} items, all drawn, "
        f"{args.page_items:,} answered by one annotator as the page stores answers "
        f"({made}); then a second annotator gives {k} answers on a fresh "
        f"copy (`Annotators.answer_and_held`, one held ahead: the page's `api/answer`), "
        f"each version in a child process of its own, interleaved, {args.repeats} runs "
        f"each; medians per answer, CPU seconds of the answering process (the machine "
        f"is shared: read the ratios, measured side by side), and an undo by an "
        f"annotator with nothing to undo (whether it moved the file's write mark).",
        "",
        *lines,
        "",
        PAGE_NOTE,
    ])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n-items", type=float, default=2e5)
    ap.add_argument("--labels", type=int, default=300)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--all", action="store_true", help="also the FULL variants")
    ap.add_argument("--workdir", type=Path, default=Path("/tmp/activetest-label-throughput"))
    ap.add_argument("--write", action="store_true", help="write docs/benchmarks.md's section")
    ap.add_argument("--page", action="store_true",
                    help="the labelling page's answers on a large paired session instead")
    ap.add_argument("--page-items", type=int, default=20_000,
                    help="--page: answered items of the session")
    ap.add_argument("--page-answers", type=int, default=10,
                    help="--page: answers timed per run")
    ap.add_argument("--baseline", type=Path, default=None,
                    help="--page: another checkout's src, measured in the same run")
    ap.add_argument("--baseline-name", default=None,
                    help="--page: what --baseline is (a commit), printed with the table")
    args = ap.parse_args()
    n_items = int(args.n_items)
    args.workdir.mkdir(parents=True, exist_ok=True)
    if args.page:
        text = page_case(args)
        print(text)
        if args.write:
            write_section(text, "Label throughput: the labelling page")
        return
    load0 = os.getloadavg()
    db, init_wall, init_cpu = make_session(args.workdir, n_items, args.labels)
    names = list(VARIANTS) if args.all else ["fold", "no fold"]
    res: dict[str, list[tuple[float, float]]] = {v: [] for v in names}
    for r in range(args.repeats):
        for v in names[r % len(names):] + names[:r % len(names)]:  # order rotated
            res[v].append(label_run(db, args.workdir / "run.db", *VARIANTS[v]))
    load1 = os.getloadavg()
    per = 1e3 / args.labels
    med = {v: (statistics.median(w for w, _ in xs) * per,
               statistics.median(c for _, c in xs) * per) for v, xs in res.items()}
    base_w, base_c = med["no fold"]
    full = "no fold, FULL" in med  # the store before the fold (2026-12-07): FULL, no fold
    lines = ["| variant | wall ms/label (runs) | CPU ms/label | wall / no fold | "
             "CPU / no fold |" + (" wall / no fold, FULL |" if full else ""),
             "|---|---|---|---|---|" + ("---|" if full else "")]
    for v in names:
        w, c = med[v]
        runs = ", ".join(f"{x * per:.1f}" for x, _ in res[v])
        lines.append(f"| {v} | {w:.2f} ({runs}) | {c:.3f} | {w / base_w:.2f}x | "
                     f"{c / base_c:.2f}x |"
                     + (f" {w / med['no fold, FULL'][0]:.2f}x |" if full else ""))
    cond = (f"{datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC, {os.cpu_count()} cores, "
            f"load {load0[0]:.1f} before, {load1[0]:.1f} after; SQLite "
            f"{__import__('sqlite3').sqlite_version}; session file on "
            f"{args.workdir} ({db.stat().st_size / 1e6:.0f} MB)")
    text = "\n".join([
        "## Label throughput",
        "",
        f"`nice -n 10 python benchmarks/label_throughput.py --n-items {n_items} "
        f"--labels {args.labels} --repeats {args.repeats}{' --all' if args.all else ''}` "
        f"({cond}). A session of {n_items:,} items (`init` from a Parquet pool and two "
        f"`table:` prediction tables: {init_wall:.1f} s wall, {init_cpu:.1f} s CPU), "
        f"{args.labels} drawn items labelled one label per transaction (as `label` and the "
        f"labelling page save an answer), each variant on a fresh copy, interleaved, "
        f"{args.repeats} runs each; medians per label. `fold`: the store as it is (the "
        f"journal folded into the file after each commit); `no fold`: the same with the "
        f"fold switched off, the baseline of the same run; `FULL`, `NORMAL`: the writer "
        f"with that `PRAGMA synchronous` (the store's own: {SYNCHRONOUS}).",
        "",
        *lines,
        "",
        DECISION,
    ])
    print(text)
    if args.write:
        write_section(text, "Label throughput")


if __name__ == "__main__":
    main()
