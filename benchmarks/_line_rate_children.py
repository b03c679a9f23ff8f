"""The line-rate benchmark's measured child processes: ``archivefs-get ENDPOINT SOURCE
DEST`` (``fs.get`` as a user's script calls it), ``boto3-transfer ENDPOINT BUCKET PREFIX
DEST`` (boto3's TransferManager) and ``s3fs-get ENDPOINT SOURCE DEST`` (s3fs alone). Run
as a script, not through the ``benchmarks`` package, so each process imports what a
user's script would and nothing of the harness.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

MiB = 2**20
THREADS = 10  # boto3's TransferManager, and the AWS CLI's default max_concurrent_requests
PART = 8 * MiB  # boto3's and the AWS CLI's default multipart chunk size


def _s3fs_options(endpoint: str) -> dict[str, object]:
    """s3fs's options for ``endpoint`` with the key pair the harness put in the environment."""
    return {
        "key": os.environ["AWS_ACCESS_KEY_ID"],
        "secret": os.environ["AWS_SECRET_ACCESS_KEY"],
        "client_kwargs": {
            "endpoint_url": endpoint,
            "region_name": os.environ["AWS_DEFAULT_REGION"],
        },
    }


def archivefs_get(endpoint: str, source: str, dest: str) -> None:
    from archivefs.filesystem import ArchiveFileSystem

    fs = ArchiveFileSystem(
        target_options=_s3fs_options(endpoint), journal=False, skip_instance_cache=True
    )
    fs.get(source, dest.rstrip("/") + "/", recursive=True)


def boto3_transfer(endpoint: str, bucket: str, prefix: str, dest: str) -> None:
    import boto3
    from boto3.s3.transfer import TransferConfig, create_transfer_manager

    client = boto3.client("s3", endpoint_url=endpoint)
    config = TransferConfig(
        max_concurrency=THREADS, multipart_chunksize=PART, multipart_threshold=PART
    )
    keys = [
        entry["Key"]
        for page in client.get_paginator("list_objects_v2").paginate(
            Bucket=bucket, Prefix=f"{prefix}/"
        )
        for entry in page.get("Contents", [])
    ]
    with create_transfer_manager(client, config) as manager:
        futures = []
        for key in keys:
            path = Path(dest, key[len(prefix) + 1 :])
            path.parent.mkdir(parents=True, exist_ok=True)
            futures.append(manager.download(bucket, key, str(path)))
        for future in futures:
            future.result()


def s3fs_get(endpoint: str, source: str, dest: str) -> None:
    """s3fs's own ``get``: the start-up of the stack archivefs is built on."""
    import s3fs

    fs = s3fs.S3FileSystem(**_s3fs_options(endpoint), skip_instance_cache=True)
    fs.get(source, dest.rstrip("/") + "/", recursive=True)


def main(argv: list[str]) -> int:
    """``archivefs-get ...``, ``boto3-transfer ...`` or ``s3fs-get ...``; 2 for anything
    else."""
    what, *args = argv
    if what == "archivefs-get":
        archivefs_get(*args)
    elif what == "boto3-transfer":
        boto3_transfer(*args)
    elif what == "s3fs-get":
        s3fs_get(*args)
    else:
        print(f"unknown child {what!r}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
