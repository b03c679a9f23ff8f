"""Google Cloud Storage classes, described for the model and price sheets only.

Every GCS class reads at once; Nearline, Coldline and Archive bill retrieval per
GB and a minimum storage duration. No store adapter yet (see docs/providers.md).
"""

from __future__ import annotations

from archivefs.providers.base import Access, ClassSpec, ProviderSpec

GCS = ProviderSpec(
    name="gcs",
    protocols=("gs", "gcs"),
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
)
