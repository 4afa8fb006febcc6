"""lm-evaluation-harness's own command line, with a local deterministic model registered.

``python tests/lmeval_cli.py run --model at-hash --model_args docs=DOCS.json --tasks ...
--include_path TASKS ...`` is ``lm_eval run ...`` (lm-eval's ``HarnessCLI``: argument
parsing, ``--samples``, ``--log_samples``, the output writers) with one more model,
``at-hash``: :class:`HashLM` of :mod:`tests.lmeval_harness`'s rule (the right label
word of an ``at_sst2`` document gets about 1 nat more, plus noise hashed from the
request; for other tasks the choice is hashed), so full and partial runs give the
same per-item results, offline, without weights. ``skill=X`` shifts how often it is
right (a second, "cheaper" model for the pool run).

Several runs in one process: ``python tests/lmeval_cli.py run ARGS... --- run ARGS...``
runs lm-eval's command line once per part, one after another (each part is a whole
``lm_eval`` command line, parsed and executed by lm-eval as a separate call would be);
the tests' history runs save an import of lm-eval and torch (about 4 CPU-s) per run.

Every task a test runs is one of the ``--include_path`` folder's; lm-eval's library of
built-in tasks (about 14,000 YAML files, which its ``TaskManager`` reads on every run
to index them: most of a run's time, about 5 CPU-s of 9) is not indexed here
(``TaskManager(include_defaults=False)``, lm-eval's own switch, which its command line
does not offer). Nothing a run writes changes.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys

#: Between two runs' command lines (no ``lm_eval`` argument is spelled so).
SEP = "---"


def _only_included_tasks() -> None:
    """lm-eval's ``TaskManager`` with ``include_defaults=False`` unless told otherwise
    (module docstring): only the ``--include_path`` folder's tasks are indexed."""
    from lm_eval.tasks import TaskManager

    init = TaskManager.__init__

    def only_included(self, *args: object, include_defaults: bool = False,
                      **kwargs: object) -> None:
        init(self, *args, include_defaults=include_defaults, **kwargs)

    TaskManager.__init__ = only_included


def _register() -> None:
    from lm_eval.api.model import LM
    from lm_eval.api.registry import register_model

    @register_model("at-hash")
    class HashLM(LM):
        """Deterministic loglikelihoods (module docstring)."""

        def __init__(self, docs: str = "", skill: float = 1.0, salt: str = "", **_: object):
            super().__init__()
            with open(docs, encoding="utf-8") as f:
                self.truth = {d["sentence"]: ("negative", "positive")[d["label"]]
                              for d in json.load(f)}
            self.skill = float(skill)
            self.salt = salt

        @classmethod
        def create_from_arg_string(cls, arg_string: str, additional_config: dict | None = None):
            kw = dict(p.split("=", 1) for p in arg_string.split(",") if p)
            return cls(**kw)

        def loglikelihood(self, requests):
            out = []
            for req in requests:
                context, continuation = req.args
                h = int(hashlib.sha256(f"{self.salt}{context}|{continuation}".encode())
                        .hexdigest()[:8], 16)
                ll = -0.5 - (h % 1000) / 400.0
                last = context.rsplit("Review: ", 1)[-1].removesuffix("\nSentiment:")
                if self.truth.get(last) == continuation.strip():
                    ll += self.skill
                out.append((ll, False))
            return out

        def loglikelihood_rolling(self, requests):
            raise NotImplementedError

        def generate_until(self, requests):
            return [" positive" for _ in requests]


if __name__ == "__main__":
    os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    _register()
    _only_included_tasks()
    from lm_eval.__main__ import cli_evaluate

    args = sys.argv[1:]
    while args:
        part = args[:args.index(SEP)] if SEP in args else args
        args = args[len(part) + 1:]
        sys.argv = ["lm_eval", *part]
        cli_evaluate()
