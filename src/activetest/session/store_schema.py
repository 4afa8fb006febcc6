"""The SQL of a session file: its tables, the schema version and the app marker.

The tables are described in :mod:`activetest.session.store`; the per-item numbers'
tables (``column_info``, ``columns``) are in :mod:`activetest.session.columns`.
"""

from __future__ import annotations

__all__ = ["APP_ID", "READABLE_VERSIONS", "SCHEMA", "SCHEMA_VERSION"]

#: Schema version written to ``PRAGMA user_version``; newer files are refused.
SCHEMA_VERSION = 4
#: Versions this activetest reads (1 lacks ``answers``, 2 lacks ``judgments``, 3
#: stores scores as one blob per model).
READABLE_VERSIONS = (1, 2, 3, 4)
#: Value of ``meta.app``: marks a SQLite file as an activetest session.
APP_ID = "activetest-session"

SCHEMA = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE config (id INTEGER PRIMARY KEY CHECK (id = 1), json TEXT NOT NULL);
CREATE TABLE items (
    idx INTEGER PRIMARY KEY,
    item_id TEXT NOT NULL UNIQUE,
    fields TEXT NOT NULL,
    data_label INTEGER
);
CREATE TABLE examples (
    pos INTEGER PRIMARY KEY,
    item_id TEXT NOT NULL,
    fields TEXT NOT NULL,
    label INTEGER NOT NULL
);
CREATE TABLE scores (
    role TEXT PRIMARY KEY,
    spec TEXT NOT NULL,
    n_rows INTEGER NOT NULL,
    n_classes INTEGER NOT NULL,
    logprobs BLOB NOT NULL,
    provenance TEXT NOT NULL,
    updated TEXT NOT NULL
);
CREATE TABLE predictions (
    role TEXT NOT NULL,
    idx INTEGER NOT NULL REFERENCES items(idx),
    predicted INTEGER NOT NULL,
    probability REAL NOT NULL,
    PRIMARY KEY (role, idx)
);
CREATE TABLE sampler (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    alpha REAL NOT NULL,
    seed INTEGER,
    rng_state TEXT NOT NULL,
    updated TEXT NOT NULL
);
CREATE TABLE acquisitions (
    step INTEGER PRIMARY KEY,
    idx INTEGER NOT NULL UNIQUE REFERENCES items(idx),
    q REAL NOT NULL CHECK (q > 0 AND q <= 1),
    created TEXT NOT NULL
);
CREATE TABLE labels (
    idx INTEGER PRIMARY KEY REFERENCES items(idx),
    label INTEGER NOT NULL,
    source TEXT NOT NULL,
    created TEXT NOT NULL,
    updated TEXT NOT NULL
);
CREATE TABLE label_history (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    idx INTEGER NOT NULL REFERENCES items(idx),
    old_label INTEGER,
    new_label INTEGER,
    action TEXT NOT NULL,
    source TEXT NOT NULL,
    at TEXT NOT NULL
);
CREATE INDEX label_history_idx ON label_history (idx);
CREATE TABLE design_draws (
    step INTEGER PRIMARY KEY REFERENCES acquisitions(step),
    control REAL NOT NULL,
    control_rest REAL NOT NULL,
    lam REAL NOT NULL,
    n_known INTEGER NOT NULL,
    refits INTEGER NOT NULL,
    seen_label INTEGER,
    seen_loss REAL
);
CREATE TABLE answers (
    role TEXT NOT NULL,
    idx INTEGER NOT NULL REFERENCES items(idx),
    answer TEXT NOT NULL,
    refs TEXT NOT NULL,
    info TEXT NOT NULL,
    PRIMARY KEY (role, idx)
);
CREATE TABLE judgments (
    role TEXT NOT NULL,
    idx INTEGER NOT NULL REFERENCES items(idx),
    label INTEGER NOT NULL,
    source TEXT NOT NULL,
    created TEXT NOT NULL,
    updated TEXT NOT NULL,
    PRIMARY KEY (role, idx)
);
CREATE TABLE judgment_history (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    role TEXT NOT NULL,
    idx INTEGER NOT NULL REFERENCES items(idx),
    old_label INTEGER,
    new_label INTEGER,
    action TEXT NOT NULL,
    source TEXT NOT NULL,
    at TEXT NOT NULL
);
CREATE TABLE estimates (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    at TEXT NOT NULL,
    n_labels INTEGER NOT NULL,
    metric TEXT NOT NULL,
    method TEXT NOT NULL,
    estimate REAL NOT NULL,
    std REAL,
    low REAL,
    high REAL,
    level REAL,
    details TEXT NOT NULL
);
"""
