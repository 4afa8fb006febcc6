"""Public names of a package imported on first use (PEP 562), so that importing the
package (``activetest``, ``activetest.data``, ``activetest.stats``) imports none of the
modules that define them until a name is used."""

from __future__ import annotations

TYPE_CHECKING = False  # not typing's: importing typing costs import time
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any


def lazy_exports(package: str, exports: dict[str, str], namespace: dict[str, Any]
                 ) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The package's ``__getattr__`` and ``__dir__``: ``exports`` maps each public name to
    the module that defines it; a name is imported from there on first use and bound in
    ``namespace`` (the package's ``globals()``), so later uses are plain lookups. An
    unknown name raises ``AttributeError`` naming ``package``."""

    def __getattr__(name: str) -> Any:  # noqa: N807 (the package's PEP 562 hook)
        """Import a public name on first use (PEP 562)."""
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        import importlib

        value = getattr(importlib.import_module(module), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:  # noqa: N807 (the package's PEP 562 hook)
        """The module's names and every public name, imported or not."""
        return sorted({*namespace, *exports} - {"TYPE_CHECKING", "annotations"})

    return __getattr__, __dir__
