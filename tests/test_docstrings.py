"""Every public function, class and method of every public module says what it does.

The package is walked with :func:`pkgutil.walk_packages` (``activetest.experiments``
included: importing every module takes about a second). A module is public when no
part of its name after ``activetest`` starts with ``_``; its public names are those in
``__all__`` and those not starting with ``_``, each checked in the module that defines
it. A class's public methods and properties defined in the class itself are checked
too. A dataclass or named tuple without a docstring gets its signature as one
(``Point(x: int, y: int)``): that is not a docstring.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from collections.abc import Iterator
from types import ModuleType
from typing import Any

import activetest


def _public_modules() -> Iterator[ModuleType]:
    for info in pkgutil.walk_packages(activetest.__path__, "activetest."):
        if not any(part.startswith("_") for part in info.name.split(".")[1:]):
            yield importlib.import_module(info.name)


def _says_something(obj: Any) -> bool:
    doc = (obj.__doc__ or "").strip()
    return bool(doc) and not (inspect.isclass(obj) and doc.startswith(obj.__name__ + "("))


def _undocumented(module: ModuleType) -> Iterator[str]:
    names = dict.fromkeys([*getattr(module, "__all__", ()),
                           *(n for n in vars(module) if not n.startswith("_"))])
    for name in names:
        obj = getattr(module, name, None)
        if not (inspect.isfunction(obj) or inspect.isclass(obj)) \
                or obj.__module__ != module.__name__:
            continue  # a constant, or a name imported from where it is checked
        where = f"{module.__name__}.{name}"
        if not _says_something(obj):
            yield where
        if inspect.isclass(obj):
            for attr, value in vars(obj).items():
                f = value.fget if isinstance(value, property) else \
                    getattr(value, "__func__", value)  # static and class methods
                if not attr.startswith("_") and inspect.isfunction(f) \
                        and not _says_something(f):
                    yield f"{where}.{attr}"


def test_every_public_function_class_and_method_has_a_docstring() -> None:
    modules = list(_public_modules())
    assert len(modules) > 100 and "activetest.experiments" in {m.__name__ for m in modules}
    missing = [where for m in modules for where in _undocumented(m)]
    assert not missing, "public names without a docstring:\n" + "\n".join(missing)


def test_the_walk_finds_what_it_looks_for() -> None:
    """The checker itself: a bare function, a bare method, a dataclass's signature."""
    import dataclasses

    module = ModuleType("activetest_fake")

    def bare() -> None:
        pass

    class Shown:
        """Documented."""

        def method(self) -> None:
            pass

        @property
        def prop(self) -> int:
            return 1

        def _private(self) -> None:
            pass

    @dataclasses.dataclass
    class Data:
        x: int

    for obj in (bare, Shown, Data):
        obj.__module__ = "activetest_fake"
        setattr(module, obj.__name__, obj)
    assert sorted(_undocumented(module)) == [
        "activetest_fake.Data", "activetest_fake.Shown.method", "activetest_fake.Shown.prop",
        "activetest_fake.bare"]
