"""``activetest label`` and ``serve``: label in the terminal or in the browser."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Annotated, Any, NoReturn

import typer

from activetest.cli._app import (
    NoProgress,
    Resolve,
    SessionArg,
    Timeout,
    _check_width,
    _draw,
    _escape,
    _open,
    _out,
    _print_waiting,
    _user_errors,
    app,
)


class _Keys:
    """Answers from stdin: single key presses on a terminal (C <= 9), else lines.

    On a terminal the whole labelling run is in cbreak mode (set with TCSANOW, so
    keys typed ahead are kept, not flushed), restored on exit.
    """

    def __init__(self, n_classes: int) -> None:
        self.single = sys.stdin.isatty() and n_classes <= 9
        self._saved: Any = None

    def __enter__(self) -> _Keys:
        if self.single:
            import termios
            import tty

            fd = sys.stdin.fileno()
            self._saved = termios.tcgetattr(fd)
            tty.setcbreak(fd, termios.TCSANOW)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._saved is not None:
            import termios

            termios.tcsetattr(sys.stdin.fileno(), termios.TCSADRAIN, self._saved)

    def read(self) -> str | None:
        """One answer (None at end of input)."""
        if self.single:
            ch = sys.stdin.read(1)
            while ch in ("\n", "\r", " ", "\t"):  # Enter after a key press: ignore
                ch = sys.stdin.read(1)
            if ch in ("", "\x04"):
                return None
            if ch == "\x03":
                raise KeyboardInterrupt
            _out.print(ch)
            return ch
        line = sys.stdin.readline()
        if line == "":
            return None
        return line.strip()


@app.command()
@_user_errors
def label(
    session: SessionArg,
    n: Annotated[int | None, typer.Option("--n", "-n", help="First draw this many more "
                                          "items if fewer are pending.",
                                          show_default=False)] = None,
    from_data: Annotated[bool, typer.Option("--from-data", help="Simulate: answer with the "
                                            "pool's labels as stored when the session "
                                            "was created (an edited pool file is not "
                                            "read again).")] = False,
    undo: Annotated[bool, typer.Option("--undo", help="Undo the last answer given here in "
                                       "an earlier run (again: the one before), so that "
                                       "the next run asks for it again.")] = False,
    busy_timeout: Timeout = 5.0,
    no_progress: NoProgress = False,
) -> None:
    """Label the selected, unlabelled items in the terminal.

    Keys: 1..C choose a class, u undoes the last answer, q quits; p prints the full
    prompt of an item read from a harness log (its in-context examples too; the
    screen shows the item's own input). Every answer is saved at once, so quitting
    (or a crash) loses nothing; a run ends after the last item, and `--undo` takes
    back its last answer.
    """
    if n is not None and n < 1:
        raise ValueError(f"--n must be a positive number of items to draw, got {n}")
    if undo and (n is not None or from_data):
        raise ValueError("--undo takes back the last answer and labels nothing: give it "
                         "without --n and --from-data")
    with _open(session, busy_timeout) as s:
        if undo:
            _undo_last(s, session)
            return
        pending = s.pending()
        if not s.store.writable and (pending or n is not None or s.pending_judgments()
                                     or s.n_items > s.store.n_acquired()):
            # a read-only session: nothing can be labelled or drawn (QA: it advised
            # `select`, which is refused there); told before any answer is typed
            s.store.check_writable()
        if not from_data:  # a harness item has no answer to judge: refused before drawing
            from activetest.session.harness import check_person_labelling

            check_person_labelling(s, None if n is not None else pending, "label")
        if n is not None and len(pending) < n:
            _draw(s, n - len(pending), not no_progress)  # a bar of the draws on a terminal
            pending = s.pending()
        if not pending and not (s.pending_judgments() and not from_data):
            left = s.n_items - s.store.n_acquired()
            if not left:  # QA: it said to draw 10 more of a pool with none left
                _out.print(f"nothing to label: every item of the pool is labelled; "
                           f"`activetest estimate {_escape(str(session))}` gives the pool's "
                           f"value")
                return
            k = min(10, left)
            _out.print("nothing to label: every selected item has a label. Draw more with "
                       f"`activetest select {_escape(str(session))} --n {k}` or "
                       f"`label --n {k}`.")
            return
        if from_data:
            done = s.label_from_data(source="data")
            # (QA: it said "the pool file's labels", but an edited file is not read again)
            _out.print(f"labelled {done} item(s) with the pool's labels stored when the "
                       f"session was created")
            return
        _label_loop(s, pending)


@app.command()
@_user_errors
def serve(
    session: SessionArg,
    host: Annotated[str, typer.Option(help="Address to listen on; another than 127.0.0.1 "
                                      "shares the page on a network.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port (0: a free one).")] = 0,
    n: Annotated[int | None, typer.Option("--n", "-n", help="Draw at most this many items in "
                                          "all (default: the pool).", show_default=False)] = None,
    batch: Annotated[int, typer.Option(help="Items drawn at once when none is open (the "
                                       "adaptive design refits between batches).")] = 10,
    overlap: Annotated[float, typer.Option(help="Share of drawn items asked of --reviews "
                                           "annotators (agreement).")] = 0.0,
    reviews: Annotated[int, typer.Option(help="Annotators per overlap item.")] = 2,
    resolve: Annotated[Resolve, typer.Option(help="Annotators who disagree: skip (unlabelled "
                                             "until adjudicated), latest or majority.")
                       ] = Resolve.skip,
    adjudicator: Annotated[list[str] | None, typer.Option(
        metavar="<name>", help="A name that may settle disagreements on the page (repeatable).",
        show_default=False)] = None,
    show_guess: Annotated[bool, typer.Option("--show-guess", help="Show the surrogate's guess "
                                             "(hidden by default: it can sway people).")] = False,
    target_width: Annotated[float | None, typer.Option(
        "--target-width", help="Say \"you may stop now\" when the anytime interval is this "
                               "narrow.", show_default=False)] = None,
    claim_seconds: Annotated[float, typer.Option(
        "--claim-seconds", help="How long an item given to one annotator stays theirs "
                                "before it may go to another (an answer after that is "
                                "still stored).")] = 600.0,
    silent_seconds: Annotated[float, typer.Option(
        "--silent-seconds", help="The items of a person whose page has not said it is open "
                                 "for this long (its tab crashed, the computer slept) go back "
                                 "to the others.")] = 180.0,
    token: Annotated[str | None, typer.Option(
        help="The secret in the page's address (default: a new random one each run); give "
             "the one a previous run printed, with its --port, to serve the same address "
             "again: a page still open there sends the answers it kept.",
        show_default=False)] = None,
    busy_timeout: Timeout = 5.0,
) -> None:
    """Label in the browser: a local page (keys 1..C, u undo, s skip, ? help) for one or
    more annotators; every answer is saved at once. See docs/labelling.md."""
    from activetest.web.server import serve as run_server

    _check_width(target_width)
    if not 0 <= port <= 65535:
        raise ValueError(f"--port must be 0..65535 (0: a free one), got {port}")
    run_server(session, host=host, port=port, budget=n, batch=batch, overlap=overlap,
               reviews=reviews, resolve=resolve.value, adjudicators=adjudicator or (),
               show_guess=show_guess, target_width=target_width, busy_timeout=busy_timeout,
               claim_seconds=claim_seconds, silent_seconds=silent_seconds, token=token,
               announce=lambda url: _announce(url, host))


def _announce(url: str, host: str) -> None:
    """The page's address; listening on every interface (``--host 0.0.0.0``), also the one
    to send to the people who label (QA: only ``http://127.0.0.1:...`` was printed, which
    reaches nobody else)."""
    _out.print(f"labelling page: {url}  (Ctrl-C stops it; every answer is saved at once)")
    if host in ("0.0.0.0", "::", ""):
        import socket
        from urllib.parse import urlsplit

        name = socket.gethostname()
        shared = urlsplit(url)._replace(netloc=f"{name}:{urlsplit(url).port}").geturl()
        _out.print(f"from other machines: {shared}  (this machine's name; its network "
                   f"address works too)")


def _label_loop(s: Any, pending: Sequence[Any]) -> None:
    """The selected items' labels; a graded comparison's answers blind, item by item."""
    keys = "  ".join(f"[bold]{k + 1}[/]={_escape(name)}" for k, name in
                     enumerate(s.task.class_names))
    help_line = f"{keys}   [bold]u[/]=undo  [bold]q[/]=quit"
    with _Keys(s.task.n_classes) as keys_in:
        if s.graded and s.compared_targets():
            _blind_summary(s, *_judge_blind(s, keys_in, help_line))
            return
        answered = _answer_all(s, pending, keys_in, help_line)
    _out.print(f"labelled {answered} item(s) in this run; {s.n_pending()} selected item(s) "
               f"still pending")
    _print_waiting(s.waiting())


def _blind_summary(s: Any, judged: int, items: int) -> None:
    """The end of a blind paired run, without a word on whose answer is whose.

    Counts of target labels and compared judgments apart, the pending items (those
    without a target label) and the note naming the first unlabelled draw each tell,
    after a run that stopped between an item's answers, which of them was the target's
    (QA: "labelled 0 item(s) and judged 1 compared answer(s)" after judging answer A
    alone). So: answers and items, whoever gave them (QA before: "labelled 3 item(s)"
    for 2 items and 1 compared answer)."""
    _out.print(f"judged {judged} answer(s) of {items} item(s) in this run")
    todo = _blind_todo(s)
    if not todo:
        _out.print("every drawn item's answers are judged")
        return
    left = sum(len(w) for _, w in todo)
    _out.print(f"{left} answer(s) of {len(todo)} drawn item(s) still to judge "
               f"(`activetest label` asks for them)")
    first = todo[0][0]
    open_steps = {a.step for a, _ in todo}  # later draws judged in full only: a part
    later = [a.item_id for a in s.acquisitions()  # judged one would tell whose is whose
             if a.step > first.step and a.step not in open_steps]
    if later:
        shown = ", ".join(repr(i) for i in later[:5])
        more = f" and {len(later) - 5} more" if len(later) > 5 else ""
        _out.print(f"[yellow]note:[/] item {_escape(repr(first.item_id))} (draw {first.step}) "
                   f"has an answer still to judge, so the judgments of {len(later)} later "
                   f"draw(s) ({_escape(shown)}{more}) cannot all be used until it is judged "
                   f"(LURE uses the first draws, in order)")


def _undo_last(s: Any, session: Any) -> None:
    """``label --undo``: revert the latest terminal answer not undone yet (QA: a key
    mistyped on the last item could not be taken back: the run had ended). A compared
    answer is named by its letter, as it was asked (blind)."""
    from activetest.session.compare_graded import answer_letter
    from activetest.session.labels import last_answer

    change = last_answer(s.store)
    if change is None:
        _out.print("nothing to undo: no answer given with `activetest label` is left "
                   "(answers from imports and the page are changed by importing again "
                   "with --overwrite, or on the page)")
        return
    s.undo(change, source="cli:undo")
    if s.graded and s.compared_targets():
        step = next(a.step for a in s.acquisitions() if a.index == change.index)
        what = (f"answer {answer_letter(s.session_config, step, change.role)} of item "
                f"{change.item_id!r}")
    else:
        # (QA: "item 'r0012''s label": a quote, then 's)
        what = (f"the label {s.task.class_names[int(change.new)]!r} of item "
                f"{change.item_id!r}")
    _out.print(f"undone: {_escape(what)}; `activetest label {_escape(str(session))}` asks "
               f"for it again")


def _key_to_class(s: Any, key: str, C: int) -> int | None:
    """The class (judgment level) a key names: 1..C, or a class name; None if neither."""
    if key.isdigit() and 1 <= int(key) <= C:
        return int(key) - 1
    try:
        return s.parse_label(key) if key and not key.isdigit() else None
    except ValueError:
        return None


def _read_answer(s: Any, keys_in: _Keys, help_line: str, full: str | None = None) -> int | str:
    """``"quit"`` (q or end of input), ``"undo"`` (u) or a class index; asks again after
    an unknown key, and after p, which prints the item's ``full`` prompt (if any)."""
    C = s.task.n_classes
    if full:
        help_line += "  [bold]p[/]=full prompt"
    while True:
        _out.print(help_line)
        _out.print("> ", end="")
        key = keys_in.read()
        if key is None or key.lower() in ("q", "quit"):
            return "quit"
        if key.lower() in ("u", "undo"):
            return "undo"
        if full and key.lower() in ("p", "prompt"):
            _out.rule("the model's full prompt")
            _out.print(_escape(full))
            _out.rule()
            continue
        y = _key_to_class(s, key, C)
        if y is not None:
            return y
        _out.print(f"unknown answer {_escape(key)!r}: press 1..{C}, u or q")


def _blind_todo(s: Any) -> list[tuple[Any, set[str]]]:
    """Drawn items, in draw order, with the roles (``target``, ``compare:<spec>``) whose
    answers still need a judgment: the target's label, the compared answers'
    (:meth:`Session.pending_judgments`: one identical to an answer judged, or to the
    target's, is not asked)."""
    from activetest.session.compare_graded import compare_role

    todo: dict[int, tuple[Any, set[str]]] = {}
    for a in s.pending():
        todo.setdefault(a.step, (a, set()))[1].add("target")
    for p in s.pending_judgments():
        todo.setdefault(p.acquisition.step, (p.acquisition, set()))[1].add(
            compare_role(p.spec))
    return [todo[k] for k in sorted(todo)]


def _judge_blind(s: Any, keys_in: _Keys, help_line: str) -> tuple[int, int]:
    """A paired comparison in the terminal, blind, as on the page: item by item in draw
    order, each item's answers in the page's seeded order (A, B, ...:
    :func:`activetest.session.compare_graded.shown_order`), no model named.

    The list is recomputed after each answer (judging one answer settles every
    identical answer of the same item; another run's labels drop out). Returns
    ``(answers judged, items they belong to)`` in this run (undone ones not counted).
    """
    from activetest.session.compare_graded import same_answer, shown_order
    from activetest.session.store import (
        SessionError,
        SessionLockedError,
        SessionReadOnlyError,
        SessionWriteError,
    )

    specs = list(s.compared_targets())
    roles = ("target", *(f"compare:{spec}" for spec in specs))
    seed = int(s.session_config.seed)
    done: list[tuple[str, str, Any]] = []  # (item id, what, change), for undo
    _out.print(f"blind paired judging: each item's {len(roles)} answers in a seeded random "
               f"order (the page's), without model names; identical answers are judged "
               f"once")
    while todo := _blind_todo(s):
        a, waiting = todo[0]
        order = shown_order(seed, a.step, roles)
        role = next(r for r in order if r in waiting)
        spec = None if role == "target" else role.split(":", 1)[1]
        texts = {r: (s.answers().get(a.index, ("",))[0] if r == "target" else
                     s.compared_answer(a.item_id, r.split(":", 1)[1])) for r in order}
        # answers of the same text are one answer, named by the first letter shown:
        # the target's is the one asked of them, and naming it by its own letter told
        # which (QA: "answer B of 2 (answer A is the same text ...)")
        group = [chr(ord("A") + k) for k, r in enumerate(order)
                 if r == role or same_answer(texts[r], texts[role])]
        letter, alike = group[0], group[1:]
        left = sum(len(w) for _, w in todo)
        _out.rule(f"item {_escape(a.item_id)} (draw {a.step}): answer {letter} of "
                  f"{len(order)}  ({left} to judge)")
        if alike:
            many = len(alike) > 1
            _out.print(f"(answer{'s' if many else ''} {' and '.join(alike)} "
                       f"{'are' if many else 'is'} the same text: this judgment settles "
                       f"{'them' if many else 'it'} too)")
        _out.print(_escape(s.display(a.item_id, target=spec)))
        y = _read_answer(s, keys_in, help_line, s.full_prompt(a.item_id))
        if y == "quit":
            break
        if y == "undo":
            if done:
                _, what, change = done.pop()
                s.undo(change, source="cli:undo")
                _out.print(f"undone: {what} is unjudged again")
            else:
                _out.print("nothing to undo")
            continue
        assert isinstance(y, int)
        try:
            if spec is None:
                change = s.add_label(a.item_id, y, source="cli", overwrite=False)
            else:
                change = s.judge(a.item_id, y, target=spec, source="cli")
        except (SessionLockedError, SessionReadOnlyError, SessionWriteError) as exc:
            _unsaved(exc, s, y, f"answer {letter} of item {a.item_id!r}")
        except SessionError as exc:  # incl. LabelError
            other = _labelled_meanwhile(exc, s, a, role)
            if other is None:
                raise
            _not_saved(s, a.item_id, y, other, f" (its answer {letter})")
            continue
        if change is not None:
            done.append((a.item_id, f"answer {letter} of item {_escape(a.item_id)}", change))
        _out.print(f"saved: {_escape(s.task.class_names[y])} for answer {letter}")
    return len(done), len({item for item, _, _ in done})


def _answer_all(s: Any, pending: Sequence[Any], keys_in: _Keys, help_line: str) -> int:
    from activetest.session.store import (
        SessionError,
        SessionLockedError,
        SessionReadOnlyError,
        SessionWriteError,
    )

    done: list[tuple[int, Any]] = []  # (position in pending, change) for undo
    i = 0
    answered = 0
    while i < len(pending):
        a = pending[i]
        other = s.labels().get(a.item_id)
        if other is not None:  # labelled meanwhile (another `label` run, an import)
            _out.print(f"item {_escape(a.item_id)} (draw {a.step}) was labelled "
                       f"{_escape(repr(s.task.class_names[other]))} meanwhile (another "
                       f"labelling run or an import); skipped")
            i += 1
            continue
        _out.rule(f"{i + 1}/{len(pending)}  item {_escape(a.item_id)}  (draw {a.step})")
        _out.print(_escape(s.display(a.item_id)))
        y = _read_answer(s, keys_in, help_line, s.full_prompt(a.item_id))
        if y == "quit":
            break
        if y == "undo":
            if done:
                pos, change = done.pop()
                s.undo(change, source="cli:undo")
                answered -= 1
                _out.print(f"undone: item {_escape(change.item_id)} is unlabelled again")
                i = pos
            else:
                _out.print("nothing to undo")
            continue
        assert isinstance(y, int)
        try:
            change = s.add_label(a.item_id, y, source="cli", overwrite=False)
        except (SessionLockedError, SessionReadOnlyError, SessionWriteError) as exc:
            _unsaved(exc, s, y, f"item {a.item_id!r}")
        except SessionError as exc:  # incl. LabelError
            other = _labelled_meanwhile(exc, s, a)
            if other is None:
                raise
            _not_saved(s, a.item_id, y, other)
            i += 1
            continue
        if change is not None:
            done.append((i, change))
            answered += 1
        _out.print(f"saved: {_escape(s.task.class_names[y])}")
        i += 1
    return answered


def _labelled_meanwhile(exc: Exception, s: Any, a: Any, role: str = "target") -> int | None:
    """The label (``role`` ``target``) or judgment (``compare:<spec>``) that another run
    or an import gave meanwhile to the drawn item ``a`` whose answer was just refused
    with ``exc``; None where there is none to say, and the caller raises ``exc`` itself.

    A refusal of the file itself (replaced or put back, damaged, not a session) is said
    as it is, without reading again: a file put back could hold a label for the item,
    and the refusal, with the sheet of the answers it no longer holds, was told as
    "labelled meanwhile" and the run went on. A read that fails (a damaged or replaced
    file, a lock) raised its own error in place of the first, or a traceback: it says
    nothing now, and ``exc`` is said."""
    import sqlite3

    from activetest.session.store import (
        NotASessionError,
        SchemaVersionError,
        SessionError,
        SessionFileReplacedError,
    )

    if isinstance(exc, (SessionFileReplacedError, NotASessionError, SchemaVersionError)):
        return None
    try:
        if role == "target":
            return s.labels().get(a.item_id)
        got = s.store.judgments(role).get(a.index)
    except (SessionError, sqlite3.Error, OSError):
        return None
    return None if got is None else int(got.label)


def _unsaved(exc: Exception, s: Any, y: int, what: str) -> NoReturn:
    """Refuse with the store's error and say that the answer just typed was not saved
    (QA: a locked session's error did not say so; nothing is lost, the item is asked
    again by the next run)."""
    from activetest.session.store import SessionError

    raise SessionError(f"{exc}; your answer {s.task.class_names[y]!r} for {what} was not "
                       f"saved (it is asked again by the next `activetest label`)") from None


def _not_saved(s: Any, item_id: str, y: int, other: int, whose: str = "") -> None:
    """Say that an answer was not saved: someone else labelled the item first."""
    names = s.task.class_names
    _out.print(f"[bold yellow]not saved:[/] item {_escape(item_id)}{_escape(whose)} was "
               f"labelled {_escape(repr(names[other]))} meanwhile (another labelling run or "
               f"an import), so your {_escape(repr(names[y]))} was not saved. To replace "
               f"that label, import a sheet with it: `activetest import "
               f"{_escape(str(s.path))} FILE --overwrite`")
