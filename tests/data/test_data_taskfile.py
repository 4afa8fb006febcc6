"""Task files (TOML, YAML): loading, validation errors that name file and key, round trips."""

from __future__ import annotations

from pathlib import Path

import pytest

from activetest.data import Item, TaskFileError, dump_task, get_task, load_pool, load_task
from activetest.data.builtin import BUILTIN_TASKS
from activetest.data.taskfile import task_from_dict, task_to_dict

REVIEWS = '''
name = "reviews"
instruction = 'Classify the review as "bad" or "good".'
classes = ["bad", "good"]
class_names = ["negative", "positive"]
answer_key = "Verdict"

[templates]
item = "Review: {body} ({stars} stars)\\n{answer_key}:"
example = "Review: {body} ({stars} stars)\\n{answer_key}: {label}\\n\\n"

[columns]
body = "review_body"
stars = "rating"
label = "verdict"
id = "review_id"

[label_map]
"thumbs-up" = "good"
"thumbs-down" = "bad"
'''


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_toml_task_loads_and_renders(tmp_path: Path) -> None:
    task = load_task(write(tmp_path, "reviews.toml", REVIEWS))
    assert task.name == "reviews"
    assert task.instruction == 'Classify the review as "bad" or "good".\n'  # newline added
    assert task.classes == ("bad", "good") and task.class_names == ("negative", "positive")
    assert task.label_map == {"thumbs-up": 1, "thumbs-down": 0}
    item = Item(id="1", fields={"body": "Nice.", "stars": "5"})
    ex = Item(id="2", fields={"body": "Meh.", "stars": "2"}, label=0)
    assert task.prompt(item, [ex]) == ('Classify the review as "bad" or "good".\n'
                                       "Review: Meh. (2 stars)\nVerdict: bad\n\n"
                                       "Review: Nice. (5 stars)\nVerdict:")


def test_task_file_columns_drive_load_pool(tmp_path: Path) -> None:
    task = load_task(write(tmp_path, "reviews.toml", REVIEWS))
    pool_path = write(tmp_path, "reviews.csv",
                      "review_id,review_body,rating,verdict\n"
                      "r9,Great kettle,5,thumbs-up\n"
                      "r7,Broke at once,1,thumbs-down\n"
                      "r8,\"Fine, I guess\",3,\n")
    pool = load_pool(pool_path, task=task)
    assert pool.ids == ("r9", "r7", "r8")
    assert [it.label for it in pool] == [1, 0, None]
    assert pool[2].fields == {"body": "Fine, I guess", "stars": "3"}
    # The task can also be named by its file path.
    assert load_pool(pool_path, task=str(tmp_path / "reviews.toml")).ids == pool.ids


def test_yaml_task_file(tmp_path: Path) -> None:
    pytest.importorskip("yaml")
    path = write(tmp_path, "t.yaml", "name: qa\ninstruction: |\n  Yes or no?\n"
                                     "classes: ['no', 'yes']\nanswer_key: Label\n")
    task = load_task(path)
    assert task.instruction == "Yes or no?\n" and task.classes == ("no", "yes")
    assert task.prompt(Item("0", {"text": "hi"})) == "Yes or no?\nSentence: 'hi' \nLabel:"
    unquoted = write(tmp_path, "u.yml", "name: qa\ninstruction: Q\nclasses: [no, yes]\n")
    with pytest.raises(TaskFileError, match=r"u\.yml: key 'classes': .*quote them"):
        load_task(unquoted)
    with pytest.raises(TaskFileError, match=r"bad\.yaml: invalid YAML"):
        load_task(write(tmp_path, "bad.yaml", "name: [unclosed\n"))
    with pytest.raises(TaskFileError, match=r"list\.yaml: expected a table of task keys"):
        load_task(write(tmp_path, "list.yaml", "- a\n- b\n"))


def test_builtin_names_load(tmp_path: Path) -> None:
    assert load_task("sst2") is get_task("sst2")


@pytest.mark.parametrize("name", sorted(BUILTIN_TASKS))
def test_dump_task_round_trips(tmp_path: Path, name: str) -> None:
    task = get_task(name)
    again = load_task(write(tmp_path, f"{name}.toml", dump_task(task)))
    assert again == task
    assert again.columns == task.columns and again.label_map == task.label_map
    assert task_from_dict(task_to_dict(task)) == task


def test_dump_escapes_awkward_characters(tmp_path: Path) -> None:
    task = task_from_dict({"name": "w", "instruction": 'Tab\there, quote " back\\slash \x7f é 🙂\n',
                           "classes": ["x y", "z"], "label_map": {"a.b": "z", "": "x y"}})
    assert load_task(write(tmp_path, "w.toml", dump_task(task))) == task


@pytest.mark.parametrize(("text", "key"), [
    ('instruction = "Q"\nclasses = ["a", "b"]\n', "name"),
    ('name = "t"\nclasses = ["a", "b"]\n', "instruction"),
    ('name = "t"\ninstruction = "Q"\n', "classes"),
    ('name = "t"\ninstruction = "Q"\nclasses = "ab"\n', "classes"),
    ('name = "t"\ninstruction = "Q"\nclasses = ["a", ""]\n', "classes"),
    ('name = "t"\ninstruction = 3\nclasses = ["a", "b"]\n', "instruction"),
    ('name = "t"\ninstruction = "Q"\nclasses = ["a", "b"]\nlabels = ["a"]\n', "labels"),
    ('name = "t"\ninstruction = "Q"\nclasses = ["a", "b"]\n[templates]\nitem = "{text} {label}"\n',
     "templates.item"),
    ('name = "t"\ninstruction = "Q"\nclasses = ["a", "b"]\n[templates]\nexample = "{text}"\n',
     "templates.example"),
    ('name = "t"\ninstruction = "Q"\nclasses = ["a", "b"]\n[templates]\nitem = "{text"\n',
     "templates.item"),
    ('name = "t"\ninstruction = "Q"\nclasses = ["a", "b"]\n[templates]\nitem = "{} x"\n',
     "templates.item"),
    ('name = "t"\ninstruction = "Q"\nclasses = ["a", "b"]\n[templates]\nitem = "{text:d}"\n',
     "templates.item"),
    ('name = "t"\ninstruction = "Q"\nclasses = ["a", "b"]\n[templates]\nprompt = "x"\n',
     "templates.prompt"),
    ('name = "t"\ninstruction = "Q"\nclasses = ["a", "b"]\n[columns]\ntxt = "body"\n',
     "columns.txt"),
    ('name = "t"\ninstruction = "Q"\nclasses = ["a", "b"]\n[label_map]\npos = "good"\n',
     "label_map.pos"),
    ('name = "t"\ninstruction = "Q"\nclasses = ["a", "b"]\n[label_map]\npos = 2\n',
     "label_map.pos"),
    ('name = "t"\ninstruction = "Q"\nclasses = ["a", "b"]\n[label_map]\npos = 0\n',
     "label_map.pos"),  # a number, but no label_base says what it counts from
    ('name = "t"\ninstruction = "Q"\nclasses = ["a", "b"]\nlabel_base = 2\n', "label_base"),
    ('name = "t"\ninstruction = "Q"\nclasses = ["a", "b"]\nlabel_base = 1\n[label_map]\n'
     'pos = 0\n', "label_map.pos"),
])
def test_bad_task_files_name_file_and_key(tmp_path: Path, text: str, key: str) -> None:
    path = write(tmp_path, "bad.toml", text)
    with pytest.raises(TaskFileError, match=rf"bad\.toml: key '{key}'"):
        load_task(path)


def test_other_task_file_errors(tmp_path: Path) -> None:
    with pytest.raises(TaskFileError, match=r"bad\.toml: invalid TOML"):
        load_task(write(tmp_path, "bad.toml", "name = \n"))
    with pytest.raises(TaskFileError, match=r"dup\.toml: .*distinct"):
        load_task(write(tmp_path, "dup.toml", 'name="t"\ninstruction="Q"\nclasses=["a","a"]\n'))
    with pytest.raises(TaskFileError, match=r"names\.toml: .*class_names has 1"):
        load_task(write(tmp_path, "names.toml",
                        'name="t"\ninstruction="Q"\nclasses=["a","b"]\nclass_names=["x"]\n'))
    (tmp_path / "latin.toml").write_bytes(b'name = "caf\xe9"\n')
    with pytest.raises(TaskFileError, match=r"latin\.toml, line 1: not valid UTF-8"):
        load_task(tmp_path / "latin.toml")
    with pytest.raises(FileNotFoundError, match=r"missing\.toml"):
        load_task(tmp_path / "missing.toml")
    with pytest.raises(TaskFileError, match=r"task files end in"):
        load_task(write(tmp_path, "task.txt", "name = 'x'\n"))
    with pytest.raises(ValueError, match="unknown task 'nonexistent'"):
        load_task("nonexistent")


def test_label_base_and_numeric_label_map(tmp_path: Path) -> None:
    text = ('name = "t"\ninstruction = "Q"\nclasses = ["a", "b"]\nlabel_base = 1\n'
            '[label_map]\npos = 2\nneg = "a"\n')
    task = load_task(write(tmp_path, "t.toml", text))
    assert task.label_base == 1 and task.label_map == {"pos": 1, "neg": 0}
    again = load_task(write(tmp_path, "again.toml", dump_task(task)))
    assert again.label_base == 1 and again.label_map == task.label_map
    assert task_to_dict(task)["label_map"] == {"pos": "b", "neg": "a"}  # words: unambiguous
