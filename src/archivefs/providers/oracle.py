"""Oracle Cloud Infrastructure Object Storage described in its own names, and its restore rules.

Storage tiers (OCI docs, "Understanding Storage Tiers"): Standard reads at once;
InfrequentAccess reads at once for a per-GB retrieval fee, 31-day minimum;
Archive must be restored with **RestoreObjects** before a read, 90-day minimum.
A restore makes a temporary readable copy for ``hours`` (1 to 240, default 24),
after which the object is Archived again. Oracle has no restore tiers: archivefs
calls its one speed ``Standard`` so the provider-neutral API (``tier="Standard"``
by default) works, and refuses any other tier before sending. Windows: Oracle
documents "at most an hour" to restore an object; a 2018 study measured up to
about four hours (see docs/providers.md).
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

SPEED = "Standard"  # Oracle has one restore speed; archivefs names it
MIN_HOURS, MAX_HOURS, DEFAULT_HOURS = 1, 240, 24


def hours_for(days: int | None, hours: int | None = None, *, path: str | None = None) -> int:
    """The ``hours`` a RestoreObjects request sends: ``hours`` if given, else ``days * 24``.

    ``days=None`` (and no ``hours``) means Oracle's default, 24. Raises
    :class:`InvalidRestoreRequestError` outside 1..240 hours, before anything is sent.
    """
    if hours is None:
        if days is None:
            return DEFAULT_HOURS
        if isinstance(days, bool) or not isinstance(days, int) or days < 1:
            raise InvalidRestoreRequestError(
                f"days must be a whole number of days, got {days!r}.",
                path=path,
                fix="pass days=1 to 10 (Oracle keeps a restored copy 24 to 240 hours), or "
                "store_options={'hours': n} for an exact number of hours.",
            )
        hours = days * 24
    if (
        isinstance(hours, bool)
        or not isinstance(hours, int)
        or not (MIN_HOURS <= hours <= MAX_HOURS)
    ):
        raise InvalidRestoreRequestError(
            f"Oracle keeps a restored object readable for 1 to 240 hours; {hours!r} hours "
            "were asked for.",
            path=path,
            fix="pass days=1 to 10, or store_options={'hours': n} with n from 1 to 240.",
        )
    return hours


def check_restore_objects(
    class_name: str,
    speed: str,
    days: int | None = None,
    *,
    path: str | None = None,
    hours: int | None = None,
    speed_only: bool = False,
    **_: object,
) -> int | None:
    """Oracle's rules for a RestoreObjects request, checked before anything is sent.

    Returns the ``hours`` to send (``hours``, or ``days * 24``). Azure-only state
    (``target``, pending priority) is accepted and ignored.
    """
    if class_name != "Archive":
        raise NotArchivedError(
            f"object is in the {class_name} tier, which reads at once; there is nothing to "
            "restore.",
            path=path,
            fix="read it directly, or leave it out of the restore.",
        )
    if ORACLE.find_speed(speed) is None:
        raise InvalidRestoreRequestError(
            f"Oracle has no restore tiers; {speed!r} was asked for.",
            path=path,
            fix="use tier='Standard' (the only one: Oracle restores within about an hour).",
        )
    if speed_only:  # what an estimate asks: the class and speed, not the hours
        return None
    return hours_for(days, hours, path=path)


ORACLE = ProviderSpec(
    name="oracle",
    price_sheet="oci-us-ashburn-1",
    command_line=CommandLineOptions(  # ocifs: --profile is the OCI config's profile
        takes={"profile": ("profile",)},
        refused=("account_name", "endpoint_url"),
        refusal="--account-name and --endpoint-url are Azure's and S3's; for oci:// URLs "
        "give --profile (a profile of the OCI config) and --storage-options with ocifs "
        'options, e.g. \'{"config": "~/.oci/config"}\'.',
    ),
    protocols=("oci",),
    file_attributes={"bucket": (PATH_BUCKET, ""), "key": (PATH_KEY, "")},  # ocifs's OCIFile
    entry_keys=(  # ocifs's listing's, then what its info adds
        "etag",
        "md5",
        "timeCreated",
        "timeModified",
        "storageTier",
        "archivalState",
        "contentType",
        "acceptRanges",
        "versionId",
    ),
    path_forms=("bucket/object", "bucket@namespace/object", "oci://bucket@namespace/object"),
    bucket_namespace=True,
    classes=(
        ClassSpec("Standard", Access.IMMEDIATE),
        ClassSpec("InfrequentAccess", Access.RETRIEVAL_FEE, 31),
        ClassSpec("Archive", Access.RESTORE, 90),
    ),
    default_class="Standard",
    speeds=(SPEED,),
    speed_word="restore speed",
    restore_verb="RestoreObjects",
    takes_days=True,  # sent as hours: see duration_unit
    duration_unit="hours",
    # the OCI SDK config's private key and its pass phrase (ocifs's ``config`` dict),
    # and a signer object (it holds the key); ``key_file`` is a path, not a secret
    secret_options=frozenset({"key_content", "pass_phrase", "signer"}),
    sdk_loggers=("ocifs",),  # ocifs logs its whole config when it connects
    # OCI docs: "it can take at most an hour to restore an object from Archive Storage"
    windows={("Archive", SPEED): Window(0.0, 1 * _HOUR)},
)
