"""Where a :class:`~activetest.session.workflow.Session` stands: draws, labels, the
latest recorded estimates and whether they are stale, what waits, and how each model's
stored scores were read from the label words (``activetest status``)."""

from __future__ import annotations

from typing import Any

from activetest.session import draw
from activetest.session import estimate as est
from activetest.session.history_neighbours import surrogate_column
from activetest.session.records import SessionStatus
from activetest.session.source_names import shown_source
from activetest.session.store import EstimateRow, SessionStore

__all__ = ["absent_paths", "label_scoring", "session_status"]


def session_status(s: Any) -> SessionStatus:
    """Where the open session ``s`` stands
    (:meth:`activetest.session.workflow.Session.status`)."""
    cfg = s.session_config
    store = s.store
    used, answers, _ = draw.usable_prefix(store)
    n_sel = store.n_acquired()
    n_lab = len(answers)
    last: dict[tuple[str, str], EstimateRow] = {}
    for row in store.estimates():
        last[(row.metric, row.method)] = row
    meta = store.meta()
    rows = list(last.values())
    stale = est.estimate_stale([r for r in rows if r.method == "lure"], len(used),
                               store.last_label_change())
    same = tuple(m for m in s.metrics if est.cv_same_as_lure(m, cfg.acquisition))
    return SessionStatus(str(s.path), s.n_items, n_sel, n_lab, n_sel - n_lab,
                         len(used), cfg.metric, cfg.acquisition, cfg.surrogate,
                         cfg.target, int(cfg.seed), float(cfg.proposal_floor),
                         rows, meta.get("created", ""), stale, draw.waiting(store),
                         same, s.kind.compared_waiting(store), label_scoring(store),
                         surrogate_column(str(cfg.surrogate), cfg.extra.get("history")),
                         shown_source(cfg.pool, cfg.kind), absent_paths(cfg))


def absent_paths(cfg: Any) -> tuple[str, ...]:
    """The specs of the config's target, surrogate and compared targets whose recorded
    local path names nothing on this machine
    (:func:`activetest.session.spec_files.absent_recorded_path`), in that order."""
    from activetest.session.spec_files import absent_recorded_path

    specs = [str(cfg.target), str(cfg.surrogate), *map(str, cfg.compare or ())]
    return tuple(dict.fromkeys(s for s in specs if absent_recorded_path(s) is not None))


def label_scoring(store: SessionStore) -> dict[str, Any]:
    """Role -> how its stored scores were read from the label words
    (:class:`activetest.models.labels.LabelScoring`), where recorded."""
    from activetest.models.labels import LabelScoring

    out = {}
    for role in store.score_roles():
        prov = store.score_provenance(role) or {}
        got = LabelScoring.from_provenance(prov.get("label_scoring"))
        if got is not None:
            out[role] = got
    return out
