"""Which requests an emulator answers with a fault: one rule type and one matcher for
every emulated twin (S3's :class:`~archivefs.testing.FaultInjector`, Azure's, GCS's and
Oracle's ``throttle``/``fail_next``).

A rule matches a request by its operation (``ops``, in the emulator's own names) and
bucket (``buckets``), fires for a ``fraction`` of the matching requests (drawn from a
generator seeded with ``seed``, so runs repeat) and at most ``count`` times. Rules added
with ``first=True`` (``fail_next``: "the next N requests of ...") are tried before the
others; within each list, in the order they were added. Each emulator keeps only how it
answers a fault in its protocol (S3's XML error or a dropped connection, Azure's
``x-ms-error-code``, GCS's status, Oracle's JSON error).
"""

from __future__ import annotations

import random
import threading
from collections.abc import Collection, Iterable
from dataclasses import dataclass, field


@dataclass(slots=True)
class FaultRule:
    """One rule: what to answer (``status``, ``code``, ``message``; ``kind`` "reset": drop
    the connection after ``after_bytes`` of the body) and which requests it replaces."""

    status: int
    code: str
    message: str = ""
    kind: str = "error"  # "error", or "reset" (a dropped connection)
    after_bytes: int = 0
    remaining: int | None = None  # faults left (None: no limit)
    fraction: float = 1.0
    ops: frozenset[str] | None = None
    buckets: frozenset[str] | None = None
    rng: random.Random = field(default_factory=random.Random, repr=False)

    def fires(self, op: str, bucket: str | None = None) -> bool:
        """Whether this rule faults a request of ``op`` to ``bucket`` (counted if so)."""
        if self.remaining == 0 or (self.ops is not None and op not in self.ops):
            return False
        if self.buckets is not None and bucket not in self.buckets:
            return False
        if self.fraction < 1.0 and self.rng.random() >= self.fraction:
            return False
        if self.remaining is not None:
            self.remaining -= 1
        return True


class FaultRules:
    """An emulator's fault rules (thread-safe): added, matched per request, counted.

    ``owner`` names the emulator in errors; ``known_ops``, when given, are the only
    operation names a rule may list.
    """

    def __init__(self, owner: str, known_ops: Collection[str] | None = None) -> None:
        self._owner = owner
        self._known = None if known_ops is None else tuple(known_ops)
        self._lock = threading.Lock()
        self._first: list[FaultRule] = []
        self._rules: list[FaultRule] = []
        self._injected = 0

    def add(
        self,
        status: int,
        code: str,
        *,
        message: str = "",
        kind: str = "error",
        after_bytes: int = 0,
        count: int | None = None,
        fraction: float | None = None,
        ops: Iterable[str] | None = None,
        buckets: Iterable[str] | None = None,
        seed: int = 0,
        first: bool = False,
    ) -> FaultRule:
        """Add a rule (checked first); ``first``: tried before the rules added without."""
        if count is not None and (isinstance(count, bool) or count < 1):
            raise ValueError(
                f"{self._owner}: count={count!r} must be a positive whole number. "
                "Fix: pass count=1 or more, or count=None for no limit."
            )
        if fraction is not None and not 0.0 < fraction <= 1.0:
            raise ValueError(
                f"{self._owner}: fraction={fraction!r} is outside (0, 1]. "
                "Fix: pass a number in (0, 1] (a share of requests, such as 0.5), or None "
                "for every request."
            )
        op_set = None if ops is None else frozenset(ops)
        if op_set is not None and self._known is not None and not op_set <= set(self._known):
            unknown = ", ".join(sorted(op_set - set(self._known)))
            raise ValueError(
                f"{self._owner}: unknown operation(s) {unknown}. Fix: use names from {self._known}."
            )
        rule = FaultRule(
            status=status,
            code=code,
            message=message,
            kind=kind,
            after_bytes=after_bytes,
            remaining=count,
            fraction=1.0 if fraction is None else fraction,
            ops=op_set,
            buckets=None if buckets is None else frozenset(buckets),
            rng=random.Random(seed),
        )
        with self._lock:
            (self._first if first else self._rules).append(rule)
        return rule

    def pick(self, op: str, bucket: str | None = None) -> FaultRule | None:
        """The rule that faults this request, if any (counted as injected)."""
        with self._lock:
            for rule in (*self._first, *self._rules):
                if rule.fires(op, bucket):
                    self._injected += 1
                    return rule
        return None

    def answer(self, op: str, bucket: str | None = None) -> tuple[int, str] | None:
        """``(status, code)`` of the rule that faults this request, if any (counted)."""
        rule = self.pick(op, bucket)
        return None if rule is None else (rule.status, rule.code)

    def clear(self) -> None:
        """Remove every rule and set :attr:`injected` back to 0."""
        with self._lock:
            self._first.clear()
            self._rules.clear()
            self._injected = 0

    @property
    def injected(self) -> int:
        """How many faults have been injected since the last :meth:`clear`."""
        with self._lock:
            return self._injected
