"""The files a model or answers spec names, as a session file names them: never by a
local path.

A session file is shared; the folder a prediction table or an answer log was read from
is the user's own (``table:/home/me/runs/target.csv``,
``answers:/home/me/runs/samples.jsonl?filter=none``). New sessions store such a spec
with the file named by its last component (where two files of a session share it, by
their shortest distinguishing suffix of path components: ``table:a/preds.csv`` and
``table:b/preds.csv``), its options kept (``table:target.csv?kind=probs``); ``init``
says each spec's file with its path and SHA-256 (:func:`said`). The spec names the
model's roles (``compare:<spec>``), so it is the one string every later command uses.
So too a table's bare path (``/home/me/t.csv``: ``table:t.csv``), a graded judge's
table (``judge:table:j.csv``, read at ``init`` only), and a table first compared by
``estimate --compare`` (:func:`new_name`: a name no other stored table has; its digest
joins ``model_files`` then). lm-eval folders and globs keep their paths (README).

An ``answers:`` file is read at ``init`` only (its answers are stored; its name and
digest are kept in the config's ``answer_files``). A ``table:`` file may be read again
by later commands (a PE target, or a compared model, scored on the items as they are
labelled), so the config keeps each renamed table spec's SHA-256 (``model_files``,
spec -> digest) and a later command finds the file (:func:`locate`):

1. on the machine that created the session, where it was: ``init`` records the file's
   path by its digest in this machine's activetest cache folder
   (``$ACTIVETEST_CACHE/files.json``; never in the session file); a file there whose
   SHA-256 is no longer the stored one (edited since) is used only where no file of the
   stored digest is found (2.) and stored scores of its role can check it (the
   changed-model check scores them again); with none it is refused, naming the file and
   both digests (:func:`edited_refusal`; QA: a PE target's table swapped before its
   first rows were read gave another model's estimate, and stored its scores);
2. beside the session file (the session copied to another folder or machine with its
   tables), or in a folder named by ``$ACTIVETEST_FILES`` (folders separated by
   ``os.pathsep``), under its stored name or its last component; a file found there
   is used only where its SHA-256 is the stored one (a join never guesses);
3. else the command is refused, naming the file, its digest and these two ways to
   point to it (in Python, also ``Session.open(..., scorers={spec: TableScorer(path)})``).

A compared table given again (:func:`known_spec`) is its stored spec where it is the
same file: the same name and digest, or the very file recorded in step 1, edited since
(its earlier rows must then score as before: the changed-model check). A stored spec
given as stored where the folder the command runs in holds another file of that name is
refused, naming both files and digests (the stored one is never used in its place
silently); given by its path, such a file is another model, under a longer name.

Sessions made before (no ``model_files``) keep their specs, paths and all, and are read
as they were; nothing computed changes (the files' values decide every number, as before).
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from activetest.session.source_names import distinguishing_names, file_sha256

__all__ = ["ABSENT_RECORDED", "FILES_ENV", "SpecFile", "absent_note", "absent_recorded_path",
           "edited_refusal", "known_spec", "local_names", "locate", "new_name",
           "publish_provenance", "recorded_here",
           "remember", "rename", "renamed_files", "said", "scorer_names", "spec_file",
           "with_model_files"]

#: The environment variable naming folders where a session's files may be found.
FILES_ENV = "ACTIVETEST_FILES"
#: This machine's record of where each file was (digest -> paths), in the cache folder.
_INDEX = "files.json"


@dataclass(frozen=True)
class SpecFile:
    """A spec that names one regular file.

    Attributes:
        head: what comes before the path (``table:``, ``answers:``,
            ``calibrated:table:``).
        path: the file as read on this machine (said at init, never stored).
        query: the spec's options after the path, with their ``?`` (or empty).
    """

    head: str
    path: str
    query: str

    def named(self, name: str) -> str:
        """The spec with its file named ``name``."""
        return f"{self.head}{name}{self.query}"


def spec_file(spec: str) -> SpecFile | None:
    """The file ``spec`` names where it is a ``table:`` or ``answers:`` spec of one regular
    file, or a table file's bare path (read as ``table:``) (a folder or a glob of lm-eval
    samples files: None, they keep their paths), else None."""
    from activetest.models.registry import CALIBRATED

    prefix = ""
    if spec.startswith(CALIBRATED):
        prefix, spec = CALIBRATED, spec[len(CALIBRATED):]
    head, sep, rest = spec.partition(":")
    if head not in ("answers", "table") and _bare_table(spec):  # a table given by its path
        return SpecFile(f"{prefix}table:", str(Path(spec).expanduser()), "")
    if not sep or not rest:
        return None
    if head == "answers":
        path, q, query = rest.partition("?")
        query = q + query
    elif head == "table":
        from activetest.models.table import parse_table_spec

        try:
            path = parse_table_spec(rest)[0]
        except ValueError:
            return None
        query = rest[len(path):]
    else:
        return None
    if not Path(path).expanduser().is_file():
        return None
    return SpecFile(f"{prefix}{head}:", str(Path(path).expanduser()), query)


def _bare_table(spec: str) -> bool:
    """Whether ``spec`` is a prediction table's path given without ``table:`` (the
    registry reads it as one)."""
    from activetest.models.registry import parse_spec

    if not Path(spec).expanduser().is_file():
        return False
    try:
        return parse_spec(spec)[0] == "table"
    except (ValueError, OSError):
        return False


def rename(specs: Sequence[str]) -> dict[str, str]:
    """Each of ``specs`` (as normalised: absolute paths) that names one regular file ->
    the spec as stored (module docstring); two spellings of one file get one name."""
    files = {s: f for s in dict.fromkeys(specs) if (f := spec_file(s)) is not None}
    real = {s: os.path.realpath(f.path) for s, f in files.items()}
    names = dict(zip(dict.fromkeys(real.values()),
                     distinguishing_names(list(dict.fromkeys(real.values()))), strict=True))
    return {s: f.named(names[real[s]]) for s, f in files.items()}


def renamed_files(raw_specs: Mapping[str, str]) -> dict[str, SpecFile]:
    """Stored spec -> its file as read here, for each stored spec (``raw_specs``: stored
    -> as given) that names its file by name (:func:`rename`), not as given."""
    out = {}
    for spec, raw in raw_specs.items():
        f = spec_file(raw) if isinstance(raw, str) else None
        if f is None:
            continue
        full = os.path.abspath(f.path)
        if _stored_file(spec).path != full:  # (a spec stored with its path: as before)
            out[spec] = SpecFile(f.head, full, f.query)
    return out


def local_names(raw_specs: Mapping[str, str]) -> dict[str, str]:
    """Each renamed spec's file as read here -> its stored name (for
    :func:`publish_provenance`)."""
    out = {}
    for spec, f in renamed_files(raw_specs).items():
        name = _stored_file(spec).path
        out[f.path] = name
        given = spec_file(raw_specs[spec])  # as given (a relative path), where it differs
        if given is not None:
            out[given.path] = name
    return out


def with_model_files(config: Any, raw_specs: Mapping[str, str]) -> Any:
    """``config`` (a new classification session's) with ``model_files``: each of its
    ``table:`` specs stored renamed (surrogate, target, compared) -> the SHA-256 of its
    file as read now (``raw_specs``: stored spec -> as given)."""
    files = renamed_files(raw_specs)
    digests = {spec: file_sha256(files[spec].path)
               for spec in (config.surrogate, config.target, *(config.compare or ()))
               if spec in files and files[spec].head.endswith("table:")}
    return dataclasses.replace(config, model_files=digests)


def said(raw_specs: Mapping[str, str]) -> tuple[str, ...]:
    """The lines ``init`` says of the renamed specs (``raw_specs``: stored -> as given):
    each file's path and SHA-256, which the session file does not keep with it."""
    return tuple(f"{spec}: {os.path.abspath(f.path)} (sha256 {file_sha256(f.path)}; the "
                 f"session file keeps "
                 f"its name, not its path)" for spec, f in renamed_files(raw_specs).items())


def remember(raw_specs: Mapping[str, str]) -> None:
    """Record on this machine where each renamed spec's file is, by its SHA-256 (the
    cache folder's ``files.json``); a cache folder that cannot be written is passed over
    (the file is then found beside the session file or by ``$ACTIVETEST_FILES``)."""
    from activetest._tmpfiles import tmp_prefix

    files = [f for f in renamed_files(raw_specs).values() if f.head.endswith("table:")]
    if not files:
        return
    index = _read_index()
    for f in files:
        full = os.path.realpath(f.path)
        digest = file_sha256(full)
        if digest:
            index[digest] = [full, *(q for q in index.get(digest, []) if q != full)][:8]
    target = _index_path()
    with contextlib.suppress(OSError):
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_name(f"{tmp_prefix(target.name)}index.tmp")
        tmp.write_text(json.dumps(index, indent=1), encoding="utf-8")
        os.replace(tmp, target)


def known_spec(given: str, known: Mapping[str, str]) -> str | None:
    """The session's stored spec ``given`` is (``known``: its ``model_files``): itself
    where stored so, or the stored spec whose file it names by a path (the same options,
    a name the path ends with, and the same SHA-256, or the very file this machine
    recorded for it, edited since: :func:`recorded_here`); None: no stored file spec.

    A stored file edited since is that spec: the scores of its earlier rows then decide
    (:func:`activetest.session.scoring.check_same_model` scores them again and refuses a
    model that scores them otherwise), as for the session's own target or compared file
    (QA: given by its path it became another model under a longer name, unchecked).

    Raises:
        SessionError: ``given`` is a stored spec as stored whose name is, here, a file of
            other content than the stored one (not the file recorded for it): naming both
            files and digests (QA: the stored file was used without a word).
    """
    if given in known:
        _check_same_named(given, known[given])
        return given
    f = spec_file(given)
    if f is None:
        return None
    digest = file_sha256(f.path)
    parts = Path(os.path.realpath(f.path)).parts
    for k in range(1, len(parts)):
        spec = f.named("/".join(parts[-k:]))
        if spec in known and (known[spec] == digest or recorded_here(f.path, known[spec])):
            return spec  # (a stored name with other content: a longer suffix may be it)
    return None


def recorded_here(path: str, sha256: str) -> bool:
    """Whether ``path`` is where this machine recorded the file of digest ``sha256``
    (:func:`remember`): the stored file itself, whatever it holds now."""
    return os.path.realpath(path) in _read_index().get(sha256, [])


def _check_same_named(spec: str, sha256: str) -> None:
    """Refuse a stored ``spec`` given as stored where its name is, here, a file of other
    content than the stored one (``sha256``), unless that file is the one recorded for it
    (edited since: the changed-model check decides, :func:`known_spec`)."""
    f = spec_file(spec)
    if f is None:
        return
    here = file_sha256(f.path)
    if here == sha256 or recorded_here(f.path, sha256):
        return
    from activetest.session.store import SessionError

    was = [p for p in _read_index().get(sha256, []) if Path(p).is_file()]
    stored = (f"the session's file of that name is {was[0]} (sha256 {sha256})" if was else
              f"the session's file of that name has sha256 {sha256} (found as stored: "
              f"beside the session file or by {FILES_ENV})")
    raise SessionError(
        f"{spec!r} names {os.path.abspath(f.path)} here (sha256 {here}), but {stored}: "
        f"another file of the same name. Nothing was used: to compare the local file as "
        f"another model, give its path ({f.named(os.path.abspath(f.path))}); for the "
        f"session's, run from a folder without that name")


def new_name(given: str, known: Mapping[str, str]) -> tuple[str, str] | None:
    """A ``table:`` spec ``given`` (as normalised) that a session compares first after
    ``init`` (``estimate --compare``), stored as ``init`` stores one: ``(its spec with the
    file named by the shortest suffix of its path that no other stored file spec of
    ``known`` (the session's ``model_files``) has, the file's SHA-256)``; None: not a
    ``table:`` spec of one regular file, or no suffix is free (stored with its path)."""
    f = spec_file(given)
    if f is None or not f.head.endswith("table:"):
        return None
    digest = file_sha256(f.path)
    parts = Path(os.path.realpath(f.path)).parts
    for k in range(1, len(parts)):
        spec = f.named("/".join(parts[-k:]))
        if known.get(spec, digest) == digest:
            return spec, digest
    return None


def scorer_names(scorer: Any, spec: str) -> dict[str, str]:
    """A table scorer object's files (as read here) -> their names, for the provenance of
    the rows it scores for the stored ``spec`` (a spec named by name: its stored name;
    ``object:...``: each file's last component); {} for any other scorer."""
    from activetest.models.table import TableScorer

    if not isinstance(scorer, TableScorer):  # (a model's own path is kept: README)
        return {}
    path = scorer.path
    files = [os.fspath(p) for p in scorer.files]
    stored = None if spec.startswith("object:") else _stored_file(spec).path
    out = {os.fspath(path): stored or Path(path).name}
    for p in files:
        out.setdefault(p, stored if stored and len(files) == 1 else Path(p).name)
    return out


def _index_path() -> Path:
    from activetest._tmpfiles import default_cache_dir

    return default_cache_dir() / _INDEX


def _read_index() -> dict[str, list[str]]:
    try:
        data = json.loads(_index_path().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    return {str(k): [str(p) for p in v] for k, v in data.items() if isinstance(v, list)}


def _candidates(name: str, session: Path) -> list[Path]:
    """Where a file named ``name`` may be: beside the session file, then in each folder
    of ``$ACTIVETEST_FILES``; by its stored name, then its last component."""
    folders = [session.parent]
    folders += [Path(d).expanduser() for d in os.environ.get(FILES_ENV, "").split(os.pathsep)
                if d.strip()]
    last = Path(name).name
    out = []
    for d in folders:
        for n in dict.fromkeys((name, last)):
            out.append(d / n)
    return list(dict.fromkeys(out))


def locate(spec: str, sha256: str, session: str | os.PathLike[str], role: str, *,
           checkable: bool = False) -> str:
    """The spec to build ``role``'s model from on this machine: the stored ``spec`` with
    its file's path (module docstring, in that order): a file of the stored digest where
    this machine recorded it, beside the session file or in ``$ACTIVETEST_FILES``; else
    the file recorded for it, edited since, only where ``checkable`` (the caller checks
    it against stored scores of ``role`` and refuses it where there are none:
    :func:`activetest.session.scoring.check_same_model`, :func:`edited_refusal`).

    Raises:
        SessionError: no file of that digest is found: naming the file, its SHA-256,
            the places looked in (a file of that name with other content, with its
            digest) and how to point to it; or only the recorded file, edited, and not
            ``checkable`` (:func:`edited_refusal`).
    """
    from activetest.session.store import SessionError

    f = _stored_file(spec)
    edited = None
    for p in _read_index().get(sha256, []):
        if Path(p).is_file():  # where it was made
            if file_sha256(p) == sha256:
                return f.named(p)
            edited = edited or p
    session = Path(session).resolve()
    looked, other = [], []
    for c in _candidates(f.path, session):
        looked.append(str(c))
        if c.is_file():
            digest = file_sha256(str(c))
            if digest == sha256:
                return f.named(str(c.resolve()))
            other.append(f"{c} has other content (sha256 {digest})")
    if edited is not None:  # the very file, edited since: only where it can be checked
        if checkable:
            return f.named(edited)
        raise edited_refusal(spec, sha256, edited, session, role)
    raise SessionError(
        f"the {role}'s file {f.path!r} (sha256 {sha256}) is not on this machine: looked "
        f"in {', '.join(looked)}" + (f"; {'; '.join(other)}" if other else "")
        + f". Put the file beside the session file ({session.parent}), or name the folder "
        f"that holds it: {FILES_ENV}=/path/to/folder (in Python: Session.open(..., "
        f"scorers={{{spec!r}: TableScorer(path)}}))")


def edited_refusal(spec: str, sha256: str, path: str, session: str | os.PathLike[str],
                   role: str, *, read_for: str | None = None) -> Exception:
    """The refusal of ``role``'s file ``path`` (the stored ``spec``'s, edited since: its
    SHA-256 is no longer ``sha256``) where no stored score of ``role`` can check that it
    is the same model: naming the file, both digests and how to give the original.
    ``read_for``: what the file would have been read for, where not its scores (an Every
    Eval Ever record's model name), said in place of "no score is stored yet".

    QA: a PE target's table overwritten with its class columns swapped (same ids) was
    read for the labelled items as if it were the session's, and its scores stored: the
    estimate was another model's, and restoring the file did not undo it.
    """
    from activetest.session.store import SessionError

    name = _stored_file(spec).path
    folder = Path(session).resolve().parent
    why = (f"no {role} score is stored yet to check the edited file against"
           if read_for is None else f"{read_for}, which no stored score can check")
    return SessionError(
        f"the {role}'s file {name!r} at {path} has changed since the session recorded it "
        f"(sha256 {file_sha256(path)} now, {sha256} when recorded), and {why}: it may be "
        f"another model's predictions. Nothing was read from it. Restore the file (sha256 "
        f"{sha256}), or put the original beside the session file ({folder}) or name the "
        f"folder that holds it: {FILES_ENV}=/path/to/folder; for the edited file as a new "
        f"model, start a new session")


def _stored_file(spec: str) -> SpecFile:
    """The stored spec's parts (its name in place of the path), checked nowhere on disk."""
    from activetest.models.registry import CALIBRATED

    prefix = CALIBRATED if spec.startswith(CALIBRATED) else ""
    head, _, rest = spec[len(prefix):].partition(":")
    name, q, query = rest.partition("?")
    return SpecFile(f"{prefix}{head}:", name, q + query)


def absent_recorded_path(spec: str) -> str | None:
    """The local path a stored model spec names where nothing is there on this machine
    (else None), for ``status`` to say so beside the spec.

    A session made before specs were stored by name (no ``model_files``) keeps the
    absolute path ``init`` was given (``table:/home/me/runs/target.csv``), as do an
    lm-eval folder or glob in any session; on another machine that path may name nothing,
    and printed bare it reads as a file in use. Only an absolute path is a recorded local
    path (a stored name, ``table:target.csv``, is not); a glob pattern
    (:func:`activetest.formats.globs.is_pattern`) is absent where it matches nothing.

    Args:
        spec: a stored ``table:``, ``answers:`` (``calibrated:`` too) spec, or a table's
            bare path; any other spec (a bundled model, ``pool``, ``lm-eval``) gives None.
    """
    import glob

    from activetest.formats.globs import is_pattern
    from activetest.models.registry import CALIBRATED

    bare = spec[len(CALIBRATED):] if spec.startswith(CALIBRATED) else spec
    if bare.partition(":")[0] in ("table", "answers"):
        path = _stored_file(spec).path
    elif os.path.isabs(bare):
        path = bare
    else:
        return None
    if not os.path.isabs(path):
        return None
    if is_pattern(path):
        return None if glob.glob(path, recursive=True) else path
    return None if os.path.lexists(path) else path


#: What ``status`` and the report say beside a stored spec whose recorded local path
#: names nothing on this machine (:func:`absent_recorded_path`).
ABSENT_RECORDED = "the path recorded at init; nothing is there on this machine"


def absent_note(spec: str, absent: Collection[str]) -> str:
    """``spec`` as ``status`` and the report print it: as stored, followed by
    ``(the path recorded at init; nothing is there on this machine)`` where it is one of
    ``absent`` (the specs :func:`absent_recorded_path` finds absent; QA: an old session's
    ``table:/tmp/oldout/target.csv`` read as a file in use where nothing was there).

    Args:
        spec: the stored spec (or the name shown for it).
        absent: the specs whose recorded path is absent here.
    """
    return f"{spec} ({ABSENT_RECORDED})" if spec in absent else spec


def publish_provenance(prov: Any, paths: Mapping[str, str]) -> Any:
    """``prov`` (a model's scores' provenance) with every string that is one of
    ``paths``' files (as given, absolute or resolved) replaced by its stored name."""
    swap: dict[str, str] = {}
    for path, name in paths.items():
        forms = {path, os.path.abspath(path)}
        with contextlib.suppress(OSError, ValueError):
            forms.add(str(Path(path).resolve()))
        for form in forms:
            swap[form] = name

    def fix(value: Any) -> Any:
        if isinstance(value, str):
            return swap.get(value, value)
        if isinstance(value, list):
            return [fix(v) for v in value]
        if isinstance(value, dict):
            return {k: fix(v) for k, v in value.items()}
        return value

    return fix(prov) if swap else prov
