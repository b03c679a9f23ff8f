"""Azure Blob Storage described in its own names, and its rehydration rules.

Access tiers Hot/Cool/Cold read at once (Cool and Cold bill a per-GB data
retrieval fee); Archive must be *rehydrated* with Set Blob Tier (or a copy) to an
online tier at a rehydrate priority, Standard or High. A rehydrated blob stays
online: there are no days. Rules (Azure docs, "Rehydrate an archived blob to an
online tier"): the priority of a pending rehydration may be raised from Standard to
High but never lowered, and its target tier cannot be changed.
"""

from __future__ import annotations

from archivefs.errors import InvalidRestoreRequestError, NotArchivedError
from archivefs.providers.base import (
    PATH_BUCKET,
    PATH_KEY,
    Access,
    ClassSpec,
    CommandLineOptions,
    ProviderSpec,
    Window,
)

_HOUR = 3600.0

PRIORITIES = ("Standard", "High")
TARGETS = ("Hot", "Cool", "Cold")


def check_rehydrate(
    class_name: str,
    speed: str,
    days: int | None = None,
    *,
    path: str | None = None,
    target: str | None = None,
    pending_priority: str | None = None,
    pending_target: str | None = None,
    **_: object,
) -> None:
    """Azure's rules for a rehydration, checked before anything is sent.

    ``days`` is accepted and ignored: a rehydrated blob stays online until it is
    moved again. Returns ``None`` (no days to send).
    """
    if class_name != "Archive":
        raise NotArchivedError(
            f"blob is in the {class_name} tier, which reads at once; there is nothing to "
            "rehydrate.",
            path=path,
            fix="read it directly, or leave it out of the restore.",
        )
    priority = AZURE.find_speed(speed)
    if priority is None:
        raise InvalidRestoreRequestError(
            f"Azure has no rehydrate priority {speed!r}.",
            path=path,
            fix="use tier='Standard' (up to 15 hours) or tier='High' (under an hour for "
            "blobs below 10 GB).",
        )
    wanted = target or "Hot"
    if not any(t.lower() == wanted.lower() for t in TARGETS):
        raise InvalidRestoreRequestError(
            f"Azure cannot rehydrate to the {wanted!r} tier.",
            path=path,
            fix=f"rehydrate to one of: {', '.join(TARGETS)}.",
        )
    if pending_target is not None and pending_target.lower() != wanted.lower():
        raise InvalidRestoreRequestError(
            f"a rehydration to {pending_target} is already pending; Azure cannot change its "
            f"target tier to {wanted}.",
            path=path,
            fix=f"wait for it to reach {pending_target}, then change the tier, or copy the "
            "blob to a new name at the tier you want.",
        )
    if pending_priority == "High" and priority == "Standard":
        raise InvalidRestoreRequestError(
            "a High-priority rehydration is pending; Azure can raise a rehydrate priority "
            "from Standard to High but never lower it.",
            path=path,
            fix="leave it at High (it is already the faster one), or use tier='High'.",
        )


AZURE = ProviderSpec(
    name="azure",
    price_sheet="azure-eastus",
    command_line=CommandLineOptions(  # --endpoint-url is S3's; Azure's comes with the account
        takes={"account_name": ("account_name",)},
        refused=("profile",),
        refusal="--profile names an AWS profile; for Azure give --account-name, or "
        "AZURE_STORAGE_CONNECTION_STRING / AZURE_STORAGE_ACCOUNT_KEY in the environment, or "
        "--storage-options with adlfs options.",
    ),
    protocols=("az", "abfs", "abfss"),
    file_attributes={  # adlfs's AzureBlobFile: metadata is the blob's dict
        "container_name": (PATH_BUCKET, ""),
        "blob": (PATH_KEY, ""),
        "metadata": ("metadata", {}),
    },
    entry_keys=(  # adlfs's _details of a blob
        "metadata",
        "creation_time",
        "deleted",
        "deleted_time",
        "last_modified",
        "content_settings",
        "remaining_retention_days",
        "archive_status",
        "last_accessed_on",
        "etag",
        "tags",
        "tag_count",
    ),
    root_aliases=(".", "*"),
    find_lists_folder=False,
    find_missing_bucket_empty=True,
    container_word="container",
    path_forms=("container/blob", "az://container/blob"),
    classes=(
        ClassSpec("Hot", Access.IMMEDIATE),
        ClassSpec("Cool", Access.RETRIEVAL_FEE, 30),
        ClassSpec("Cold", Access.RETRIEVAL_FEE, 90),
        ClassSpec("Archive", Access.RESTORE, 180),
    ),
    default_class="Hot",
    speeds=PRIORITIES,
    speed_word="rehydrate priority",
    cheapest_speed="Standard",
    restore_verb="Set Blob Tier",
    takes_days=False,
    targets=TARGETS,
    default_target="Hot",
    # adlfs's credentials: a connection string holds the account key (or a SAS);
    # ``credential`` may be a key string or a credential object holding a secret
    secret_options=frozenset(
        {"account_key", "connection_string", "sas_token", "client_secret", "credential"}
    ),
    # Azure docs: Standard "may take up to 15 hours"; High "may complete in under one
    # hour for an object under 10 GB in size".
    windows={
        ("Archive", "Standard"): Window(0.0, 15 * _HOUR),
        ("Archive", "High"): Window(0.0, 1 * _HOUR),
    },
)
