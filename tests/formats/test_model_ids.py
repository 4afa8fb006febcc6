"""Model identity across one command's files: local paths of one last name told apart by
their shortest distinguishing suffix, never by a whole path."""

from __future__ import annotations

from activetest.formats.model_ids import distinct_names, local_parts, names_the_path, variant_name


def test_two_checkpoints_of_one_last_name_get_their_shortest_distinguishing_suffix() -> None:
    got = distinct_names(["/a/checkpoint-1000", "/b/checkpoint-1000", "/x/y/other",
                          "org/model", None, ""])
    assert got == {"/a/checkpoint-1000": "a/checkpoint-1000",
                   "/b/checkpoint-1000": "b/checkpoint-1000", "/x/y/other": "other",
                   "org/model": "org/model"}
    deep = distinct_names(["/home/me/runs/a/ckpt", "/home/you/runs/a/ckpt", "/srv/b/ckpt"])
    assert deep == {"/home/me/runs/a/ckpt": "me/runs/a/ckpt",
                    "/home/you/runs/a/ckpt": "you/runs/a/ckpt", "/srv/b/ckpt": "b/ckpt"}


def test_one_path_on_two_machines_or_mounted_elsewhere_is_one_model() -> None:
    got = distinct_names(["/runs/ckpt", "/data/runs/ckpt", "file:///runs/ckpt",
                          "C:\\runs\\ckpt", "/other/ckpt"])
    assert set(got.values()) == {"runs/ckpt", "other/ckpt"}
    assert got["/data/runs/ckpt"] == got["C:\\runs\\ckpt"] == "runs/ckpt"


def test_a_name_names_a_path_by_its_last_components() -> None:
    assert local_parts("~/models/./x") == ("models", "x")
    assert local_parts("org/model") is None
    assert names_the_path("a/checkpoint-1000", "/runs/a/checkpoint-1000")
    assert not names_the_path("b/checkpoint-1000", "/runs/a/checkpoint-1000")
    assert not names_the_path("a/checkpoint-1000", "org/a/checkpoint-1000")
    assert variant_name("smollm2", {"gguf_file": "A.gguf"}) == "smollm2 (gguf_file=A.gguf)"
    assert variant_name("smollm2", {}) == "smollm2"
    assert variant_name("smollm2 (gguf_file=A.gguf)", {"gguf_file": "A.gguf"}) == \
        "smollm2 (gguf_file=A.gguf)"  # an id activetest wrote, read back
