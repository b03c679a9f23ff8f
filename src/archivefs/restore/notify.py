"""Notification sources: events that say "this object is restored", so polling can rest.

S3 can announce finished restores (``s3:ObjectRestore:Completed`` event
notifications to SQS/SNS/Lambda, or "Object Restore Completed" events on
EventBridge). archivefs does not talk to those services itself: the user feeds
what they receive into a :class:`QueueNotificationSource`, or calls
:meth:`CallbackNotificationSource.notify`, and the poller checks the keys named
at once instead of waiting for its next scheduled poll.
"""

from __future__ import annotations

import json
import logging
import queue
import threading
import time
from collections.abc import Iterable, Mapping
from typing import Any, Protocol, runtime_checkable
from urllib.parse import unquote_plus

logger = logging.getLogger(__name__)

RESTORE_COMPLETED_EVENT = "ObjectRestore:Completed"  # S3 event notifications
RESTORE_COMPLETED_DETAIL = "Object Restore Completed"  # EventBridge


@runtime_checkable
class NotificationSource(Protocol):
    """Something that knows which objects (``bucket/key``) have finished restoring."""

    def poll_ready(self, timeout: float) -> set[str]:
        """Wait up to ``timeout`` seconds for news; return the keys known to be restored.

        Returns as soon as any key is known (an empty set when the time runs out).
        Each key is reported once.
        """
        ...


def restored_keys(message: Any) -> list[str]:
    """The ``bucket/key`` paths a message says are restored; ``[]`` for other messages.

    Accepts a plain ``"bucket/key"`` (or ``"s3://bucket/key"``) string, an S3 event
    notification (``{"Records": [...]}`` or one record), an SNS envelope around
    one, an EventBridge event, or any of these as a JSON string (an SQS body).
    Keys in S3 event notifications are URL-encoded and are decoded here;
    EventBridge keys are used as given.
    """
    if isinstance(message, bytes):
        message = message.decode()
    if isinstance(message, str):
        text = message.strip()
        if text.startswith("{"):
            return restored_keys(json.loads(text))
        return [text.removeprefix("s3://")] if "/" in text.strip("/") else []
    if not isinstance(message, Mapping):
        return []
    if "Records" in message:
        return [k for record in message["Records"] for k in restored_keys(record)]
    if message.get("Type") == "Notification" and "Message" in message:  # SNS envelope
        return restored_keys(message["Message"])
    if "s3" in message and "eventName" in message:
        if not str(message["eventName"]).endswith(RESTORE_COMPLETED_EVENT):
            return []
        s3 = message["s3"]
        return [f"{s3['bucket']['name']}/{unquote_plus(s3['object']['key'])}"]
    if message.get("detail-type") == RESTORE_COMPLETED_DETAIL and "detail" in message:
        detail = message["detail"]
        return [f"{detail['bucket']['name']}/{detail['object']['key']}"]
    return []


class QueueNotificationSource:
    """Restored keys from a :class:`queue.Queue` that the user feeds.

    Put plain ``"bucket/key"`` strings or the S3/SNS/EventBridge messages
    themselves (see :func:`restored_keys`); messages about anything else
    (restores initiated or expired, test events) are ignored.
    """

    def __init__(self, source: queue.Queue[Any] | None = None) -> None:
        self.queue: queue.Queue[Any] = source if source is not None else queue.Queue()
        self.ignored = 0  # messages that named no restored object

    def put(self, message: Any) -> None:
        """Feed one message (the same as ``source.queue.put(message)``)."""
        self.queue.put(message)

    def poll_ready(self, timeout: float) -> set[str]:
        """Wait up to ``timeout`` s for the first message, then drain what is queued."""
        ready: set[str] = set()
        deadline = time.monotonic() + max(0.0, timeout)
        block = timeout > 0
        while True:
            try:
                if block:
                    message = self.queue.get(timeout=max(0.0, deadline - time.monotonic()))
                else:
                    message = self.queue.get_nowait()
            except queue.Empty:
                return ready
            ready.update(self._keys(message))
            # Once something useful arrived, only take what is already queued.
            block = not ready and time.monotonic() < deadline

    def _keys(self, message: Any) -> list[str]:
        try:
            keys = restored_keys(message)
        except (ValueError, KeyError, TypeError) as error:
            logger.warning("archivefs: ignoring a malformed restore notification: %s", error)
            keys = []
        if not keys:
            self.ignored += 1
        return keys


class CallbackNotificationSource:
    """Restored keys reported by calling :meth:`notify` (from any thread)."""

    def __init__(self) -> None:
        self._ready: set[str] = set()
        self._changed = threading.Condition()

    def notify(self, key: str) -> None:
        """Report that ``key`` (``bucket/key``) is restored."""
        self.notify_many((key,))

    def notify_many(self, keys: Iterable[str]) -> None:
        """Report several restored keys at once."""
        with self._changed:
            self._ready.update(k.removeprefix("s3://") for k in keys)
            self._changed.notify_all()

    def poll_ready(self, timeout: float) -> set[str]:
        """Wait up to ``timeout`` s until some key was reported; return and forget them."""
        with self._changed:
            self._changed.wait_for(lambda: bool(self._ready), timeout=max(0.0, timeout))
            ready, self._ready = self._ready, set()
        return ready
