"""Shared helpers (and the ``pool_files`` fixture) of the session tests: a small
labelled pool and prediction tables.

Workflow tests use the ``table:`` backend (predictions in CSV files) so that they
test the workflow, not the models; the end-to-end tests load the bundled model.
"""

from __future__ import annotations

import contextlib
import csv
import importlib.util
import json
import os
import sqlite3
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from activetest.data.demo import demo_items

REPO = Path(__file__).resolve().parents[2]
SRC = REPO / "src"


@dataclass(frozen=True)
class PoolFiles:
    """A pool file with labels, in-context examples and two/three prediction tables."""

    dir: Path
    pool: Path
    examples: Path
    surrogate: Path
    target: Path
    target2: Path
    labels: np.ndarray  # the pool file's labels, in row order
    ids: list[str]


def _write_pool(path: Path, items: list, with_labels: bool = True) -> None:
    with path.open("w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["id", "text", "label"] if with_labels else ["id", "text"])
        for it in items:
            row = [it.id, it.fields["text"]]
            if with_labels:
                row.append(["negative", "positive"][it.label])
            w.writerow(row)


def _write_table(path: Path, ids: list[str], logprobs: np.ndarray) -> None:
    with path.open("w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["id", "negative", "positive"])
        for i, row in zip(ids, logprobs, strict=True):
            w.writerow([i, repr(float(row[0])), repr(float(row[1]))])


def fake_logprobs(labels: np.ndarray, accuracy: float, sharpness: float,
                  rng: np.random.Generator) -> np.ndarray:
    """Class log-probs of a synthetic model that is right with probability ``accuracy``."""
    n = len(labels)
    right = rng.random(n) < accuracy
    pred = np.where(right, labels, 1 - labels)
    conf = 1 / (1 + np.exp(-rng.normal(sharpness, 1.0, n)))  # P(predicted class)
    p = np.where(pred == 1, conf, 1 - conf)
    p = np.clip(p, 1e-9, 1 - 1e-9)
    return np.log(np.stack([1 - p, p], axis=1))


def write_squad_pool(path: Path, n: int = 12) -> Path:
    """A tiny graded (``squad``) pool at ``path``: ``n`` copies of one question, the answer
    in the pool (wrong on every third item) with a confidence column ``conf``."""
    rows = [{"id": f"q{i}", "context": "The capital of Japan is Tokyo.",
             "question": "What is the capital of Japan?", "references": ["Tokyo"],
             "answer": "Tokyo" if i % 3 else "Kyoto", "conf": 0.9 if i % 3 else 0.4}
            for i in range(n)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def make_pool_files(root: Path, n: int = 60, seed: int = 0) -> PoolFiles:
    """Write a pool of ``n`` demo reviews (ids "r0".."r{n-1}") and prediction tables."""
    root.mkdir(parents=True, exist_ok=True)
    raw = demo_items(n + 20, seed=seed)
    items = [type(it)(id=f"r{i}", fields={"text": it.fields["text"]}, label=it.label)
             for i, it in enumerate(raw[:n])]
    examples = [type(it)(id=f"e{i}", fields={"text": it.fields["text"]}, label=it.label)
                for i, it in enumerate(raw[n:])]
    pool = root / "pool.csv"
    _write_pool(pool, items)
    ex = root / "examples.csv"
    _write_pool(ex, examples)
    labels = np.array([it.label for it in items])
    ids = [it.id for it in items]
    rng = np.random.default_rng(seed + 1)
    paths = []
    for name, acc, sharp in (("surrogate", 0.8, 1.5), ("target", 0.75, 2.0),
                             ("target2", 0.65, 1.0)):
        path = root / f"{name}.csv"
        _write_table(path, ids, fake_logprobs(labels, acc, sharp, rng))
        paths.append(path)
    return PoolFiles(root, pool, ex, paths[0], paths[1], paths[2], labels, ids)


@pytest.fixture
def pool_files(tmp_path: Path) -> PoolFiles:
    """60 labelled demo reviews with synthetic surrogate/target/second-target tables."""
    return make_pool_files(tmp_path / "data")


def cli_env(tmp_path: Path) -> dict[str, str]:
    """Environment for running the CLI in a subprocess from the source tree."""
    env = dict(os.environ)
    env["PYTHONPATH"] = str(SRC) + os.pathsep + env.get("PYTHONPATH", "")
    env["ACTIVETEST_CACHE"] = str(tmp_path / "cache")
    env["PYTHONUNBUFFERED"] = "1"
    env["NO_COLOR"] = "1"
    env["COLUMNS"] = "200"
    return env


def as_a_terminal_would() -> None:
    """``preexec_fn`` for a child that must see Ctrl-C: a shell without job control
    starts background jobs with SIGINT ignored, and an ignored signal is inherited
    across exec; a person's terminal does not do that."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_DFL)


def cli_command(*args: str) -> list[str]:
    """``python -m activetest.cli ARGS``."""
    return [sys.executable, "-m", "activetest.cli", *args]


def count_rows(db: Path, table: str) -> int:
    """Rows of ``table`` of the session file ``db`` as a read-only reader sees them (it
    never folds the journal)."""
    with contextlib.closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as con:
        return int(con.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0])


def cli_session(pool_files: PoolFiles, db: Path, env: dict[str, str], n: int = 3) -> None:
    """A ``table:`` session at ``db`` (task demo, seed 0) made by ``activetest init`` and
    ``select --n N`` in child processes (``env``: :func:`cli_env`'s)."""
    for args in (["init", str(db), "--pool", str(pool_files.pool), "--id-column", "id",
                  "--task", "demo", "--surrogate", f"table:{pool_files.surrogate}",
                  "--target", f"table:{pool_files.target}", "--seed", "0", "--no-progress"],
                 ["select", str(db), "--n", str(n)]):
        subprocess.run(cli_command(*args), env=env, check=True, capture_output=True)


def session_with_backup(pool_files: PoolFiles, tmp_path: Path, n: int = 4
                        ) -> tuple[dict[str, str], Path, Path]:
    """``(env, db, backup)``: :func:`cli_env`'s environment, a session ``tmp_path/s.db``
    of ``n`` draws and no label (:func:`cli_session`), and ``tmp_path/backup.db``, a
    copy of it made now (the user's backup, to be copied over the session later)."""
    import shutil

    env = cli_env(tmp_path)
    db, backup = tmp_path / "s.db", tmp_path / "backup.db"
    cli_session(pool_files, db, env, n)
    shutil.copyfile(db, backup)
    return env, db, backup


def label_child(db: Path, env: dict[str, str]) -> subprocess.Popen[str]:
    """``activetest label DB`` as a child process (``env``: :func:`cli_env`'s), its
    stdin, stdout and stderr pipes of text: answers are written to it as a person types
    them (:func:`wait_for_question` reads up to each question)."""
    return subprocess.Popen(cli_command("label", str(db)), env=env, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def wait_for_labels(db: Path, labels: int, proc: subprocess.Popen[str]) -> None:
    """Wait (up to 60 s) until ``db`` holds ``labels`` labels, as :func:`count_rows` reads
    them; fails where ``proc`` (the child writing them) ends first."""
    import time

    deadline = time.monotonic() + 60
    while count_rows(db, "labels") < labels:
        assert proc.poll() is None and time.monotonic() < deadline
        time.sleep(0.05)


def wait_for_question(proc: subprocess.Popen[str], number: str) -> None:
    """Read the ``label`` child's output up to the keys of its question ``number``
    (``"2/4"``: its heading is printed once the answer before it was saved and its fold
    tried; the keys, once the question's item and prompt were read from the file: the
    run then waits for its answer, as a person would leave it)."""
    assert proc.stdout is not None
    heading = False
    while True:
        line = proc.stdout.readline()
        assert line, f"`label` ended before its question {number}"
        heading = heading or f" {number} " in line
        if heading and "q=quit" in line:
            return


def require_models(*modules: str) -> None:
    """Skip when llama-cpp-python or a bundled model package is missing."""
    if importlib.util.find_spec("llama_cpp") is None:
        pytest.skip("llama-cpp-python is not installed")
    for module in modules:
        if importlib.util.find_spec(module) is None:
            pytest.skip(f"bundled model package {module!r} is not installed")


def labelled_table_session(pool_files: PoolFiles, db: Path, *, seed: int, n: int) -> Path:
    """A ``table:`` session at ``db`` (both metrics, CE acquisition) with ``n`` items
    drawn and labelled from the pool's own labels; returns ``db``."""
    from typer.testing import CliRunner

    from activetest.cli import app
    from activetest.session.workflow import Session

    runner = CliRunner()
    for args in (
        ["init", db, "--pool", pool_files.pool, "--task", "demo", "--surrogate",
         f"table:{pool_files.surrogate}", "--target", f"table:{pool_files.target}",
         "--id-column", "id", "--metric", "both", "--acquisition", "ce", "--seed", seed,
         "--no-progress"],
        ["select", db, "--n", n],
    ):
        result = runner.invoke(app, [str(a) for a in args])
        assert result.exit_code == 0, (result.exit_code, result.output, result.exception)
    with Session.open(db) as s:
        s.label_from_data()
    return db


def run_cli_process(*args: object, code: int = 0, columns: int = 200) -> str:
    """Run ``python -m activetest ARGS`` in a child process from the source tree; check
    the exit code and that no traceback was printed; return stdout + stderr with runs
    of whitespace folded to one space (so wrapped lines match)."""
    import subprocess

    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(SRC), env.get("PYTHONPATH", "")])
    env.update(NO_COLOR="1", COLUMNS=str(columns))
    proc = subprocess.run([sys.executable, "-m", "activetest", *map(str, args)], env=env,
                          capture_output=True, text=True, timeout=600)
    out = proc.stdout + proc.stderr
    assert proc.returncode == code, (proc.returncode, out[-3000:])
    assert "Traceback" not in out
    return " ".join(out.split())


#: A child that draws ``a + (draws so far) % b`` items at a time and labels them from the
#: pool's data until ``n`` draws (argv: db, n, "a,b", mode; mode "estimate" also records an
#: estimate after every round from 30 draws on), printing the count after each round.
SELECT_LABEL_LOOP = """
import sys
from activetest.session.workflow import Session
a, b = (int(x) for x in sys.argv[3].split(","))
with Session.open(sys.argv[1]) as s:
    while len(s.acquisitions()) < int(sys.argv[2]):
        s.select(a + len(s.acquisitions()) % b)
        s.label_from_data()
        if len(s.acquisitions()) >= 30 and sys.argv[4] == "estimate":
            s.estimate(progress=False)
        print(len(s.acquisitions()), flush=True)
"""


def run_select_label_loop(db: Path, n: int, env: dict[str, str], *, batch: tuple[int, int] = (1, 3),
                          mode: str = "-", kill_at: int | None = None) -> None:
    """Run :data:`SELECT_LABEL_LOOP` on ``db`` in a real child process to ``n`` draws, or,
    with ``kill_at``, SIGKILL it once it has reported at least that many draws (the kill
    lands wherever the child is: mid-draw, mid-label, mid-estimate)."""
    import signal
    import subprocess

    cmd = [sys.executable, "-c", SELECT_LABEL_LOOP, str(db), str(n), f"{batch[0]},{batch[1]}",
           mode]
    if kill_at is None:
        subprocess.run(cmd, env=env, check=True, stdout=subprocess.DEVNULL)
        return
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    while True:
        line = proc.stdout.readline()
        if not line or int(line) >= kill_at:
            break
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()


def damage_stored_array(con: sqlite3.Connection, table: str, member: str, offset: int) -> None:
    """Change one byte inside the stored npz array ``member`` of ``table``'s ``state``
    blob (a real damage: the zip member's CRC no longer matches, ``zipfile.BadZipFile``
    when it is read) and commit."""
    blob = bytearray(con.execute(f"SELECT state FROM {table}").fetchone()[0])
    at = blob.find(member.encode())
    assert at > 0, f"no {member} in the stored state"
    blob[at + offset] ^= 0xFF
    con.execute(f"UPDATE {table} SET state = ?", (bytes(blob),))
    con.commit()


@contextlib.contextmanager
def tmpfs(size_kib: int) -> Iterator[Path]:
    """A real tmpfs of ``size_kib``; skip the test where it cannot be mounted."""
    mnt = Path(tempfile.mkdtemp(prefix="activetest-tmpfs-"))
    proc = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size_kib}k", "tmpfs", str(mnt)],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        mnt.rmdir()
        pytest.skip(f"cannot mount a tmpfs here ({proc.stderr.strip()})")
    try:
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], capture_output=True)
        with contextlib.suppress(OSError):
            mnt.rmdir()


def spy_on_stream(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """A list that gets one entry each time the streamed ``init`` path runs to its end
    (a fall back to the in-memory path, ``NotStreamable``, passes through unrecorded)."""
    from activetest.session import stream_init

    ran: list[int] = []
    real = stream_init._stream

    def spy(*a: object, **k: object) -> object:
        out = real(*a, **k)
        ran.append(1)
        return out

    monkeypatch.setattr(stream_init, "_stream", spy)
    return ran


def no_general_path(*a: object, **k: object) -> object:
    """A stand-in for ``create.load_inputs`` (the general path) that fails the test."""
    raise AssertionError("the general path read the whole pool into memory")


def init_refusal(db: Path, files: tuple[Path, Path, Path], kind: str = "") -> str:
    """The message of the ``ValueError`` that refuses :func:`create_from_tables` of
    ``files`` (``db`` not written, no ``.*creating*`` file left beside it); ``kind``: the
    tables' specs' options (``?kind=probs``)."""
    with pytest.raises(ValueError) as err:
        create_from_tables(db, files, kind=kind)
    assert not db.exists() and not list(db.parent.glob(".*creating*"))
    return str(err.value)


def general_and_streamed_refusals(folder: Path, files: tuple[Path, Path, Path],
                                  monkeypatch: pytest.MonkeyPatch,
                                  kind: str = "") -> tuple[str, str]:
    """The refusals of ``init`` of ``files`` on the general path (the stream turned off;
    ``folder/g.db``) and on the stream (the general path made to fail; ``folder/s.db``):
    ``(general, streamed)``; both paths restored afterwards. ``kind``: the tables'
    specs' options (``?kind=probs``)."""
    from activetest.session import create, stream_init

    real_try = stream_init.try_stream
    monkeypatch.setattr(stream_init, "try_stream", lambda *a, **k: None)
    general = init_refusal(folder / "g.db", files, kind)
    monkeypatch.setattr(stream_init, "try_stream", real_try)
    real_load = create.load_inputs
    monkeypatch.setattr(create, "load_inputs", no_general_path)
    streamed = init_refusal(folder / "s.db", files, kind)
    monkeypatch.setattr(create, "load_inputs", real_load)
    return general, streamed


def streamed_is_the_general_session(folder: Path, files: tuple[Path, Path, Path],
                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """``init`` of ``files`` (:func:`create_from_tables`) on the stream, the general path
    made to fail (``folder/s.db``): the stream runs to its end, and the session is the one
    the general path makes with the stream turned off (``folder/g.db``), bit for bit
    (:func:`same_session`); both paths restored afterwards."""
    from activetest.session import create, stream_init

    ran = spy_on_stream(monkeypatch)
    real_load = create.load_inputs
    monkeypatch.setattr(create, "load_inputs", no_general_path)
    create_from_tables(folder / "s.db", files).close()
    assert ran
    monkeypatch.setattr(create, "load_inputs", real_load)
    real_try = stream_init.try_stream
    monkeypatch.setattr(stream_init, "try_stream", lambda *a, **k: None)
    create_from_tables(folder / "g.db", files).close()
    monkeypatch.setattr(stream_init, "try_stream", real_try)
    same_session(folder / "s.db", folder / "g.db")


def init_from_tables(db: Path, pool: Path, sur: Path, tgt: Path) -> tuple[int, str]:
    """``activetest init`` of an sst2 pool with ``table:`` surrogate and target (ids in
    column ``id``, seed 3), in process: the exit code and the output, whitespace joined."""
    from typer.testing import CliRunner

    from activetest.cli import app

    result = CliRunner().invoke(app, ["init", str(db), "--pool", str(pool), "--task", "sst2",
                                      "--surrogate", f"table:{sur}", "--target",
                                      f"table:{tgt}", "--id-column", "id", "--seed", "3",
                                      "--no-progress"])
    return result.exit_code, " ".join(result.output.split())


def run_cli(*args: object, code: int = 0) -> str:
    """``activetest ARGS`` in process (typer's runner): its output; asserts the exit code
    (``code``) and, for a refusal (2), that no traceback was printed."""
    from typer.testing import CliRunner

    from activetest.cli import app

    result = CliRunner().invoke(app, [str(a) for a in args])
    assert result.exit_code == code, (result.exit_code, result.output, result.exception)
    if code == 2:
        assert "Traceback" not in result.output
    return result.output


def write_pool_tables(folder: Path, n: int, fmt: str = "csv", order: np.ndarray | None = None,
                      duplicate: bool = False) -> tuple[Path, Path, Path]:
    """An sst2 pool of ``n`` items (ids ``it0``...; ``duplicate``: item 10 has item 3's id)
    and two prediction tables of log-probs (``surrogate``, ``target``; in the pool's order,
    or ``order``'s) in ``fmt``: the paths ``(pool, surrogate, target)``."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(n)
    ids = [f"it{i}" for i in range(n)]
    y = rng.integers(0, 2, n)
    z = rng.normal(size=(2, n, 2))
    lp = z - np.logaddexp(z[..., :1], z[..., 1:])
    pool = {"id": [ids[3] if duplicate and i == 10 else x for i, x in enumerate(ids)],
            "sentence": [f"text \"{i}\", é\n{i % 7}" for i in range(n)],
            "label": [("negative", "positive")[k] for k in y]}
    paths = []
    for name, rows in (("pool", pool),
                       *((m, {"id": ids, "negative": lp[k, :, 0], "positive": lp[k, :, 1]})
                         for k, m in enumerate(("surrogate", "target")))):
        t = pa.table(rows)
        if order is not None and name != "pool":
            t = t.take(pa.array(order))
        path = folder / f"{name}.{fmt}"
        if fmt == "parquet":
            pq.write_table(t, path)
        elif fmt == "jsonl":
            path.write_text("".join(json.dumps(r) + "\n" for r in t.to_pylist()))
        else:
            import pyarrow.csv as pcsv

            pcsv.write_csv(t, path)
        paths.append(path)
    return paths[0], paths[1], paths[2]


def create_from_tables(db: Path, files: tuple[Path, Path, Path], kind: str = "",
                       **kw: object) -> Any:
    """The session of :func:`write_pool_tables`' files (seed 3), made in process;
    ``kind``: the tables' specs' options (``?kind=probs``)."""
    from activetest.session.workflow import Session

    pool, sur, tgt = files
    return Session.create(db, pool=pool, task="sst2", surrogate=f"table:{sur}{kind}",
                          target=f"table:{tgt}{kind}", seed=3, pool_options={"id_column": "id"},
                          progress=False, **kw)


def same_session(a: Path, b: Path) -> None:
    """Assert that two session files hold the same config, items, scores (bit for bit,
    provenance but its time) and sampler state."""
    from activetest.session.store import SessionStore

    sa, sb = SessionStore.open(a), SessionStore.open(b)
    try:
        assert sa.config() == sb.config()
        assert sa.items() == sb.items()
        for role in ("surrogate", "target", "acquisition"):
            x, y = sa.scores(role), sb.scores(role)
            assert x is not None and y is not None
            assert x.logprobs.tobytes() == y.logprobs.tobytes()
            px, py = dict(x.provenance), dict(y.provenance)
            px.pop("scored_at", None)
            py.pop("scored_at", None)
            assert px == py
        assert sa.sampler_row() == sb.sampler_row()
    finally:
        sa.close()
        sb.close()


def tsv_tables(files: tuple[Path, Path, Path]) -> tuple[Path, Path, Path]:
    """The CSV tables of ``files`` written as TSV files (the pool kept)."""
    import pyarrow.csv as pcsv

    out = []
    for path in files[1:]:
        t = pcsv.read_csv(path)
        tsv = path.with_suffix(".tsv")
        tsv.write_text("id\tnegative\tpositive\n" + "".join(
            f"{r['id']}\t{r['negative']!r}\t{r['positive']!r}\n" for r in t.to_pylist()))
        out.append(tsv)
    return files[0], out[0], out[1]


def texts_inside(fig: Any) -> None:
    """Everything drawn (titles, legend, labels, ticks) lies inside the figure."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    drawn = fig.get_tightbbox(renderer)  # inches
    width, height = fig.get_size_inches()
    tol = 0.5 / fig.dpi
    assert drawn.x0 >= -tol and drawn.y0 >= -tol, drawn
    assert drawn.x1 <= width + tol and drawn.y1 <= height + tol, (drawn, width, height)
    texts = [fig._suptitle, *fig.legends] if fig._suptitle is not None else [*fig.legends]
    assert texts
    for t in texts:  # and each named part on its own
        e = t.get_window_extent(renderer)
        assert (e.x0 >= -0.5 and e.x1 <= fig.bbox.x1 + 0.5 and e.y0 >= -0.5
                and e.y1 <= fig.bbox.y1 + 0.5), (t, e)
