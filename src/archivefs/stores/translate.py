"""Turn S3 (and Azure and GCS) errors into archivefs errors, in one place.

s3fs already translates botocore's ``ClientError`` into Python exceptions and
keeps the original as ``__cause__``; this module reads the S3 error code from
that cause (never from the message text) and decides what it means for an
archive: ``InvalidObjectState`` on a read (or ``ObjectNotInActiveTierError`` on a
copy) means *archived*, not *forbidden*.
"""

from __future__ import annotations

from typing import Any, NoReturn

from botocore.exceptions import NoCredentialsError

from archivefs.errors import (
    AccessDeniedError,
    ArchiveError,
    InvalidPathError,
    InvalidRestoreRequestError,
    ObjectNotFoundError,
    StoreUnavailableError,
)

THROTTLING_CODES = frozenset(
    {"SlowDown", "Throttling", "ThrottlingException", "RequestLimitExceeded", "503", "ServerBusy"}
    | {"TooManyRequests"}  # Oracle (429)
)
TRANSIENT_CODES = THROTTLING_CODES | frozenset(
    {"InternalError", "ServiceUnavailable", "RequestTimeout", "500", "502", "504"}
    | {"OperationTimedOut"}  # Azure
    | {"InternalServerError"}  # Oracle
)


def s3_error_code(error: BaseException | None) -> str | None:
    """The store's error code behind ``error`` (following ``__cause__``/``__context__``).

    S3's code from botocore's response, Azure's ``x-ms-error-code`` (azure.core
    errors carry it as ``error_code``), or Oracle's (the OCI SDK's ``ServiceError.code``);
    the sets of codes do not overlap.
    """
    seen: set[int] = set()
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        azure_code: Any = getattr(error, "error_code", None)  # azure.core's x-ms-error-code
        if isinstance(azure_code, str) and azure_code:
            return azure_code
        if type(error).__name__ == "ServiceError":  # oci.exceptions: code and HTTP status
            oracle_code: Any = getattr(error, "code", None)
            return str(oracle_code or getattr(error, "status", "")) or None
        response: Any = getattr(error, "response", None)
        if isinstance(response, dict):
            code = response.get("Error", {}).get("Code")
            if code:
                return str(code)
            status = response.get("ResponseMetadata", {}).get("HTTPStatusCode")
            if status:
                return str(status)
        error = error.__cause__ or error.__context__
    return None


OCI_CONFIG_ERRORS = frozenset(
    {"ConfigFileNotFound", "InvalidConfig", "InvalidPrivateKey", "ProfileNotFound"}
    | {"InvalidKeyFilePath", "MissingPrivateKeyPassphrase"}
)
"""The OCI SDK's errors for a missing or unusable config (raised when ocifs connects)."""

ARCHIVED_CODES = frozenset(
    {"InvalidObjectState", "ObjectNotInActiveTierError", "BlobArchived", "NotRestored"}
)
"""What S3 answers when an archived object is read or copied: GetObject says
``InvalidObjectState``; CopyObject of an unrestored source says
``ObjectNotInActiveTierError`` (botocore's model) or ``InvalidObjectState``
(reported from real S3). Both mean *archived*, everywhere. Azure answers reads of
archived and of rehydrating blobs with 409 ``BlobArchived``; Oracle answers GetObject of
an Archive object that is not restored with 409 ``NotRestored``."""


PRECONDITION_FAILED_CODES = frozenset({"PreconditionFailed", "ConditionNotMet", "IfMatchFailed"})
"""What a store answers (412) when a request's ``If-Match`` names an ETag the object no
longer has: S3's ``PreconditionFailed`` (the GCS adapter gives a failed
``ifGenerationMatch`` the same code), Azure's ``ConditionNotMet``, Oracle's
``IfMatchFailed``."""


CUSTOMER_KEY_MISSING_CODES = frozenset({"InvalidRequest", "400"})
"""What S3 answers a read of an object encrypted with a customer key (SSE-C) that
carries no key: GetObject ``400 InvalidRequest``, HeadObject a bare ``400`` (no body).
A GET or HEAD has no tier or days to be wrong, so on a read these codes mean that."""


def is_precondition_failed(error: BaseException) -> bool:
    """A read or write pinned to an ETag failed because the object has another ETag now."""
    return s3_error_code(error) in PRECONDITION_FAILED_CODES


def is_archived_error(error: BaseException) -> bool:
    """A read or copy failed because the object is archived (or its restore is not done)."""
    return s3_error_code(error) in ARCHIVED_CODES


def is_unsatisfiable_range(error: BaseException) -> bool:
    """A ranged read started at or past the object's end (416 ``InvalidRange`` on S3,
    Azure and Oracle; GCS answers an empty object's range with its empty body)."""
    return s3_error_code(error) in {"InvalidRange", "416"}


def is_restore_in_progress(error: BaseException) -> bool:
    return s3_error_code(error) == "RestoreAlreadyInProgress"


def is_transient(error: BaseException) -> bool:
    """Throttling, 5xx and dropped connections: worth retrying with backoff."""
    code = s3_error_code(error)
    if code in TRANSIENT_CODES:
        return True
    if code is not None:
        return False
    return _is_connection_error(error)


def _is_connection_error(error: BaseException) -> bool:
    """A dropped connection or a timeout, here or anywhere in the error's causes (SDKs
    wrap them: azure-core's ``ServiceResponseTimeoutError`` wraps aiohttp's timeout)."""
    chain = _chain(error)
    if any(isinstance(e, ConnectionError | TimeoutError) for e in chain):
        return True
    names = {type(e).__name__ for e in chain}
    return bool(
        names
        & {
            "EndpointConnectionError",
            "ConnectionClosedError",
            "ReadTimeoutError",
            "ConnectTimeoutError",
            "ResponseStreamingError",
            "ServerDisconnectedError",
            "ClientPayloadError",
            "ClientOSError",
            "IncompleteRead",
            "ProtocolError",
            "CircuitBreakerError",  # the OCI SDK refusing after repeated throttling
            "ConnectTimeout",  # requests, vendored by the OCI SDK
            "ReadTimeout",
            "ServiceRequestError",  # azure-core: the request could not be sent
            "ServiceResponseError",  # azure-core: the connection broke before the answer
            "ServiceResponseTimeoutError",
        }
    )


def _chain(error: BaseException) -> list[BaseException]:
    out: list[BaseException] = []
    current: BaseException | None = error
    while current is not None and current not in out:
        out.append(current)
        current = current.__cause__ or current.__context__
    return out


def _aws_profile_not_found(error: BaseException) -> str | None:
    """The profile name if botocore could not find it (its ``ProfileNotFound``, which shares
    its class name with the OCI SDK's)."""
    for cause in _chain(error):
        if type(cause).__name__ == "ProfileNotFound" and type(cause).__module__.startswith(
            "botocore"
        ):
            kwargs: Any = getattr(cause, "kwargs", None)
            return str(kwargs.get("profile", "")) if isinstance(kwargs, dict) else ""
    return None


def raise_translated(error: BaseException, path: str, *, action: str = "access") -> NoReturn:
    """Raise :func:`translate`'s error ``from`` the original; an archivefs error as it is.

    ``raise translate(e) from e`` would make an archivefs error its own cause, a cycle
    that hangs anything walking the chain (Dask's worker error reporting does).
    """
    translated = translate(error, path, action=action)
    if translated is error:
        raise error
    raise translated from error


class NoAwsCredentialsError(AccessDeniedError, NoCredentialsError):  # type: ignore[misc]
    """No usable AWS credentials: an :class:`AccessDeniedError` (a ``PermissionError``) that
    code written for s3fs, catching botocore's ``NoCredentialsError``, catches too."""


def translate(error: BaseException, path: str, *, action: str = "access") -> BaseException:
    """Map an error from the store to the archivefs error a user should see.

    Errors that are already archivefs errors pass through; unknown errors are
    wrapped in :class:`ArchiveError` so nothing raw from botocore reaches users.
    """
    if isinstance(error, ArchiveError):
        return error
    names = {type(e).__name__ for e in _chain(error)}
    if names & {"NoCredentialsError", "PartialCredentialsError", "CredentialRetrievalError"}:
        return NoAwsCredentialsError(
            "no usable AWS credentials were found.",
            path=path,
            fix="set AWS_PROFILE or AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, pass --profile, "
            "or give key/secret in the storage options (for public data: anon=true).",
        )
    profile = _aws_profile_not_found(error)
    if profile is not None:
        return AccessDeniedError(
            f"the AWS profile {profile!r} is not in the AWS config or credentials files.",
            path=path,
            fix="check the name (`aws configure list-profiles` lists them; AWS_CONFIG_FILE "
            "and AWS_SHARED_CREDENTIALS_FILE say which files are read), or leave the profile "
            "out (--profile, or profile= in the storage options).",
        )
    oci_config = sorted(
        type(e).__name__
        for e in _chain(error)
        if type(e).__name__ in OCI_CONFIG_ERRORS and type(e).__module__.startswith("oci")
    )
    if oci_config:
        return AccessDeniedError(
            f"the OCI configuration is missing or invalid ({oci_config[0]}).",
            path=path,
            fix="pass target_options={'config': '~/.oci/config', 'profile': ...} (or a config "
            "dict with user, fingerprint, key_file, tenancy, region); see Oracle's 'SDK and "
            "CLI Configuration File'.",
        )
    code = s3_error_code(error)
    azure = translate_azure(code, path, action)
    if azure is not None:
        return azure
    gcs = translate_gcs(error, path, action)
    if gcs is not None:
        return gcs
    oracle = translate_oracle(code, path, action)
    if oracle is not None:
        return oracle
    if code in ("NoSuchBucket",):
        bucket = path.split("/", 1)[0]
        return ObjectNotFoundError(
            f"bucket {bucket!r} does not exist.",
            path=path,
            fix="check the bucket name and the endpoint/region in the storage options.",
        )
    if code in ("NoSuchKey", "404", "NotFound") or (
        code is None and isinstance(error, FileNotFoundError)
    ):
        return ObjectNotFoundError(
            "no such object.",
            path=path,
            fix="check the path; list its parent directory with fs.ls() to see what exists.",
        )
    if code in CUSTOMER_KEY_MISSING_CODES and action in ("read", "inspect"):
        return AccessDeniedError(
            f"the object is encrypted with a customer key (SSE-C) and the request to {action} "
            f"it carried none (the store answered {code}).",
            path=path,
            fix="pass the key in the cold store's options, s3_additional_kwargs="
            "{'SSECustomerAlgorithm': 'AES256', 'SSECustomerKey': <the 32-byte key>} "
            "(Python: in target_options; the command line: in --storage-options).",
        )
    if code in ("AccessDenied", "403", "InvalidAccessKeyId", "SignatureDoesNotMatch"):
        return AccessDeniedError(
            f"the store refused to {action} this object ({code}).",
            path=path,
            fix="check the credentials and the bucket policy (s3:GetObject, s3:RestoreObject); "
            "for an object encrypted with a customer key (SSE-C), check the key.",
        )
    if code in ("InvalidArgument", "MalformedXML", "InvalidRequest"):
        return InvalidRestoreRequestError(
            f"the store rejected the request to {action} this object ({code}).",
            path=path,
            fix="check the tier and days against the object's storage class.",
        )
    if code == "InvalidBucketName" or isinstance(error, ValueError):
        return InvalidPathError(
            f"not a valid S3 path ({error}).",
            path=path,
            fix="use the form 'bucket/key' or 's3://bucket/key'.",
        )
    if is_transient(error):
        return StoreUnavailableError(
            f"the store kept failing while trying to {action} this object ({code or error}).",
            path=path,
            fix="retry later; if it persists, lower the concurrency or check the endpoint.",
        )
    return ArchiveError(
        f"could not {action} this object: {type(error).__name__}: {error}",
        path=path,
        fix="see the underlying error (raised from this one) for details.",
    )


def translate_azure(code: str | None, path: str, action: str) -> ArchiveError | None:
    """Azure Blob error codes (``x-ms-error-code``) that mean something to an archive."""
    container = path.split("/", 1)[0]
    if code == "ContainerNotFound":
        return ObjectNotFoundError(
            f"container {container!r} does not exist.",
            path=path,
            fix="check the container name and the account in the storage options.",
        )
    if code in ("BlobNotFound", "ResourceNotFound"):
        return ObjectNotFoundError(
            "no such blob.",
            path=path,
            fix="check the path; list its parent directory with fs.ls() to see what exists.",
        )
    if code in (
        "AuthenticationFailed",
        "AuthorizationFailure",
        "AuthorizationPermissionMismatch",
        "InsufficientAccountPermissions",
    ):
        return AccessDeniedError(
            f"Azure refused to {action} this blob ({code}).",
            path=path,
            fix="check account_name/account_key, the SAS token or the connection string, and "
            "the role (Storage Blob Data Contributor can read and set tiers).",
        )
    if code == "BlobBeingRehydrated":
        return InvalidRestoreRequestError(
            "a rehydration of this blob is pending; Azure cannot change its target tier or "
            "lower its priority.",
            path=path,
            fix="wait for it to finish (fs.info() shows its archive_status), or restore with "
            "the same target and tier='High'.",
        )
    if code in ("InvalidHeaderValue", "InvalidBlobTier", "InvalidBlobType"):
        return InvalidRestoreRequestError(
            f"Azure rejected the request to {action} this blob ({code}).",
            path=path,
            fix="rehydrate Archive block blobs to Hot, Cool or Cold at priority Standard or High.",
        )
    return None


def translate_gcs(error: BaseException, path: str, action: str) -> ArchiveError | None:
    """gcsfs's errors that mean something to a user: it raises a plain
    ``OSError("Forbidden: <url>...")`` for 403 (no code attribute to read) and its
    ``HttpError`` (with ``code``) for other statuses."""
    for cause in _chain(error):
        if type(cause) is OSError and str(cause).startswith("Forbidden: "):
            return AccessDeniedError(
                f"Google Cloud Storage refused to {action} this object (403 Forbidden).",
                path=path,
                fix="check the credentials (token=, GOOGLE_APPLICATION_CREDENTIALS) and the "
                "role (Storage Object Viewer reads; Storage Object User also writes).",
            )
        if type(cause).__name__ == "HttpError" and type(cause).__module__.startswith("gcsfs"):
            status = getattr(cause, "code", None)
            if status == 401:
                return AccessDeniedError(
                    "Google Cloud Storage did not accept the credentials (401).",
                    path=path,
                    fix="pass token= (a service-account file or 'google_default') in the gcsfs "
                    "options, or set GOOGLE_APPLICATION_CREDENTIALS; token='anon' for public "
                    "buckets.",
                )
            if status == 429 or (isinstance(status, int) and status >= 500):
                return StoreUnavailableError(
                    f"Google Cloud Storage kept failing while trying to {action} this object "
                    f"({status}, after gcsfs's retries).",
                    path=path,
                    fix="retry later; if it persists, lower the concurrency.",
                )
    return None


def translate_oracle(code: str | None, path: str, action: str) -> ArchiveError | None:
    """OCI Object Storage error codes (the JSON ``code``) that mean something to an archive."""
    bucket = path.split("/", 1)[0]
    if code in ("BucketNotFound", "NamespaceNotFound"):
        return ObjectNotFoundError(
            f"bucket {bucket!r} does not exist (or this user may not see it).",
            path=path,
            fix="check the bucket and namespace ('bucket@namespace/...') and the region in "
            "the OCI config.",
        )
    if code == "ObjectNotFound":
        return ObjectNotFoundError(
            "no such object.",
            path=path,
            fix="check the path; list its parent directory with fs.ls() to see what exists.",
        )
    if code in ("NotAuthenticated", "NotAuthorized", "NotAuthorizedOrNotFound"):
        return AccessDeniedError(
            f"Oracle refused to {action} this object ({code}).",
            path=path,
            fix="check the OCI config (user, fingerprint, key_file, tenancy, region) and the "
            "IAM policy (OBJECT_READ to read, OBJECT_RESTORE to restore).",
        )
    if code in ("InvalidParameter", "InvalidStorageTier"):
        return InvalidRestoreRequestError(
            f"Oracle rejected the request to {action} this object ({code}).",
            path=path,
            fix="only Archive-tier objects restore, for 1 to 240 hours.",
        )
    return None
