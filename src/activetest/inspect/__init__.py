"""``activetest.inspect``: active testing inside inspect_ai; run the target only on the drawn items.

``ActiveStopping`` is an inspect_ai early-stopping manager (``Task(early_stopping=...)``,
inspect_ai >= 0.3.285). It works on a graded activetest session (``activetest init``
with a surrogate of the target's correctness; the judgment levels' scores are the
scorer's values, e.g. incorrect/correct = 0/1) whose items are the task's samples::

    from activetest.inspect import ActiveStopping

    stop = ActiveStopping("eval.db", width=0.10, budget=200)
    task = Task(dataset=stop.dataset(samples), solver=generate(), scorer=match(),
                early_stopping=stop)
    eval(task, model=...)

* ``start_task``: joins the session's items to the task's samples BY ID (every pool
  item must be a sample and every sample a pool item; ids that may be positions,
  whole numbers, join only where each item's text occurs in its sample's input; a
  refused join names the id and both texts), then takes the order from the session's
  design: the draws still unrecorded, then new draws (``budget`` in all, default the
  whole pool). The draws are committed to the session (a later eval, or a person,
  continues the same draw order). Without ``batch``, an adaptive design is refitted
  before these draws and not inside them: one eval is one batch. With ``batch=c``
  the eval draws ``c`` at a time and refits between batches on the completed scores
  (each batch is drawn from one fitted proposal, which keeps the estimate exactly
  unbiased); every sample then waits in ``schedule_sample`` until it is drawn or the
  draws end, so the eval must let all samples wait at once (``max_samples`` at least
  the number of samples; the model's ``max_connections`` bounds the runs at once).
* ``schedule_sample``: skips every sample not in this order, and every sample once the
  stop is reached (with ``batch``: once the draws have ended).
* ``complete_sample``: records the sample's score (the chosen scorer's value, mapped to
  the judgment level with that score) as the item's label, committed at once (the same
  guarantees as ``activetest import``). The estimate uses the longest completed
  prefix of the draw order; the stop is the first prefix length at which the anytime
  95% confidence sequence is at most ``width`` wide (checked at every length the
  prefix passes through), which is the stopping time a one-at-a-time run has, whatever
  order inspect completes the samples in (:mod:`activetest.stats.concurrent_stop`).
* ``complete_task``: returns the estimate at the stop (else at the longest completed
  prefix) with its fixed-budget interval and anytime confidence sequence, the design,
  the order and every recorded score: inspect writes it into the log's
  ``results.early_stopping.metadata``.

Samples run in dataset order, so give the task ``stop.dataset(samples)`` (the drawn
samples first, in draw order): otherwise the completed prefix grows slowly and more
samples run before the stop is seen. The dataset only looks ahead at the order (it is
built before inspect names the eval's model); the draws are committed at
``start_task``, once the eval's model is checked against the session's. inspect_ai is
imported only when a method needs it, so ``import activetest`` stays light.

Modules: :mod:`~activetest.inspect.manager` (the manager, :class:`StopSummary`),
:mod:`~activetest.inspect.intervals` (the estimate at every completed prefix),
:mod:`~activetest.inspect.log` (reading a log back into a session: ``init --from-inspect``).
This package's name is the standard library's ``inspect`` too; absolute imports keep
them apart.
"""

from __future__ import annotations

from activetest.inspect.intervals import PrefixIntervals, prefix_intervals
from activetest.inspect.log import LogRecord, LogSamples, read_log, read_logs, restore
from activetest.inspect.manager import MANAGER, ActiveStopping, StopSummary

__all__ = ["MANAGER", "ActiveStopping", "LogRecord", "LogSamples", "PrefixIntervals",
           "StopSummary", "prefix_intervals", "read_log", "read_logs", "restore"]
