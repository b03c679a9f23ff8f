"""Blocking twins of a filesystem's async methods that take a ``timeout`` of their own."""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any, Concatenate, ParamSpec, TypeVar

from fsspec.asyn import sync

if TYPE_CHECKING:
    from collections.abc import Callable, Coroutine

_P = ParamSpec("_P")
_T = TypeVar("_T")
_S = TypeVar("_S")


def sync_method(
    method: Callable[Concatenate[_S, _P], Coroutine[Any, Any, _T]],
) -> Callable[Concatenate[_S, _P], _T]:
    """The blocking form of ``method`` (an async method of an fsspec filesystem), run on
    the filesystem's I/O loop with its signature and docstring.

    Unlike fsspec's ``sync_wrapper``, every keyword reaches ``method``: fsspec's ``sync``
    would take ``timeout`` as its own limit on the call instead of passing it on.
    """

    @functools.wraps(method)
    def blocking(self: _S, /, *args: _P.args, **kwargs: _P.kwargs) -> _T:
        result: _T = sync(self.loop, functools.partial(method, self, *args, **kwargs))  # type: ignore[attr-defined]
        return result

    return blocking
