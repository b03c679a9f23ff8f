"""Imports made on first use, so that importing archivefs stays light: a package's public
names (PEP 562; one implementation for every import-light ``__init__.py``) and a heavy
module a module uses only inside its functions (numpy: a command that reads one plain
object never needs it)."""

from __future__ import annotations

import importlib
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, MutableMapping, Sequence

__all__ = ["lazy_module", "lazy_names"]


def lazy_names(
    package: str, homes: Mapping[str, str], public: Sequence[str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` of ``package``: a name in ``homes`` is imported
    from the module it maps to on first use and kept in the package's namespace; any
    other name is an ``AttributeError``; ``dir()`` lists ``public``."""

    def __getattr__(name: str) -> Any:
        module = homes.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        setattr(sys.modules[package], name, value)
        return value

    def __dir__() -> list[str]:
        return sorted(public)

    return __getattr__, __dir__


class _LazyModule:
    """Stands for module ``name`` under ``alias`` in a module's namespace until its first
    attribute is read: then imports it and puts the module itself in its place."""

    __slots__ = ("_alias", "_name", "_namespace")

    def __init__(self, name: str, namespace: MutableMapping[str, Any], alias: str) -> None:
        self._name = name
        self._namespace = namespace
        self._alias = alias

    def __getattr__(self, attribute: str) -> Any:
        module = importlib.import_module(self._name)
        self._namespace[self._alias] = module  # later reads of the alias find the module
        return getattr(module, attribute)

    def __repr__(self) -> str:
        return f"<module {self._name!r}, imported on first use>"


def lazy_module(name: str, namespace: MutableMapping[str, Any], alias: str) -> Any:
    """A stand-in for ``import name as alias`` in the module whose globals are
    ``namespace``: the module is imported when an attribute is first read through the
    alias (from then on the alias is the module). Import the real module under
    ``TYPE_CHECKING`` beside it, so type checkers see its types; use the alias only
    inside functions (a module-level use imports it at once)."""
    return _LazyModule(name, namespace, alias)
