"""One measuring child of ``label_throughput.py --page``: the labelling page's answers on
a copy of a session file, with whichever activetest its ``PYTHONPATH`` holds first (this
checkout's ``src``, or a baseline's), so that two versions run on the same file in one
run.

    PYTHONPATH=SRC python benchmarks/_page_answers.py FILE N

Opens ``FILE`` (a paired session whose drawn items but ``N`` or more are answered),
asks the page's next items for a new annotator (``bob``, one held ahead, as the page
does), then times ``N`` answers, each :meth:`Annotators.answer_and_held` (the answer,
its settled label and judgment, the same-text check and the next items: one commit, as
the page's ``api/answer``), and an undo by an annotator with nothing to undo. Prints one
JSON line: CPU and wall seconds of the answers, and whether the undo moved the file's
write mark (a commit).
"""

from __future__ import annotations

import json
import sys
import time

from activetest.session.annotators import Annotators
from activetest.session.store_marks import read_mark
from activetest.session.workflow import Session


def main() -> None:
    """Run the answers of the module docstring; print their JSON line."""
    path, n = sys.argv[1], int(sys.argv[2])
    with Session.open(path) as s:
        a = Annotators(s, batch=10)
        held = a.held("bob", 1)
        w0, c0 = time.perf_counter(), time.process_time()
        for _ in range(n):
            it = held[0]
            _, held = a.answer_and_held("bob", it.item_id, [1] * len(it.answers), 1)
        wall, cpu = time.perf_counter() - w0, time.process_time() - c0
        mark = read_mark(s.store._conn)
        c1 = time.process_time()
        assert a.undo("nobody") is None
        undo_cpu = time.process_time() - c1
        moved = read_mark(s.store._conn) != mark
    print(json.dumps({"cpu": cpu, "wall": wall, "answers": n, "undo_cpu": undo_cpu,
                      "undo_moved_mark": moved}))


if __name__ == "__main__":
    main()
