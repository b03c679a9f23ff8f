"""Notification sources: queues of S3 events and callbacks."""

from __future__ import annotations

import json
import queue
import threading
from typing import Any

import pytest

from archivefs.restore.notify import (
    CallbackNotificationSource,
    NotificationSource,
    QueueNotificationSource,
    restored_keys,
)


def s3_record(key: str, event: str = "ObjectRestore:Completed") -> dict[str, Any]:
    return {
        "eventVersion": "2.1",
        "eventSource": "aws:s3",
        "eventName": event,
        "s3": {"bucket": {"name": "bkt"}, "object": {"key": key, "size": 5}},
    }


def eventbridge(key: str, detail_type: str = "Object Restore Completed") -> dict[str, Any]:
    return {
        "version": "0",
        "detail-type": detail_type,
        "source": "aws.s3",
        "detail": {"bucket": {"name": "bkt"}, "object": {"key": key}},
    }


def test_message_forms() -> None:
    assert restored_keys("bkt/a/b.nc") == ["bkt/a/b.nc"]
    assert restored_keys("s3://bkt/a") == ["bkt/a"]
    assert restored_keys(b"bkt/x") == ["bkt/x"]
    assert restored_keys({"Records": [s3_record("dir/my+file%3D1.nc")]}) == ["bkt/dir/my file=1.nc"]
    assert restored_keys(s3_record("k")) == ["bkt/k"]
    assert restored_keys(eventbridge("dir/my file.nc")) == ["bkt/dir/my file.nc"]
    sqs_body = json.dumps({"Records": [s3_record("a"), s3_record("b")]})
    assert restored_keys(sqs_body) == ["bkt/a", "bkt/b"]
    sns = {"Type": "Notification", "Message": json.dumps({"Records": [s3_record("c")]})}
    assert restored_keys(sns) == ["bkt/c"]


def test_other_events_are_not_restores() -> None:
    assert restored_keys(s3_record("k", "ObjectRestore:Post")) == []
    assert restored_keys(s3_record("k", "ObjectRestore:Delete")) == []
    assert restored_keys(eventbridge("k", "Object Restore Initiated")) == []
    assert restored_keys({"Event": "s3:TestEvent", "Bucket": "bkt"}) == []
    assert restored_keys("just-a-bucket") == []
    assert restored_keys(42) == []


def test_queue_source_drains_everything_queued() -> None:
    source = QueueNotificationSource()
    assert isinstance(source, NotificationSource)
    source.put("bkt/1")
    source.put({"Records": [s3_record("2"), s3_record("3", "ObjectRestore:Post")]})
    source.put("{not json")
    source.put(eventbridge("4"))
    assert source.poll_ready(0) == {"bkt/1", "bkt/2", "bkt/4"}
    assert source.ignored == 1  # the malformed body; the Post record rode with a good one
    assert source.poll_ready(0) == set()


def test_queue_source_wraps_a_users_queue_and_wakes_on_put() -> None:
    feed: queue.Queue[Any] = queue.Queue()
    source = QueueNotificationSource(feed)
    started = threading.Event()

    def producer() -> None:
        started.wait()
        feed.put("s3://bkt/late")

    thread = threading.Thread(target=producer)
    thread.start()
    started.set()
    assert source.poll_ready(30) == {"bkt/late"}  # returns on the put, not after 30 s
    thread.join()


def test_queue_source_skips_useless_messages_while_waiting() -> None:
    source = QueueNotificationSource()
    source.put(s3_record("x", "ObjectRestore:Post"))
    source.put("bkt/y")
    assert source.poll_ready(5) == {"bkt/y"}
    assert source.ignored == 1


def test_queue_source_times_out_empty() -> None:
    assert QueueNotificationSource().poll_ready(0.01) == set()


def test_callback_source_from_threads() -> None:
    source = CallbackNotificationSource()
    assert isinstance(source, NotificationSource)
    threads = [
        threading.Thread(target=source.notify_many, args=([f"bkt/{t}-{i}" for i in range(50)],))
        for t in range(4)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    source.notify("s3://bkt/one")
    ready = source.poll_ready(0)
    assert len(ready) == 201
    assert "bkt/one" in ready
    assert source.poll_ready(0.01) == set()


def test_callback_source_wakes_a_waiting_poller() -> None:
    source = CallbackNotificationSource()
    result: list[set[str]] = []
    waiter = threading.Thread(target=lambda: result.append(source.poll_ready(30)))
    waiter.start()
    source.notify("bkt/k")
    waiter.join()
    assert result == [{"bkt/k"}]


@pytest.mark.parametrize("timeout", [-1.0, 0.0])
def test_non_positive_timeouts_do_not_block(timeout: float) -> None:
    assert CallbackNotificationSource().poll_ready(timeout) == set()
    assert QueueNotificationSource().poll_ready(timeout) == set()
