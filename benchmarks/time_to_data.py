"""Time to data for N archived objects with an emulated restore delay D.

archivefs (one batch, bulk polls, reads pipelined as objects return) against
the plain ways: a per-object restore-then-wait loop, and restore-all-then-read
with HEAD polling. The per-object loop takes about N*D; it is run on a subset
and extrapolated (labelled as such) so the default size stays short.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from benchmarks._common import Result

if TYPE_CHECKING:
    from archivefs.testing import EmulatedArchive

SIZES = {"smoke": (10, 0.5, 3), "default": (100, 1.0, 8), "full": (1000, 2.0, 20)}
PAYLOAD = 64 * 1024


def seed(archive: EmulatedArchive, bucket: str, n: int) -> list[str]:
    archive.create_bucket(bucket)
    objects = {f"obj/{i:05d}": bytes([i % 251]) * PAYLOAD for i in range(n)}
    archive.put_objects(bucket, objects, storage_class="GLACIER")
    return sorted(objects)


def run_archivefs(
    archive: EmulatedArchive, bucket: str, keys: list[str], delay: float
) -> dict[str, Any]:
    import tempfile

    from archivefs.filesystem import ArchiveFileSystem

    with tempfile.TemporaryDirectory() as tmp:
        fs = ArchiveFileSystem(
            target_options=archive.storage_options(),
            journal=f"{tmp}/journal.sqlite",
            restore_status_in_listings=True,
            restore_time_scale=delay / (3 * 3600),  # GLACIER Standard: 3-5 h -> D..1.7 D
            skip_instance_cache=True,
        )
        archive.requests.clear()
        start = time.perf_counter()
        paths = [f"{bucket}/{k}" for k in keys]
        plan = fs.plan(paths)
        fs.submit(plan)
        first = None
        for group in fs.as_ready(plan, timeout=600):
            fs.cat_file(group.key)
            if first is None:
                first = time.perf_counter() - start
        total = time.perf_counter() - start
    return {
        "seconds_total": total,
        "seconds_to_first_byte": first,
        "restore_requests": archive.requests.count("RestoreObject"),
        "status_requests": archive.requests.count("LIST") + archive.requests.count("HEAD"),
    }


def run_per_object_loop(
    archive: EmulatedArchive, bucket: str, keys: list[str], delay: float
) -> dict[str, Any]:
    client = archive.client()
    archive.requests.clear()
    start = time.perf_counter()
    first = None
    for key in keys:
        client.restore_object(Bucket=bucket, Key=key, RestoreRequest={"Days": 1})
        while not _restored(client, bucket, key):
            time.sleep(delay / 10)
        client.get_object(Bucket=bucket, Key=key)["Body"].read()
        if first is None:
            first = time.perf_counter() - start
    return _outcome(archive, start, first)


def run_restore_all_then_read(
    archive: EmulatedArchive, bucket: str, keys: list[str], delay: float
) -> dict[str, Any]:
    client = archive.client()
    archive.requests.clear()
    start = time.perf_counter()
    for key in keys:
        client.restore_object(Bucket=bucket, Key=key, RestoreRequest={"Days": 1})
    pending = set(keys)
    while pending:
        time.sleep(delay / 10)
        pending -= {key for key in sorted(pending) if _restored(client, bucket, key)}
    first = None
    for key in keys:
        client.get_object(Bucket=bucket, Key=key)["Body"].read()
        if first is None:
            first = time.perf_counter() - start
    return _outcome(archive, start, first)


def _restored(client: Any, bucket: str, key: str) -> bool:
    """One HEAD: the plain way of asking whether a restore is done."""
    restore = client.head_object(Bucket=bucket, Key=key).get("Restore", "")
    return 'ongoing-request="false"' in restore


def _outcome(archive: EmulatedArchive, start: float, first: float | None) -> dict[str, Any]:
    return {
        "seconds_total": time.perf_counter() - start,
        "seconds_to_first_byte": first,
        "restore_requests": archive.requests.count("RestoreObject"),
        "status_requests": archive.requests.count("HEAD"),
    }


def run(archive: EmulatedArchive, size: str) -> Result:
    n, delay, loop_subset = SIZES[size]
    archive.set_restore_delay(delay)
    keys = seed(archive, "ttd-archivefs", n)
    ours = run_archivefs(archive, "ttd-archivefs", keys, delay)
    keys_all = seed(archive, "ttd-all", n)
    all_then_read = run_restore_all_then_read(archive, "ttd-all", keys_all, delay)
    keys_loop = seed(archive, "ttd-loop", loop_subset)
    loop = run_per_object_loop(archive, "ttd-loop", keys_loop, delay)
    loop["measured_objects"] = loop_subset
    loop["seconds_total_extrapolated"] = loop["seconds_total"] / loop_subset * n
    ratio = loop["seconds_total_extrapolated"] / ours["seconds_total"]
    headline = (
        f"N={n}, D={delay:g}s: archivefs {ours['seconds_total']:.1f}s (first byte "
        f"{ours['seconds_to_first_byte']:.1f}s); per-object loop "
        f"~{loop['seconds_total_extrapolated']:.0f}s "
        f"(extrapolated from {loop_subset}) = {ratio:.0f}x slower; restore-all-then-read "
        f"{all_then_read['seconds_total']:.1f}s with {all_then_read['status_requests']} HEADs vs "
        f"{ours['status_requests']} status requests"
    )
    return Result(
        name="time_to_data",
        question="Time to data, N archived objects, restore delay D",
        parameters={"objects": n, "delay_s": delay, "object_bytes": PAYLOAD},
        archivefs=ours,
        baseline={"per_object_loop": loop, "restore_all_then_read": all_then_read},
        baseline_name="per-object restore/wait loop; restore-all-then-read with HEAD polling",
        headline=headline,
        samples={
            "archivefs_s": [ours["seconds_total"]],
            "loop_per_object_s": [loop["seconds_total"] / loop_subset],
        },
    )
