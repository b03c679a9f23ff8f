"""The five providers the scenario tests run on, described once.

Each provider is its emulated server (a fixture of ``archivefs.testing.pytest_plugin``),
a fixture making a new bucket on it, the fsspec protocol, the class a scenario writes
cold and hot objects in, and the ``ArchiveFileSystem`` options every test of it needs.
Adding a provider means adding one :class:`ProviderSpec` to :data:`PROVIDERS`.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import fsspec
import pytest

from archivefs import ArchiveFileSystem
from tests.support.counts import s3_restores
from tests.support.groups import RGW_GROUP

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from pathlib import Path


@dataclass(frozen=True)
class ProviderSpec:
    """What a scenario needs to know about one provider's emulated twin."""

    name: str
    server_fixture: str  # the plugin's function-scoped (reset) server fixture
    bucket_fixture: str  # a new, empty bucket or container on it
    protocol: str  # the fsspec protocol of the cold store
    hot_class: str  # a class that reads at once
    cold_class: str | None  # a class that needs a restore; None: the store has no restores
    options: dict[str, Any] = field(default_factory=dict)  # ArchiveFileSystem's own options
    sheet: str = ""  # the price sheet archivefs picks for it when given none
    # the classes that read at once for a retrieval fee, each with its sheet's prices:
    # (retrieval USD per GiB, USD per 1,000 GETs)
    fee_classes: dict[str, tuple[float, float]] = field(default_factory=dict)
    # the HTTP request that carries restores, and how many restores one of them carries
    restore_call: str | None = None
    restore_batch: int = 1
    read_op: str = "GET"  # the request that downloads an object's bytes
    list_op: str = "LIST"  # the request that lists a page of a prefix
    list_page: int = 1000  # the most objects one listing page holds
    key_field: str = "key"  # the request record's attribute naming the object
    head_op: str = "HEAD"  # the request that reads one object's metadata
    # an upload into a class (fs.put_file(storage_class=)): its requests, how many
    put_op: str = "PUT"
    put_requests: int = 1
    delete_op: str = "DELETE"  # the request that deletes one object
    # the CLI: an option of another provider's client, refused with the name of this
    # one's client; a flag of another provider, refused naming this one's way; a restore
    # speed it lacks, refused in these words
    cli_foreign_option: tuple[str, str] = ("account_name", "s3fs")
    cli_foreign_flag: tuple[str, str] = ("--account-name", "--profile")
    cli_foreign_tier: tuple[str, str] = ("High", "'High'")
    # LISTs the CLI's first listing adds to ask the endpoint once whether its listings
    # carry restore states (an S3 endpoint that is not AWS's; the CLI has no flag for it)
    cli_probe_lists: int = 0
    not_advised: frozenset[str] = frozenset()  # fee classes `advise` does not compare

    # what a listing shows of an object whose restore finished: (class, restore state)
    # when not (its cold class, "restored")
    restored_as: tuple[str, str] | None = None

    @property
    def first_look(self) -> dict[str, int]:
        """The requests of a new filesystem's first listing: one look for a catalog
        registry (absent) and one listing page."""
        return {self.read_op: 1, self.list_op: 1}

    @property
    def fee_class(self) -> str | None:
        """One class that reads at once for a retrieval fee (None: it has none)."""
        return next(iter(self.fee_classes), None)

    @property
    def chunk_class(self) -> str:
        """The class a scenario's cold data goes in: one that needs a restore, or else
        one that reads at once for a fee."""
        klass = self.cold_class or self.fee_class
        assert klass is not None, f"{self.name} has neither restores nor fee classes"
        return klass

    @property
    def restores(self) -> bool:
        """Whether its cold class needs a restore (else it reads at once, for a fee)."""
        return self.cold_class is not None

    def restore_calls(self, n: int) -> int:
        """HTTP requests carrying ``n`` restores submitted together (0 without restores)."""
        return math.ceil(n / self.restore_batch) if self.restores else 0


PROVIDERS: dict[str, ProviderSpec] = {
    spec.name: spec
    for spec in (
        ProviderSpec(
            "s3", "archive", "bucket", "s3", "STANDARD", "GLACIER",
            # AWS lists restore states; moto needs the option spelled out
            {"restore_status_in_listings": True, "restore_time_scale": 1 / 3600},
            restore_call="RestoreObject", sheet="aws-us-east-1",
            # moto is not AWS: the CLI asks once whether its listings carry restore states
            cli_probe_lists=1, not_advised=frozenset({"ONEZONE_IA"}),
            cli_foreign_flag=("--account-name", "use it with az:// URLs"),
            fee_classes={"STANDARD_IA": (0.01, 0.001), "ONEZONE_IA": (0.01, 0.001),
                         "GLACIER_IR": (0.03, 0.01)},
        ),
        ProviderSpec(
            "azure", "azure_archive", "azure_container", "az", "Hot", "Archive",
            {"restore_time_scale": 1 / 3600, "price_sheet": "azure-eastus"},
            # Set Blob Tier goes in Blob Batches of up to 256
            restore_call="BlobBatch", restore_batch=256, read_op="GetBlob", key_field="blob",
            list_op="ListBlobs", list_page=5000, put_op="PutBlob", delete_op="DeleteBlob",
            restored_as=("Hot", "hot"),  # a rehydrated blob is a Hot blob
            head_op="GetBlobProperties", sheet="azure-eastus",
            cli_foreign_option=("endpoint_url", "adlfs"),
            cli_foreign_flag=("--profile", "--account-name"), cli_foreign_tier=("Bulk", "'Bulk'"),
            fee_classes={"Cool": (0.01, 0.001), "Cold": (0.03, 0.01)},
        ),
        ProviderSpec(
            "gcs", "gcs_archive", "gcs_bucket", "gs", "STANDARD", None,
            {"price_sheet": "gcs-us-central1"},
            read_op="objects.download", key_field="name", head_op="objects.get",
            list_op="objects.list", delete_op="objects.delete",
            # one resumable upload: its start (naming the class), then its one chunk
            put_op="objects.insert", put_requests=2,
            sheet="gcs-us-central1", cli_foreign_option=("account_name", "gcsfs"),
            cli_foreign_flag=("--profile", "--storage-options"),
            fee_classes={"COLDLINE": (0.02, 0.01), "NEARLINE": (0.01, 0.001),
                         "ARCHIVE": (0.05, 0.05)},
        ),
        ProviderSpec(
            "oracle", "oracle_archive", "oracle_bucket", "oci", "Standard", "Archive",
            {"restore_time_scale": 1 / 3600, "price_sheet": "oci-us-ashburn-1"},
            restore_call="RestoreObjects", read_op="GetObject", key_field="name",
            list_op="ListObjects", put_op="PutObject", delete_op="DeleteObject",
            head_op="HeadObject", sheet="oci-us-ashburn-1",
            cli_foreign_option=("account_name", "ocifs"),
            cli_foreign_tier=("Bulk", "oracle has one restore speed, 'Standard'; not 'Bulk'"),
            fee_classes={"InfrequentAccess": (0.01, 0.00034)},
        ),
        # Ceph RGW stores the S3 archive classes but answers RestoreObject with 501
        ProviderSpec("rgw", "local_rgw", "rgw_bucket", "s3", "STANDARD", None),
    )
}  # fmt: skip


def provider_params(
    *names: str, skip: Mapping[str, str] | None = None, xfail: Mapping[str, str] | None = None
) -> list[Any]:
    """``pytest.param`` per provider (all when no name is given), radosgw in its xdist group.

    ``skip`` maps each provider a scenario does not apply to to the reason, shown as
    the skip reason of its parameter (so every run lists what is not tested, and why);
    ``xfail`` maps a provider to a known defect the scenario finds there (strict: the
    test fails once the defect is fixed, so the mark goes with it).
    """
    skip, xfail = skip or {}, xfail or {}
    params = []
    for name in names or PROVIDERS:
        marks: list[Any] = [RGW_GROUP] if name == "rgw" else []
        if name in skip:
            marks.append(pytest.mark.skip(reason=f"{name}: {skip[name]}"))
        if name in xfail:
            marks.append(pytest.mark.xfail(reason=f"{name}: {xfail[name]}", strict=True))
        params.append(pytest.param(name, marks=marks, id=name))
    return params


@dataclass
class Provider:
    """One provider's emulated server, reset, with a new bucket, for one test."""

    spec: ProviderSpec
    server: Any
    bucket: str
    tmp_path: Path

    @property
    def name(self) -> str:
        return self.spec.name

    def storage_options(self) -> dict[str, Any]:
        """The cold store's fsspec options (plain JSON: a subprocess can rebuild them)."""
        options: dict[str, Any] = self.server.storage_options()
        return options

    def raw(self) -> Any:
        """A new fsspec filesystem of the store itself (no archivefs), for seeding."""
        return fsspec.filesystem(
            self.spec.protocol, skip_instance_cache=True, **self.storage_options()
        )

    def archive_options(self, **overrides: Any) -> dict[str, Any]:
        """``ArchiveFileSystem`` keyword arguments: a private journal, the provider's
        prices and restore timing scaled so polls fit emulated delays of seconds."""
        return {
            "target_protocol": self.spec.protocol,
            "target_options": self.storage_options(),
            "journal": str(self.tmp_path / "journal.sqlite"),
            "skip_instance_cache": True,
            "catalog_ttl": math.inf,  # counts must not depend on how long a test runs
            **self.spec.options,
            **overrides,
        }

    def open_options(self, **overrides: Any) -> dict[str, Any]:
        """The archivefs options of ``ads.open_zarr`` and of an ``archive::`` URL's
        ``"archive"`` storage options (the cold store's options go separately)."""
        return {"journal": str(self.tmp_path / "journal.sqlite"), **self.spec.options, **overrides}

    def fs(self, **overrides: Any) -> ArchiveFileSystem:
        """A new ``ArchiveFileSystem`` on this provider (see :meth:`archive_options`)."""
        return ArchiveFileSystem(**self.archive_options(**overrides))


def cli_account(provider: Provider) -> tuple[list[str], dict[str, str]]:
    """The ``archivefs`` script's arguments and environment for the provider's account,
    as its users give them: Azure's connection string in the environment (adlfs reads
    it there), the others' client options with ``--storage-options``."""
    if provider.name == "azure":
        return [], {"AZURE_STORAGE_CONNECTION_STRING": provider.server.connection_string}
    return ["--storage-options", json.dumps(provider.storage_options())], {}


def provider_for(name: str, request: pytest.FixtureRequest, tmp_path: Path) -> Provider:
    """The provider ``name`` for the test behind ``request``: its server reset, a new bucket."""
    spec = PROVIDERS[name]
    server = request.getfixturevalue(spec.server_fixture)
    return Provider(spec, server, request.getfixturevalue(spec.bucket_fixture), tmp_path)


def fs_factory(spec_name: str, server: Any, tmp_path: Path) -> Callable[..., ArchiveFileSystem]:
    """``make(**overrides)``: a new ``ArchiveFileSystem`` on ``server`` as provider
    ``spec_name`` (the one factory behind conftest's ``make_fs``/``make_az``/...)."""
    provider = Provider(PROVIDERS[spec_name], server, "", tmp_path)
    return provider.fs


# -- what each emulated twin names differently: seeding, holding restores, counting them

# a provider without restores (cold_class None) says here what a restore scenario checks
NO_RESTORES = {
    "gcs": "GCS has no restores: its cold classes read at once for a retrieval fee",
    "rgw": "radosgw answers RestoreObject with 501: test_rgw.py checks the clear error",
}
# a provider whose restored copies never expire says here what an expiry scenario checks
NO_EXPIRY = {
    **NO_RESTORES,
    "azure": "a rehydrated blob stays in its online tier: no restored copy expires",
}
# a provider without fee classes says here what a fee-charging read scenario checks
NO_FEES = {"rgw": "radosgw is set up with no class that bills a read (GLACIER, DEEP_ARCHIVE)"}


def seed(provider: Provider, names: dict[str, bytes], klass: str) -> None:
    """Write ``names`` (keys in the provider's bucket) in class ``klass`` (uncounted)."""
    server, bucket = provider.server, provider.bucket
    if provider.name == "azure":
        server.put_blobs(bucket, names, tier=klass)
    elif provider.name == "oracle":
        server.put_objects(bucket, names, tier=klass)
    elif provider.name == "gcs":  # the GCS emulator writes one object at a time
        for name, data in names.items():
            server.put_object(bucket, name, data, storage_class=klass)
    else:
        server.put_objects(bucket, names, storage_class=klass)


def reads(provider: Provider, prefix: str = "") -> int:
    """Downloads of objects whose key starts with ``prefix`` (in the provider's bucket)."""
    spec = provider.spec
    return sum(
        1
        for r in provider.server.requests.matching(op=spec.read_op)
        if (getattr(r, spec.key_field) or "").startswith(prefix)
    )


def restore_calls(provider: Provider) -> int:
    """HTTP requests carrying restores the server received (a Blob Batch once); 0 on a
    provider without restores."""
    if provider.spec.restore_call is None:
        return 0
    count: int = provider.server.requests.count(provider.spec.restore_call)
    return count


def seed_cold(provider: Provider, n: int, prefix: str = "o") -> list[str]:
    """``n`` small objects in the provider's class that needs a restore; their paths."""
    assert provider.spec.cold_class is not None, NO_RESTORES[provider.name]
    objects = {f"{prefix}/{i:05d}": f"object {i}".encode() for i in range(n)}
    seed(provider, objects, provider.spec.cold_class)
    return [f"{provider.bucket}/{name}" for name in sorted(objects)]


def hold_restores(provider: Provider) -> None:
    """Restores the server accepts from now on stay pending for an hour."""
    server = provider.server
    if provider.name == "azure":
        server.rehydrate_delay.update(Standard=3600.0, High=3600.0)
    elif provider.name == "oracle":
        server.restore_delay = 3600.0
    else:
        server.set_restore_delay(3600.0)


def quick_restores(provider: Provider) -> None:
    """Restores the server accepts from now on complete after a second."""
    server = provider.server
    if provider.name == "azure":
        server.rehydrate_delay["Standard"] = 1.0
    elif provider.name == "oracle":
        server.restore_delay = 1.0
    else:
        server.set_restore_delay(1.0)


def finish_restores(provider: Provider) -> None:
    """Every restore pending on the server completes now."""
    server = provider.server
    if provider.name == "azure":
        server.complete_rehydrations()
    elif provider.name == "oracle":
        server.complete_restores()
    else:
        server.set_restore_delay(0)  # moto: also restores already in flight


def expire_restores(provider: Provider, paths: list[str]) -> None:
    """The restored copies of ``paths`` end now: the objects are archived again."""
    for path in paths:
        provider.server.expire_restore(provider.bucket, path.split("/", 1)[1])


# the operations each twin throttles in the throttling scenario (one seeded rule each,
# so each operation's sequence of faults repeats run to run; S3: one rule for all), and
# the status a throttled request is answered with
THROTTLED_OPS: dict[str, list[str] | None] = {
    "s3": None,
    "azure": ["BlobBatch", "SetBlobTier", "ListBlobs", "GetBlobProperties"],
    "oracle": ["RestoreObjects", "ListObjects"],
}
THROTTLE_STATUS = {"s3": 503, "azure": 503, "oracle": 429}


def throttle(provider: Provider, fraction: float) -> None:
    """Answer ``fraction`` of the requests with the provider's throttling error."""
    ops = THROTTLED_OPS[provider.name]
    if ops is None:
        provider.server.faults.throttle(fraction=fraction, seed=3)
        return
    for rng_seed, op in enumerate(ops):
        provider.server.throttle(fraction=fraction, ops=[op], seed=rng_seed)


def faults_injected(provider: Provider) -> int:
    """How many requests the server answered with an injected fault."""
    server = provider.server
    injected: int = (server.faults if provider.name == "s3" else server).injected
    return injected


# the request that asks for one object's restore, as each server logs it (an Azure Set
# Blob Tier may be a sub-request of a Blob Batch: batched=None counts both)
RESTORE_REQUEST: dict[str, tuple[str, dict[str, Any]]] = {
    "s3": ("RestoreObject", {}),
    "azure": ("SetBlobTier", {"batched": None}),
    "oracle": ("RestoreObjects", {}),
}


def restore_requests(provider: Provider, **filters: Any) -> int:
    """Restore requests the server received (any answer, unless ``filters`` say one);
    0 on a provider without restores (there is no such request to send)."""
    if provider.spec.restore_call is None:
        return 0
    op, fixed = RESTORE_REQUEST[provider.name]
    count: int = provider.server.requests.count(op, **fixed, **filters)
    return count


def restores_started(provider: Provider) -> Counter[str]:
    """``bucket/key`` -> restores the server accepted and started."""
    if provider.name == "azure":
        return Counter(provider.server.rehydrations)
    if provider.name == "oracle":
        return Counter(provider.server.restores)
    return s3_restores(provider.server)


def request_counts(provider: Provider) -> dict[str, int]:
    """Requests the server received, per operation (an Azure Blob Batch once)."""
    log = provider.server.requests
    counts: dict[str, int] = log.by_op() if provider.name == "gcs" else log.counts()
    return counts
