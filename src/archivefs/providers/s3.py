"""Amazon S3 described in its own names, and the rules of its RestoreObject request."""

from __future__ import annotations

from archivefs.errors import InvalidRestoreRequestError
from archivefs.providers.base import (
    PATH_BUCKET,
    PATH_KEY,
    Access,
    ClassSpec,
    CommandLineOptions,
    ProviderSpec,
    Window,
    not_archived,
)

_MINUTE, _HOUR = 60.0, 3600.0
_KIB = 1024

# S3's classes in the order archivefs has always known them: catalogs store a class
# as its index in this order, so new classes are only ever appended.
CLASSES = (
    ClassSpec("STANDARD", Access.IMMEDIATE),
    ClassSpec("REDUCED_REDUNDANCY", Access.IMMEDIATE),
    ClassSpec("STANDARD_IA", Access.RETRIEVAL_FEE, 30, 128 * _KIB),
    ClassSpec("ONEZONE_IA", Access.RETRIEVAL_FEE, 30, 128 * _KIB),
    ClassSpec("INTELLIGENT_TIERING", Access.IMMEDIATE),  # archive access tiers: see model
    ClassSpec("GLACIER_IR", Access.RETRIEVAL_FEE, 90, 128 * _KIB),
    ClassSpec("GLACIER", Access.RESTORE, 90),
    ClassSpec("DEEP_ARCHIVE", Access.RESTORE, 180),
    ClassSpec("EXPRESS_ONEZONE", Access.IMMEDIATE),
    ClassSpec("OUTPOSTS", Access.IMMEDIATE),
    ClassSpec("SNOW", Access.IMMEDIATE),
)

# AWS documentation (restoring archived objects); "within X" is recorded as (0, X).
_GLACIER = {
    "Expedited": Window(1 * _MINUTE, 5 * _MINUTE),
    "Standard": Window(3 * _HOUR, 5 * _HOUR),
    "Bulk": Window(5 * _HOUR, 12 * _HOUR),
}
_DEEP = {"Standard": Window(0.0, 12 * _HOUR), "Bulk": Window(0.0, 48 * _HOUR)}

S3 = ProviderSpec(
    name="s3",
    price_sheet="aws-us-east-1",
    command_line=CommandLineOptions(
        takes={"endpoint_url": ("client_kwargs", "endpoint_url"), "profile": ("profile",)},
        refused=("account_name",),
        refusal="--account-name is an Azure storage account; use it with az:// URLs.",
    ),
    protocols=("s3", "s3a"),
    file_attributes={"bucket": (PATH_BUCKET, ""), "key": (PATH_KEY, "")},  # s3fs's S3File
    entry_keys=("Key", "Size", "ETag", "LastModified", "StorageClass", "ContentType", "VersionId"),
    path_forms=("bucket/key", "s3://bucket/key"),
    classes=CLASSES,
    default_class="STANDARD",  # S3 leaves the class out of responses for STANDARD
    speeds=("Expedited", "Standard", "Bulk"),
    speed_word="tier",
    cheapest_speed="Bulk",
    restore_verb="RestoreObject",
    takes_days=True,
    # s3fs's explicit keys, botocore's names for them, and an SSE-C key
    secret_options=frozenset(
        {
            "key",
            "secret",
            "token",
            "password",
            "aws_access_key_id",
            "aws_secret_access_key",
            "aws_session_token",
            "SSECustomerKey",
        }
    ),
    # botocore logs every request's headers (endpoint) and canonical request (auth)
    secret_headers=frozenset(
        {
            "x-amz-security-token",
            "x-amz-server-side-encryption-customer-key",
            "x-amz-copy-source-server-side-encryption-customer-key",
        }
    ),
    sdk_loggers=("botocore.endpoint", "botocore.auth"),
    bare_namespace=True,  # the endpoint URL, or "s3": what journals have always used
    windows={
        **{("GLACIER", speed): w for speed, w in _GLACIER.items()},
        **{("DEEP_ARCHIVE", speed): w for speed, w in _DEEP.items()},
        # Intelligent-Tiering's archive access tiers restore like the classes they mirror
        **{("ARCHIVE_ACCESS", speed): w for speed, w in _GLACIER.items()},
        **{("DEEP_ARCHIVE_ACCESS", speed): w for speed, w in _DEEP.items()},
    },
)


MAX_RESTORE_DAYS = 2_147_483_647  # S3 accepts any positive 32-bit integer of days


def check_restore_object(
    class_name: str,
    speed: str,
    days: int | None,
    *,
    path: str | None = None,
    archive_access: str | None = None,
    speed_only: bool = False,
    **_: object,
) -> int | None:
    """S3's rules for a RestoreObject request, checked before anything is sent.

    Returns the ``Days`` to send; ``None`` for Intelligent-Tiering's archive access
    tiers (``archive_access``), which restore into the frequent tier and take no days.
    Azure-only state (``target``, a pending priority) is accepted and ignored.
    ``speed_only``: check the class and speed, not the days (what an estimate asks).
    """
    if class_name == "INTELLIGENT_TIERING" and archive_access is not None:
        if speed == "Expedited" and archive_access == "DEEP_ARCHIVE_ACCESS":
            raise InvalidRestoreRequestError(
                "the Expedited tier is not available for the Deep Archive Access tier.",
                path=path,
                fix="use tier='Standard' or tier='Bulk'.",
            )
        return None
    spec = S3.find_class(class_name)
    if spec is None or spec.access is not Access.RESTORE:
        raise not_archived(path, class_name)
    if speed == "Expedited" and class_name == "DEEP_ARCHIVE":
        raise InvalidRestoreRequestError(
            "the Expedited tier is not available for DEEP_ARCHIVE objects.",
            path=path,
            fix="use tier='Standard' (within 12 hours) or tier='Bulk' (within 48 hours).",
        )
    if speed_only:
        return None
    if days is None or isinstance(days, bool) or not isinstance(days, int):
        raise InvalidRestoreRequestError(
            f"days must be a whole number of days, got {days!r}.",
            path=path,
            fix="pass days=1 (or more) for how long the restored copy should stay readable.",
        )
    if not 1 <= days <= MAX_RESTORE_DAYS:
        raise InvalidRestoreRequestError(
            f"days must be between 1 and {MAX_RESTORE_DAYS}, got {days}.",
            path=path,
            fix="pass days=1 (or more) for how long the restored copy should stay readable.",
        )
    return days
