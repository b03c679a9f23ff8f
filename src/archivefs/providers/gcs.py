"""Google Cloud Storage classes, as the model, price sheets and ``stores.gcs`` see them.

Every GCS class reads at once; Nearline, Coldline and Archive bill retrieval per
GB and a minimum storage duration (30/90/365 days). There is no restore verb: plans
read these objects, and budgets guard their retrieval fees (docs/cost-model.md).
"""

from __future__ import annotations

from archivefs.providers.base import (
    PATH_BUCKET,
    PATH_KEY,
    Access,
    ClassSpec,
    CommandLineOptions,
    ProviderSpec,
)

GCS = ProviderSpec(
    name="gcs",
    price_sheet="gcs-us-central1",
    command_line=CommandLineOptions(  # --endpoint-url is S3's (it reads AWS_ENDPOINT_URL)
        refused=("profile", "account_name"),
        refusal="--profile and --account-name are AWS and Azure options; for gs:// give "
        "gcsfs options with --storage-options (token, project, endpoint_url), or "
        "GOOGLE_APPLICATION_CREDENTIALS in the environment.",
    ),
    protocols=("gs", "gcs"),
    file_attributes={  # gcsfs's GCSFile: metadata is the object's dict
        "bucket": (PATH_BUCKET, ""),
        "key": (PATH_KEY, ""),
        "metadata": ("metadata", {}),
        "content_type": ("contentType", "application/octet-stream"),
    },
    entry_keys=(  # the JSON API's object resource, as gcsfs keeps it
        "kind",
        "id",
        "selfLink",
        "mediaLink",
        "bucket",
        "generation",
        "metageneration",
        "contentType",
        "storageClass",
        "etag",
        "md5Hash",
        "crc32c",
        "timeCreated",
        "updated",
        "timeStorageClassUpdated",
        "acl",
        "ctime",
    ),
    path_forms=("bucket/object", "gs://bucket/object"),
    classes=(
        ClassSpec("STANDARD", Access.IMMEDIATE),
        ClassSpec("NEARLINE", Access.RETRIEVAL_FEE, 30),
        ClassSpec("COLDLINE", Access.RETRIEVAL_FEE, 90),
        ClassSpec("ARCHIVE", Access.RETRIEVAL_FEE, 365),
    ),
    default_class="STANDARD",
    speeds=(),
    speed_word="(none: every class reads at once)",
    restore_verb="(none)",
    takes_days=False,
    # gcsfs's ``token``: a credentials dict, a raw access token or a service-account
    # file; the modes below name a way to find credentials and travel (a worker needs
    # ``token="anon"`` to read a public bucket)
    secret_options=frozenset({"token"}),
    credential_modes={"token": frozenset({"anon", "google_default", "cloud", "browser"})},
)
