"""activetest._quiet: writes given while a silenced stretch is open (another thread's
llama.cpp load) are kept and made, in order, when it ends; a stretch never starts in
the middle of a write. Real threads; the writes are calls that append to a list."""

from __future__ import annotations

import threading

from activetest._quiet import emit, silenced


def test_writes_inside_a_stretch_come_after_it_in_order() -> None:
    out: list[str] = []
    emit(lambda: out.append("before"))
    with silenced():
        emit(lambda: out.append("a"))
        other = threading.Thread(target=emit, args=(lambda: out.append("b"),))
        other.start()
        other.join()
        with silenced():  # a stretch inside another: the writes wait for the outer one
            emit(lambda: out.append("c"))
        assert out == ["before"]
    assert out == ["before", "a", "b", "c"]
    emit(lambda: out.append("after"))
    assert out == ["before", "a", "b", "c", "after"]


def test_a_stretch_starts_once_the_write_in_flight_is_done() -> None:
    out: list[str] = []
    writing, finish, entered = threading.Event(), threading.Event(), threading.Event()

    def slow_write() -> None:
        writing.set()
        finish.wait(60)
        out.append("written")

    def load() -> None:
        with silenced():
            out.append("stretch")
            entered.set()

    writer = threading.Thread(target=emit, args=(slow_write,))
    writer.start()
    assert writing.wait(60)
    loader = threading.Thread(target=load)
    loader.start()
    assert not entered.wait(0.2)  # waits for the write (a late start only weakens this)
    late = threading.Thread(target=emit, args=(lambda: out.append("late"),))
    late.start()
    late.join(60)  # a write that comes meanwhile does not wait: it is kept
    assert not late.is_alive()
    finish.set()
    writer.join(60)
    loader.join(60)
    assert out == ["written", "stretch", "late"]


def test_a_kept_write_to_a_closed_stream_is_dropped() -> None:
    out: list[str] = []

    def closed() -> None:
        raise BrokenPipeError

    with silenced():
        emit(closed)
        emit(lambda: out.append("next"))
    assert out == ["next"]
