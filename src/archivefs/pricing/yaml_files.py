"""The one loader of users' YAML files (price sheets, comparison sheets, workloads), bounded.

A file is read up to :data:`MAX_FILE_BYTES`; its YAML is composed at most
:data:`MAX_DEPTH` levels deep and into at most :data:`MAX_NODES` nodes once
aliases are expanded (an alias counts as every node it names, so nested aliases,
the "billion laughs", are refused while the file is read, before anything walks
them; an alias to a node that contains it is refused too). docs/guarantees.md
states these bounds. libyaml (PyYAML's C parser) reads the events when PyYAML has
it, so a file within the bounds parses in well under a second; the composing, where
the bounds are counted, is PyYAML's own. :func:`shown` is the short form of a value
for messages.
"""

from __future__ import annotations

import reprlib
from pathlib import Path
from typing import Any, NoReturn

import yaml
from yaml.composer import Composer
from yaml.constructor import SafeConstructor
from yaml.events import AliasEvent
from yaml.nodes import MappingNode, Node, SequenceNode
from yaml.resolver import Resolver

MAX_FILE_BYTES = 256 * 1024  # the shipped sheets are under 7 KiB
MAX_DEPTH = 32  # a price sheet nests 6 levels deep
MAX_NODES = 20_000  # scalars, lists and mappings, each alias counted as what it names
MAX_SHOWN = 80  # characters of a value quoted in a message

_SHORT = reprlib.Repr()
_SHORT.maxstring = MAX_SHOWN
_SHORT.maxother = MAX_SHOWN
_SHORT.maxlist = _SHORT.maxtuple = _SHORT.maxdict = 4
_SHORT.maxlevel = 2
_SHORT.maxlong = 24


YAMLError = yaml.YAMLError


class YamlBoundError(yaml.YAMLError):
    """A YAML document past one of the loader's bounds (what :func:`load_yaml` raises)."""


def shown(value: object) -> str:
    """``repr(value)`` cut short for a one-line message (at most ~``MAX_SHOWN`` characters)."""
    text = _SHORT.repr(value)
    return text if len(text) <= MAX_SHOWN + 3 else f"{text[:MAX_SHOWN]}..."


class _Bounded(Composer):
    """PyYAML's composer, counting depth and expanded nodes as it composes."""

    def __init__(self) -> None:
        super().__init__()
        self._depth = 0
        self._nodes = 0
        self._sizes: dict[int, tuple[int, int]] = {}  # id(node) -> (expanded nodes, height)

    def compose_node(self, parent: Node | None, index: Any) -> Node | None:
        event: Any = self.peek_event()  # type: ignore[attr-defined]  # the parser's
        if isinstance(event, AliasEvent):
            node = super().compose_node(parent, index)
            measured = self._sizes.get(id(node))
            if measured is None:  # the alias names a node still being composed: a cycle
                raise YamlBoundError(
                    f"alias *{event.anchor} ({_at(event)}) names a node that contains it"
                )
            self._count(measured[0], event)
            if self._depth + measured[1] > MAX_DEPTH:
                self._too_deep(event)
            return node
        self._depth += 1
        if self._depth > MAX_DEPTH:
            self._too_deep(event)
        self._count(1, event)
        node = super().compose_node(parent, index)
        self._depth -= 1
        children: list[tuple[int, int]] = []
        if isinstance(node, SequenceNode):
            children = [self._sizes[id(c)] for c in node.value]
        elif isinstance(node, MappingNode):
            children = [self._sizes[id(c)] for pair in node.value for c in pair]
        self._sizes[id(node)] = (
            1 + sum(n for n, _ in children),
            1 + max((h for _, h in children), default=0),
        )
        return node

    def _count(self, nodes: int, event: Any) -> None:
        self._nodes += nodes
        if self._nodes > MAX_NODES:
            raise YamlBoundError(
                f"more than {MAX_NODES:,} values with aliases expanded ({_at(event)})"
            )

    def _too_deep(self, event: Any) -> NoReturn:
        raise YamlBoundError(f"nested more than {MAX_DEPTH} levels deep ({_at(event)})")


class _PureLoader(
    yaml.reader.Reader, yaml.scanner.Scanner, yaml.parser.Parser, _Bounded, SafeConstructor,
    Resolver,
):  # fmt: skip
    """PyYAML's pure-Python events, the bounded composer, safe types (without libyaml)."""

    def __init__(self, stream: str) -> None:
        yaml.reader.Reader.__init__(self, stream)
        yaml.scanner.Scanner.__init__(self)
        yaml.parser.Parser.__init__(self)
        _Bounded.__init__(self)
        SafeConstructor.__init__(self)
        Resolver.__init__(self)


_Loader: type[_PureLoader] = _PureLoader
try:
    from yaml._yaml import CParser

    class _FastLoader(_Bounded, CParser, SafeConstructor, Resolver):
        """libyaml's events (fast, not recursive), the bounded composer, safe types."""

        def __init__(self, stream: str) -> None:
            CParser.__init__(self, stream)
            _Bounded.__init__(self)
            SafeConstructor.__init__(self)
            Resolver.__init__(self)

    _Loader = _FastLoader  # type: ignore[assignment]  # the same interface, in C
except ImportError:  # PyYAML built without libyaml (its wheels have it)
    pass


def _at(event: Any) -> str:
    mark = event.start_mark
    return f"line {mark.line + 1}, column {mark.column + 1}"


def one_line(text: str, limit: int = 200) -> str:
    """``text`` on one line, cut to about ``limit`` characters."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else f"{flat[:limit]}..."


def problem(error: yaml.YAMLError) -> str:
    """What a YAML error says, in one short line (PyYAML's own messages span lines and
    quote the offending text)."""
    return one_line(str(error))


def load_yaml(text: str, *, pure: bool = False) -> Any:
    """Parse one YAML document within the bounds above (:class:`yaml.YAMLError` past them).

    ``pure``: PyYAML's pure-Python parser even where libyaml is there (it is slower:
    about a second per 10,000 values on a busy machine)."""
    if len(text) > MAX_FILE_BYTES:
        raise YamlBoundError(f"longer than {MAX_FILE_BYTES:,} characters")
    loader = (_PureLoader if pure else _Loader)(text)
    try:
        return loader.get_single_data()
    except ValueError as error:  # e.g. an integer past Python's digit limit
        raise YamlBoundError(str(error).splitlines()[0][:200]) from None
    finally:
        loader.dispose()


def read_text(path: Path) -> str:
    """A file's text if it is at most :data:`MAX_FILE_BYTES` bytes (:class:`ValueError` if
    it is longer; :class:`OSError` or :class:`UnicodeDecodeError` if it cannot be read)."""
    with path.open("rb") as stream:
        data = stream.read(MAX_FILE_BYTES + 1)
    if len(data) > MAX_FILE_BYTES:
        raise ValueError(f"it is longer than {MAX_FILE_BYTES:,} bytes, the most a sheet may be")
    return data.decode("utf-8")
