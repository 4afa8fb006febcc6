"""The session file names the pool file (and the examples' file) without its local path.

QA: ``init --pool /home/me/data/pool.csv`` stored the path as given (or resolved) as
the config's ``pool.source`` in a file users share. No later command re-opens it (the
items are stored), so new sessions store the file's last component and the SHA-256 of
its bytes (a file given again can be confirmed the same); old files keep their path.

tests/session/test_spec_file_names.py reads the same session files the same way (the
stored config, by sqlite3) for another part of them: the model specs' files (answer
logs, prediction tables, a judge's table), which later commands read again and find by
their digests. The pool's and the examples' names are checked only here."""

from __future__ import annotations

import gzip
import hashlib
import json
import shutil
import sqlite3
from pathlib import Path

from session_support import make_pool_files, run_cli, write_pool_tables, write_squad_pool

from activetest.session.source_names import SourceName, of_file, shown_source
from activetest.session.workflow import Session

OLD = Path(__file__).parent / "data" / "old"


def _stored(db: Path) -> dict:
    """The config as the session file holds it (read with sqlite3, not the library)."""
    con = sqlite3.connect(db)
    try:
        (doc,) = con.execute("SELECT json FROM config").fetchone()
    finally:
        con.close()
    return json.loads(doc)


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _private_session(tmp_path: Path) -> tuple[Path, Path]:
    """A session ``s.db`` of a 40-item pool in a private folder (``home/me/data``), 6
    draws: the session and the pool's file."""
    folder = tmp_path / "home" / "me" / "data"
    folder.mkdir(parents=True)
    pool, sur, tgt = write_pool_tables(folder, 40)
    db = tmp_path / "s.db"
    run_cli("init", db, "--pool", pool, "--task", "sst2", "--surrogate", f"table:{sur}",
            "--target", f"table:{tgt}", "--id-column", "id", "--seed", "3", "--no-progress")
    run_cli("select", db, "--n", "6")
    return db, pool


def test_a_classification_session_names_its_pool_and_examples_files(tmp_path: Path) -> None:
    files = make_pool_files(tmp_path / "private" / "data")
    db = tmp_path / "s.db"
    run_cli("init", db, "--pool", files.pool.resolve(), "--examples", files.examples.resolve(),
            "--task", "sst2", "--surrogate", f"table:{files.surrogate}", "--target",
            f"table:{files.target}", "--id-column", "id", "--seed", "3", "--no-progress")
    cfg = _stored(db)
    assert cfg["pool"]["source"] == "pool.csv" and cfg["pool"]["sha256"] == _sha(files.pool)
    assert cfg["examples"]["source"] == "examples.csv"
    assert cfg["examples"]["sha256"] == _sha(files.examples)
    assert "private" not in json.dumps({k: cfg[k] for k in ("pool", "examples")}), cfg
    run_cli("status", db)  # the session opens and works as before


def test_a_graded_and_an_inspect_session_name_their_pool_file(tmp_path: Path) -> None:
    folder = tmp_path / "private"
    folder.mkdir()
    pool = write_squad_pool(folder / "squad.jsonl")
    db = tmp_path / "g.db"
    run_cli("init", db, "--pool", pool.resolve(), "--task", "squad", "--target", "pool",
            "--surrogate", "column:conf", "--seed", "0", "--no-progress")
    cfg = _stored(db)
    assert cfg["pool"] == {"source": "squad.jsonl", "sha256": _sha(pool), "n_items": 12}, cfg
    insp = folder / "pool.jsonl"
    insp.write_text("".join(json.dumps({"id": f"q{i}", "question": f"What is {i} plus 2?",
                                        "p_correct": 0.5}) + "\n" for i in range(20)))
    db = tmp_path / "i.db"
    run_cli("init", db, "--pool", insp.resolve(), "--task", "answers", "--target", "inspect",
            "--surrogate", "column:p_correct", "--seed", "0", "--no-progress")
    cfg = _stored(db)
    assert cfg["pool"] == {"source": "pool.jsonl", "sha256": _sha(insp), "n_items": 20}, cfg
    run_cli("status", db)


def test_the_report_names_the_pool_it_counts_by_file_and_digest(tmp_path: Path) -> None:
    """QA: the report's header said "Pool: N items" and no more: a reader could not tell
    which pool N is of. It names the pool's file by name (never the local folder) with
    the start of the SHA-256 the session stores; a session made before (its path stored)
    by the path's last component; items given in Python by no file."""
    db, pool = _private_session(tmp_path)
    run_cli("label", db, "--from-data")
    run_cli("report", db, "-o", tmp_path / "rep", "--no-progress")
    md = (tmp_path / "rep" / "report.md").read_text(encoding="utf-8")
    page = (tmp_path / "rep" / "report.html").read_text(encoding="utf-8")
    line = f"Pool: 40 items of pool.csv (sha256 {_sha(pool)[:12]}…)"
    assert f"- {line}\n" in md and f"<li>{line}</li>" in page, md[:600]
    assert "home/me" not in md and "home/me" not in page

    old = tmp_path / "old.db"  # stored /tmp/oldout/pool.csv, as sessions did before
    shutil.copyfile(OLD / "schema2_ce_both.db", old)
    with Session.open(old) as s:
        assert _stored(old)["pool"]["source"] == "/tmp/oldout/pool.csv"
        shown = s.report_data(progress=False).pool_file
    assert shown == SourceName("pool.csv", _stored(old)["pool"]["sha256"])
    assert shown_source({"source": "/a/x/pool.csv, /a/y/pool.csv"}, "classification"
                        ) == SourceName("x/pool.csv, y/pool.csv")
    for python in ({"source": "<items>", "n_items": 3}, {"n_items": 3}, None):
        assert shown_source(python, "classification") is None
    assert of_file(None) == "" and of_file(SourceName("g.jsonl")) == " of g.jsonl"


def test_status_names_the_pool_it_counts_as_the_report_does(tmp_path: Path) -> None:
    """QA: ``status`` said "pool N items" and no file, while the report's header names
    the pool's file and the start of its digest. ``status`` (its text, ``status --json``
    and ``print(session.status())``) names it the same way: by name, never the local
    folder; a session made before (its path stored) by the path's last component."""
    db, pool = _private_session(tmp_path)
    line = f"pool 40 items of pool.csv (sha256 {_sha(pool)[:12]}…): 6 selected"
    out = run_cli("status", db)
    assert line in out and "home/me" not in out, out
    got = json.loads(run_cli("status", db, "--json"))
    assert got["n_items"] == 40 and got["pool_file"] == {
        "source": "pool.csv", "sha256": _sha(pool), "unzipped": False, "shards": 0,
        "hub": False}, got
    with Session.open(db) as s:
        assert line in str(s.status())

    old = tmp_path / "old.db"  # stored /tmp/oldout/pool.csv, as sessions did before
    shutil.copyfile(OLD / "schema2_ce_both.db", old)
    digest = _stored(old)["pool"]["sha256"]
    (pool_line,) = [x for x in run_cli("status", old).splitlines() if x.startswith("pool ")]
    assert pool_line.startswith(f"pool 150 items of pool.csv (sha256 {digest[:12]}…): ")


def test_a_gz_pools_digest_is_said_to_be_of_what_the_session_stored(tmp_path: Path) -> None:
    """QA: a ``.gz`` pool's digest read "pool.csv.gz (sha256 ...)" where a classification
    session stores the digest of the unzipped text (the pool reader's) and a graded one
    that of the file's bytes: a reader's ``sha256sum pool.csv.gz`` matched one kind and
    not the other, unsaid. What is stored is unchanged; the report and ``status`` now say
    "of the unzipped text" where it is, and only there."""
    folder = tmp_path / "home" / "me" / "data"
    folder.mkdir(parents=True)
    csv, sur, tgt = write_pool_tables(folder, 40)
    pool = folder / "pool.csv.gz"
    pool.write_bytes(gzip.compress(csv.read_bytes(), mtime=0))
    text_sha, file_sha = _sha(csv), _sha(pool)
    assert text_sha != file_sha
    db = tmp_path / "c.db"
    run_cli("init", db, "--pool", pool, "--task", "sst2", "--surrogate", f"table:{sur}",
            "--target", f"table:{tgt}", "--id-column", "id", "--seed", "3", "--no-progress")
    assert _stored(db)["pool"] == {"source": "pool.csv.gz", "format": "csv",
                                   "sha256": text_sha, "n_items": 40}, _stored(db)["pool"]
    said = f"40 items of pool.csv.gz (sha256 of the unzipped text {text_sha[:12]}…)"
    run_cli("select", db, "--n", "6")
    run_cli("label", db, "--from-data")
    assert f"pool {said}: 6 selected" in run_cli("status", db)
    assert json.loads(run_cli("status", db, "--json"))["pool_file"] == {
        "source": "pool.csv.gz", "sha256": text_sha, "unzipped": True, "shards": 0,
        "hub": False}
    run_cli("report", db, "-o", tmp_path / "rep", "--no-progress")
    md = (tmp_path / "rep" / "report.md").read_text(encoding="utf-8")
    page = (tmp_path / "rep" / "report.html").read_text(encoding="utf-8")
    assert f"- Pool: {said}\n" in md and f"<li>Pool: {said}</li>" in page, md[:600]

    squad = write_squad_pool(folder / "squad.jsonl")
    gz = folder / "squad.jsonl.gz"
    gz.write_bytes(gzip.compress(squad.read_bytes(), mtime=0))
    db = tmp_path / "g.db"
    run_cli("init", db, "--pool", gz, "--task", "squad", "--target", "pool",
            "--surrogate", "column:conf", "--seed", "0", "--no-progress")
    assert _stored(db)["pool"] == {"source": "squad.jsonl.gz", "sha256": _sha(gz),
                                   "n_items": 12}, _stored(db)["pool"]
    said = f"12 items of squad.jsonl.gz (sha256 {_sha(gz)[:12]}…)"  # the file's bytes
    run_cli("select", db, "--n", "6")
    run_cli("label", db, "--from-data")
    assert f"pool {said}: 6 selected" in run_cli("status", db)
    run_cli("report", db, "-o", tmp_path / "grep", "--no-progress")
    md = (tmp_path / "grep" / "report.md").read_text(encoding="utf-8")
    assert f"- Pool: {said}\n" in md and "unzipped" not in md, md[:600]


def test_of_the_unzipped_text_is_said_of_the_compressed_pools_the_reader_unzips(
        tmp_path: Path) -> None:
    """The report's rule for a pool's digest "of the unzipped text"
    (:func:`shown_source`: a classification pool named ``.gz``) is the pool reader's:
    each real compressed file (gzip, bzip2, xz, under each suffix as named) is either
    read, its digest that of the unzipped text and said so, or refused (``.bz2``,
    ``.xz``: no reader decompresses them, so no session stores such a pool)."""
    import bz2
    import lzma

    from activetest.data.pool import PoolFormatError, load_pool

    csv, _, _ = write_pool_tables(tmp_path, 10)
    text = csv.read_bytes()
    read = []
    for name, pack in (("pool.csv.gz", gzip.compress), ("pool.csv.GZ", gzip.compress),
                       ("pool.csv.bz2", bz2.compress), ("pool.csv.xz", lzma.compress)):
        f = tmp_path / name
        f.write_bytes(pack(text))
        try:
            pool = load_pool(f, task="sst2", id_column="id")
        except PoolFormatError:
            assert name.endswith((".bz2", ".xz")), name
            continue
        read.append(name)
        assert pool.sha256 == hashlib.sha256(text).hexdigest() != _sha(f), name
        named = shown_source({"source": name, "sha256": pool.sha256}, "classification")
        assert named is not None and named.unzipped, name
        assert "of the unzipped text" in of_file(named), name
    assert read == ["pool.csv.gz", "pool.csv.GZ"]


def test_a_hub_pools_digest_says_what_was_hashed(tmp_path: Path) -> None:
    """QA: a pool read from a hub snapshot folder (``load_hub_pool``) was said as "of imdb
    (sha256 ...)", as if of a file named so, where the digest is of the bytes of the
    split's shard files in name order (no one file's, with two), and the folder is not
    on the machine the report is read on; a pool the ``datasets`` library read from the
    hub was said as "of train", its split, as if a file of that name had been read. The
    report and ``status`` now say what was hashed, or that nothing was."""
    from activetest.data import Pool, load_hub_pool

    folder = tmp_path / "home" / "me" / "data"
    folder.mkdir(parents=True)
    pool, sur, tgt = write_pool_tables(folder, 40, "jsonl")
    snap = tmp_path / "snap" / "imdb"
    (snap / "data").mkdir(parents=True)
    lines = pool.read_text(encoding="utf-8").splitlines(keepends=True)
    shards = [snap / "data" / f"train-0000{k}-of-00002.jsonl" for k in (0, 1)]
    shards[0].write_text("".join(lines[:25]), encoding="utf-8")
    shards[1].write_text("".join(lines[25:]), encoding="utf-8")
    digest = hashlib.sha256(shards[0].read_bytes() + shards[1].read_bytes()).hexdigest()
    read = load_hub_pool(snap, "train", task="sst2", id_column="id")
    hub_name = "hf://stanfordnlp/sst2/default/train"
    said = {"snap.db": "40 items of imdb (a hub snapshot folder, not a file: sha256 of the "
                       f"bytes of its 2 shard files in name order {digest[:12]}…)",
            "hub.db": f"40 items of {hub_name} (read from the hub by the datasets library: "
                      f"no file was read on this machine, so no digest)"}
    # what load_hub_pool returns for a name the datasets library read (that needs the hub)
    by_name = Pool(tuple(read), source=hub_name, format="hub")
    for name, given in (("snap.db", read), ("hub.db", by_name)):
        with Session.create(tmp_path / name, pool=given, task="sst2",
                            surrogate=f"table:{sur}", target=f"table:{tgt}", seed=3,
                            progress=False) as s:
            s.select(6)
            s.label_from_data()
    shutil.rmtree(tmp_path / "snap")  # the report is read elsewhere
    assert _stored(tmp_path / "snap.db")["pool"]["shards"] == 2
    assert _stored(tmp_path / "hub.db")["pool"]["source"] == hub_name
    for name, line in said.items():
        db = tmp_path / name
        assert f"pool {line}: 6 selected" in " ".join(run_cli("status", db).split())
        run_cli("report", db, "-o", tmp_path / f"rep-{name}", "--no-progress")
        md = (tmp_path / f"rep-{name}" / "report.md").read_text(encoding="utf-8")
        page = (tmp_path / f"rep-{name}" / "report.html").read_text(encoding="utf-8")
        # (the hub name a code span in report.md, as any URL; breakable in the page)
        assert f"- Pool: {line.replace(hub_name, f'`{hub_name}`')}\n" in md, md[:700]
        assert f"<li>Pool: {line}</li>" in page.replace("<wbr>", ""), page
    got = json.loads(run_cli("status", tmp_path / "snap.db", "--json"))["pool_file"]
    assert got == {"source": "imdb", "sha256": digest, "unzipped": False, "shards": 2,
                   "hub": False}, got
