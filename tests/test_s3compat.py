"""ArchiveFileSystem answers as s3fs does where nothing needs a restore (issue 31)."""

from __future__ import annotations

import inspect
from typing import TYPE_CHECKING, Any

import pytest

from archivefs.filesystem import ArchiveFileSystem
from archivefs.wrapped import unwrapped
from tests.support.providers import seed

if TYPE_CHECKING:
    from pathlib import Path

    from archivefs.testing import EmulatedArchive
    from tests.support.providers import Provider


def fs_over(archive: EmulatedArchive, tmp_path: Path, **target: Any) -> ArchiveFileSystem:
    return ArchiveFileSystem(
        target_protocol="s3",
        target_options={**archive.storage_options(), **target},
        journal=str(tmp_path / "journal.sqlite"),
        skip_instance_cache=True,
    )


@pytest.fixture
def versioned(archive: EmulatedArchive, bucket: str) -> tuple[str, str, str]:
    """``bucket/obj`` written twice in a versioned bucket: (path, first, second version)."""
    client = archive.client()
    client.put_bucket_versioning(Bucket=bucket, VersioningConfiguration={"Status": "Enabled"})
    first = client.put_object(Bucket=bucket, Key="obj", Body=b"one")["VersionId"]
    second = client.put_object(Bucket=bucket, Key="obj", Body=b"second")["VersionId"]
    return f"{bucket}/obj", first, second


def test_open_with_version_id_reads_that_version(
    archive: EmulatedArchive, tmp_path: Path, versioned: tuple[str, str, str]
) -> None:
    path, first, second = versioned
    fs = fs_over(archive, tmp_path, version_aware=True)
    with fs.open(path, version_id=first) as f:
        assert f.version_id == first
        assert f.size == 3
        assert f.read() == b"one"
    with fs.open(f"{path}?versionId={first}") as f:
        assert f.version_id == first
        assert f.read() == b"one"
    with fs.open(path) as f:  # pinned to the version current at open, as s3fs does
        assert f.version_id == second
        assert f.read() == b"second"
    assert fs.cat_file(path, version_id=first) == b"one"
    assert fs.cat_file(f"{path}?versionId={first}") == b"one"


def test_versions_in_info_exists_and_ls(
    archive: EmulatedArchive, tmp_path: Path, versioned: tuple[str, str, str]
) -> None:
    path, first, second = versioned
    fs = fs_over(archive, tmp_path, version_aware=True)
    assert fs.info(path, version_id=first)["VersionId"] == first
    assert fs.info(f"{path}?versionId={first}")["size"] == 3
    assert fs.exists(f"{path}?versionId={first}")
    assert not fs.exists(f"{path}?versionId=nosuchversion")
    bucket = path.split("/")[0]
    assert set(fs.ls(bucket, detail=False, versions=True)) == {
        f"{path}?versionId={first}",
        f"{path}?versionId={second}",
    }


def test_version_id_on_a_filesystem_that_is_not_version_aware_is_refused(
    archive: EmulatedArchive, tmp_path: Path, versioned: tuple[str, str, str]
) -> None:
    path, first, _ = versioned
    fs = fs_over(archive, tmp_path)
    with pytest.raises(ValueError, match="version"):
        fs.open(path, version_id=first)


@pytest.fixture
def tree(archive: EmulatedArchive, bucket: str, tmp_path: Path) -> ArchiveFileSystem:
    archive.put_objects(bucket, {"d/a": b"1", "d/sub/b": b"2", "top": b"3", "d2/c": b"4"})
    return fs_over(archive, tmp_path)


def test_ls_gives_names_by_default_and_the_root_lists_buckets(
    tree: ArchiveFileSystem, bucket: str
) -> None:
    assert tree.ls(f"{bucket}/d") == [f"{bucket}/d/a", f"{bucket}/d/sub"]
    assert f"{bucket}/top" in tree.ls(bucket)
    assert tree.ls(f"{bucket}/d", detail=True)[0]["storage_class"] == "STANDARD"
    assert bucket in tree.ls("")
    assert bucket in tree.ls("/")
    assert {e["name"] for e in tree.ls("", detail=True)} == set(tree.ls(""))
    assert tree.isdir("")


def test_find_with_prefix_and_withdirs_as_s3fs(tree: ArchiveFileSystem, bucket: str) -> None:
    assert tree.find(bucket, prefix="d/") == [f"{bucket}/d/a", f"{bucket}/d/sub/b"]
    assert tree.find(bucket, prefix="d") == [f"{bucket}/d/a", f"{bucket}/d/sub/b", f"{bucket}/d2/c"]
    assert tree.find(f"{bucket}/d/", prefix="s") == [f"{bucket}/d/sub/b"]
    assert list(tree.find(bucket, prefix="to", detail=True)) == [f"{bucket}/top"]
    found = tree.find(bucket, withdirs=True)
    assert bucket not in found  # s3fs never lists the bucket in its own whole-depth find
    assert f"{bucket}/d/sub" in found
    assert bucket in tree.find(bucket, maxdepth=1, withdirs=True)  # fsspec's walk, as s3fs


def test_a_whole_depth_find_with_folders_is_fsspecs_walk_from_one_listing(
    archive: EmulatedArchive, bucket: str, tmp_path: Path
) -> None:
    """find(withdirs=True) outside a catalog (what get(recursive=True) expands) answers what
    fsspec's walk answers, folders at every depth included, from one recursive LIST."""
    from fsspec.asyn import AsyncFileSystem, sync

    keys = ["d/a", "d/sub/b", "d/sub/deep/er/c", "d/sub2/e", "d2/c", "top", "x/y/z/w"]
    archive.put_objects(bucket, {key: b"1" for key in keys})
    fs = fs_over(archive, tmp_path)
    sync(fs.loop, fs.catalogs.catalogs, bucket)  # the bucket's catalog lookup, before
    for path in (bucket, f"{bucket}/d", f"{bucket}/d/sub", f"{bucket}/x/y"):
        for detail in (False, True):
            archive.requests.clear()
            got = fs.find(path, withdirs=True, detail=detail)
            assert archive.requests.counts() == {"LIST": 1}, path
            walked = sync(fs.loop, AsyncFileSystem._find, fs, path, withdirs=True, detail=detail)
            if path == bucket:  # s3fs leaves the bucket out of its own whole-depth find
                walked = (
                    {n: e for n, e in walked.items() if n != bucket}
                    if detail
                    else [n for n in walked if n != bucket]
                )
            if detail:
                assert {n: e["type"] for n, e in got.items()} == {
                    n: e["type"] for n, e in walked.items()
                }, path
                assert all(got[n]["size"] == e["size"] for n, e in walked.items() if n in got)
            else:
                assert got == walked, path


def test_rm_recursive_returns_the_removed_paths(tree: ArchiveFileSystem, bucket: str) -> None:
    removed = tree.rm(f"{bucket}/d", recursive=True)
    # s3fs's answer: every path it expanded (the files, and the folders it walked)
    assert {f"{bucket}/d/a", f"{bucket}/d/sub/b"} <= set(removed)
    assert all(p.startswith(f"{bucket}/d") for p in removed)
    assert not tree.exists(f"{bucket}/d/a")


def test_rmdir_removes_an_empty_bucket_and_refuses_a_full_one(
    archive: EmulatedArchive, bucket: str, tmp_path: Path
) -> None:
    archive.put_objects(bucket, {"x": b"1"})
    fs = fs_over(archive, tmp_path)
    with pytest.raises(OSError):  # noqa: PT011 - s3fs raises a bare OSError (BucketNotEmpty)
        fs.rmdir(bucket)
    fs.rm(f"{bucket}/x")
    fs.rmdir(bucket)
    assert bucket not in fs.ls("", refresh=True)


def test_writes_without_autocommit_and_in_a_transaction_wait_for_commit(
    tree: ArchiveFileSystem, bucket: str
) -> None:
    f = tree.open(f"{bucket}/later", "wb", autocommit=False)
    f.write(b"data")
    f.close()
    assert not tree.exists(f"{bucket}/later")
    f.commit()
    tree.invalidate_cache()
    assert tree.cat(f"{bucket}/later") == b"data"
    with tree.transaction:
        with tree.open(f"{bucket}/in-tx", "wb") as g:
            g.write(b"tx")
        assert not tree.exists(f"{bucket}/in-tx")
    tree.invalidate_cache()
    assert tree.cat(f"{bucket}/in-tx") == b"tx"


def test_the_targets_own_calls_answer_as_s3fs(
    archive: EmulatedArchive, bucket: str, tmp_path: Path
) -> None:
    import datetime

    client = archive.client()
    client.put_object(Bucket=bucket, Key="f", Body=b"abc", Metadata={"owner": "me"})
    fs = fs_over(archive, tmp_path)
    path = f"{bucket}/f"
    assert fs.getxattr(path, "owner") == "me"
    assert fs.metadata(path) == {"owner": "me"}
    fs.setxattr(path, owner="you")
    assert fs.getxattr(path, "owner") == "you"
    with fs.open(path) as f:
        assert f.metadata() == {"owner": "you"}
        assert f.getxattr("owner") == "you"
        assert f.url().startswith(archive.endpoint_url)
    fs.put_tags(path, {"k": "v"})
    assert fs.get_tags(path) == {"k": "v"}
    assert fs.url(path).startswith(archive.endpoint_url)
    assert isinstance(fs.modified(path), datetime.datetime)
    with pytest.raises(IsADirectoryError):
        fs.modified(bucket)
    # as s3fs: a version only on a version-aware filesystem
    assert fs.split_path(f"s3://{bucket}/a/b?versionId=v1") == (bucket, "a/b", None)
    assert fs.split_path(bucket) == (bucket, "", None)
    assert fs.is_bucket_versioned(bucket) is False
    assert fs.list_multipart_uploads(bucket) == []
    before = fs.checksum(path)
    client.put_object(Bucket=bucket, Key="f", Body=b"changed")
    assert fs.checksum(path, refresh=True) != before
    fs.pipe(f"{bucket}/p1", b"12345" * 1024 * 1024)  # parts of at least 5 MiB
    fs.pipe(f"{bucket}/p2", b"67")
    fs.merge(f"{bucket}/joined", [f"{bucket}/p1", f"{bucket}/p2"])
    assert fs.cat(f"{bucket}/joined")[-3:] == b"567"


def test_touch_of_an_existing_object_without_truncate_is_a_value_error(
    tree: ArchiveFileSystem, bucket: str
) -> None:
    with pytest.raises(ValueError, match="touching existent"):
        tree.touch(f"{bucket}/top", truncate=False)
    assert tree.cat(f"{bucket}/top") == b"3"


def test_missing_aws_credentials_are_access_denied_and_botocores_no_credentials(
    archive: EmulatedArchive, bucket: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import pickle

    from botocore.exceptions import NoCredentialsError

    from archivefs.errors import AccessDeniedError

    for name in [k for k in __import__("os").environ if k.startswith("AWS_")]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent")
    monkeypatch.setenv("AWS_CONFIG_FILE", "/nonexistent")
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    fs = ArchiveFileSystem(
        target_protocol="s3",
        target_options={"client_kwargs": {"endpoint_url": archive.endpoint_url}},
        journal=str(tmp_path / "journal.sqlite"),
        skip_instance_cache=True,
    )
    with pytest.raises(NoCredentialsError) as raised:
        fs.ls(bucket)
    assert isinstance(raised.value, AccessDeniedError)
    assert isinstance(raised.value, PermissionError)
    assert "no usable AWS credentials" in str(raised.value)
    assert str(pickle.loads(pickle.dumps(raised.value))) == str(raised.value)


@pytest.mark.parametrize(
    "fault",
    [
        {"kind": "error"},  # 500 InternalError
        {"kind": "reset", "after_bytes": 0},  # connection dropped before any answer
        {"kind": "reset", "after_bytes": 200},  # a page cut off mid-body
    ],
)
def test_a_transient_fault_on_a_listing_page_is_retried(
    archive: EmulatedArchive, bucket: str, tmp_path: Path, fault: dict[str, Any]
) -> None:
    """s3fs retries a failed listing page; so does archivefs (botocore's retries, the one
    retry layer): find answers whole, with one more LIST."""
    archive.put_objects(bucket, {f"k{i:02}": b"x" for i in range(30)})
    fs = fs_over(archive, tmp_path)
    archive.requests.clear()
    if fault["kind"] == "error":
        archive.faults.error(count=1, ops=["LIST"])
    else:
        archive.faults.reset_connection(count=1, ops=["LIST"], after_bytes=fault["after_bytes"])
    assert fs.find(bucket) == [f"{bucket}/k{i:02}" for i in range(30)]
    assert archive.requests.count("LIST") == 2


def test_listing_entries_carry_key_and_size_and_a_bucket_does_not_open(
    tree: ArchiveFileSystem, bucket: str
) -> None:
    from archivefs.errors import InvalidPathError

    entries = {e["name"]: e for e in tree.ls(f"{bucket}/d", detail=True)}
    assert entries[f"{bucket}/d/a"]["Key"] == f"{bucket}/d/a"
    assert entries[f"{bucket}/d/a"]["Size"] == 1
    assert entries[f"{bucket}/d/sub"]["Key"] == f"{bucket}/d/sub"
    assert tree.ls(f"{bucket}/top", detail=True)[0]["Key"] == f"{bucket}/top"
    assert tree.find(bucket, detail=True)[f"{bucket}/top"]["Size"] == 1
    for mode in ("rb", "wb"):
        with pytest.raises(ValueError, match="is a bucket") as raised:
            tree.open(bucket, mode)
        assert isinstance(raised.value, InvalidPathError)


def test_info_describes_content_type_and_version_as_s3fs(
    archive: EmulatedArchive, bucket: str, tmp_path: Path, versioned: tuple[str, str, str]
) -> None:
    path, _, second = versioned
    client = archive.client()
    client.put_object(Bucket=bucket, Key="doc.json", Body=b"{}", ContentType="application/json")
    fs = fs_over(archive, tmp_path)
    info = fs.info(f"{bucket}/doc.json")  # a HEAD: nothing listed yet
    assert info["ContentType"] == "application/json"
    assert info["Key"] == info["name"]  # as a listed entry has them
    assert info["Size"] == 2
    assert fs.info(path)["VersionId"] == second
    listed = fs.ls(f"{bucket}/doc.json", detail=True)[0]
    assert "ContentType" not in listed  # a listing does not describe each object, as s3fs's
    assert listed["Key"] == listed["name"] == info["name"]
    assert listed["Size"] == info["size"] == 2


def test_buckets_listed_with_archivefs_options_and_versioning_switched_on(
    archive: EmulatedArchive, bucket: str, tmp_path: Path
) -> None:
    fs = fs_over(archive, tmp_path)
    assert bucket in fs.ls("", probe_bundles=False, refresh=True)
    fs.make_bucket_versioned(bucket)
    assert fs.is_bucket_versioned(bucket) is True
    arn = "arn:aws:s3:region:123456789012:accesspoint/my-access-point-name"
    assert fs.split_path(f"s3://{arn}/my/key") == (arn, "my/key", None)


def test_find_and_glob_from_the_root_are_value_errors(tree: ArchiveFileSystem) -> None:
    for walk in (lambda: tree.find(""), lambda: tree.glob("*"), lambda: tree.find("s3://")):
        with pytest.raises(ValueError, match="every bucket"):
            walk()


@pytest.mark.parametrize("policy", ["raise", "restore", "wait"])
def test_an_archived_old_version_is_refused_and_nothing_is_restored_in_its_place(
    archive: EmulatedArchive, bucket: str, tmp_path: Path, policy: str
) -> None:
    """A read of a non-current version that is archived never restores the current version
    (a paid restore of the wrong object): it says which version and how to restore it."""
    from archivefs.errors import ObjectArchivedError

    client = archive.client()
    client.put_bucket_versioning(Bucket=bucket, VersioningConfiguration={"Status": "Enabled"})
    first = client.put_object(Bucket=bucket, Key="obj", Body=b"one", StorageClass="GLACIER")
    client.put_object(Bucket=bucket, Key="obj", Body=b"second", StorageClass="GLACIER")
    fs = ArchiveFileSystem(
        target_protocol="s3",
        target_options={**archive.storage_options(), "version_aware": True},
        journal=str(tmp_path / "journal.sqlite"),
        skip_instance_cache=True,
        on_archived=policy,
        wait_timeout=60,
    )
    archive.requests.clear()
    for read in (
        lambda: fs.cat_file(f"{bucket}/obj", version_id=first["VersionId"]),
        lambda: fs.open(f"{bucket}/obj?versionId={first['VersionId']}").read(),
        lambda: fs.get_file(f"{bucket}/obj?versionId={first['VersionId']}", str(tmp_path / "o")),
    ):
        with pytest.raises(ObjectArchivedError) as info:
            read()
        message = str(info.value)
        assert first["VersionId"] in message, message
        assert "--version-id" in message, message  # the fix: restore that version by hand
    assert archive.requests.count("RestoreObject") == 0


def test_get_file_of_a_version_copies_that_version(
    archive: EmulatedArchive, tmp_path: Path, versioned: tuple[str, str, str]
) -> None:
    """``get_file`` honours a version as ``cat_file`` and ``open`` do (and as s3fs does)."""
    path, first, _ = versioned
    fs = fs_over(archive, tmp_path, version_aware=True)
    fs.get_file(f"{path}?versionId={first}", str(tmp_path / "a"))
    fs.get_file(path, str(tmp_path / "b"), version_id=first)
    fs.get_file(path, str(tmp_path / "c"))
    assert (tmp_path / "a").read_bytes() == (tmp_path / "b").read_bytes() == b"one"
    assert (tmp_path / "c").read_bytes() == b"second"


def test_a_key_that_is_also_a_folder_finds_and_globs_with_its_info(
    archive: EmulatedArchive, bucket: str, tmp_path: Path
) -> None:
    """S3 holds "x" and "x/y/z/w" at once. fsspec's walk answers a find of "x" that finds
    nothing within its depth as {"x": {}}, and its glob then failed on info["type"]."""
    archive.put_objects(bucket, {"x": b"1", "x/y/z/w": b"22"})
    fs = fs_over(archive, tmp_path)
    found = fs.find(f"{bucket}/x", maxdepth=1, detail=True)
    assert list(found) == [f"{bucket}/x"]
    assert found[f"{bucket}/x"]["type"] == "file"
    assert found[f"{bucket}/x"]["size"] == 1
    assert fs.glob(f"{bucket}/x/**", maxdepth=2, withdirs=False) == []
    assert fs.glob(f"{bucket}/x/**", withdirs=False) == [f"{bucket}/x/y/z/w"]
    assert fs.find(f"{bucket}/x") == [f"{bucket}/x/y/z/w"]


def test_url_is_the_targets_own_call(provider: Provider) -> None:
    """``fs.url`` is the target's ``url`` with what the caller gave, and the URL reads the
    object: gcsfs's takes no ``expires`` (archivefs passed one: ``TypeError``); s3fs's and
    adlfs's do; ocifs has none."""
    import urllib.request

    seed(provider, {"run/a.txt": b"0123456789"}, provider.spec.hot_class)
    path = f"{provider.bucket}/run/a.txt"
    target, fs = provider.raw(), provider.fs()
    if not hasattr(target, "url"):
        with pytest.raises(NotImplementedError, match="has no url"):
            fs.url(path)
        return
    url = fs.url(path)
    assert url.split("?")[0] == target.url(path).split("?")[0]
    with urllib.request.urlopen(url) as response:
        assert response.read() == b"0123456789"
    if "expires" in inspect.signature(target.url).parameters:
        assert fs.url(path, expires=60).split("?")[0] == url.split("?")[0]
    else:  # as the target: the keyword it does not take is refused
        with pytest.raises(TypeError, match="expires"):
            fs.url(path, expires=60)


# what each target's file carries (besides metadata) that code written for it reads
FILE_ATTRIBUTES = {"azure": ("container_name", "blob"), "gcs": ("bucket", "key", "content_type")}


def test_an_open_files_attributes_are_the_target_files(provider: Provider) -> None:
    """A file opened for reading carries what the target's own file carries where code
    reads it: adlfs's and gcsfs's ``metadata`` is the blob's dict (archivefs's was s3fs's
    bound method), adlfs's ``container_name``/``blob``, gcsfs's ``content_type``..."""
    seed(provider, {"run/a.txt": b"0123456789"}, provider.spec.hot_class)
    path = f"{provider.bucket}/run/a.txt"
    target = provider.raw()
    if hasattr(target, "setxattrs"):  # adlfs, gcsfs: user metadata to compare
        target.setxattrs(path, owner="me")
    fs = provider.fs()
    names = FILE_ATTRIBUTES.get(provider.name, ("bucket", "key"))
    with target.open(path, "rb") as theirs, fs.open(path, "rb") as ours:
        for name in names:
            assert getattr(ours, name) == getattr(theirs, name), name
        own = getattr(theirs, "metadata", None)
        if callable(own):  # s3fs's file: a method, answering as the filesystem's
            assert ours.metadata() == fs.metadata(path)
        elif own is not None:  # adlfs's, gcsfs's: the object's user metadata
            assert ours.metadata == own
            assert ours.metadata.get("owner") == "me"
        assert ours.read() == theirs.read()
        ours.metadata = theirs.metadata = {"k": "v"}  # as the target's file takes a new one
        assert ours.metadata == theirs.metadata == {"k": "v"}


# per target: public attributes code written for it reads, and attributes holding a
# credential (never forwarded)
TARGET_ATTRIBUTES = {
    "s3": ("anon", "version_aware", "endpoint_url", "client_kwargs", "config_kwargs",
           "s3_additional_kwargs", "requester_pays", "use_ssl", "default_block_size",
           "default_cache_type", "default_fill_cache", "cache_regions", "fixed_upload_size"),
    "azure": ("anon", "version_aware", "account_name", "service_client", "max_concurrency",
              "blocksize", "location_mode", "assume_container_exists", "default_cache_type",
              "default_fill_cache", "kwargs"),
    "gcs": ("project", "requester_pays", "consistency", "default_location", "cache_timeout",
            "requests_timeout", "session_kwargs", "version_aware", "timeout"),
    "oracle": ("region", "default_namespace", "default_tenancy", "compartment_id",
               "oci_client", "profile", "config_kwargs", "oci_additional_kwargs",
               "default_block_size", "default_cache_type", "default_cache_options"),
}  # fmt: skip
SECRET_ATTRIBUTES = {
    "s3": ("key", "secret", "token"),
    "azure": ("account_key", "connection_string", "sas_token", "client_secret", "credential"),
    "gcs": ("credentials",),
    "oracle": ("config",),
}


def test_the_targets_public_attributes_are_forwarded(provider: Provider) -> None:
    """Code written for the target reads its attributes on the wrapper (s3fs's
    ``endpoint_url``, adlfs's ``service_client``, gcsfs's ``project``, ocifs's
    ``region``...): the target's own values; its credentials stay out of reach."""
    fs = provider.fs()
    target = unwrapped(fs.fs)  # ocifs's, inside fsspec's async wrapper
    kind = "s3" if provider.name == "rgw" else provider.name
    for name in TARGET_ATTRIBUTES[kind]:
        assert getattr(fs, name) is getattr(target, name), name
    for name in SECRET_ATTRIBUTES[kind]:
        assert hasattr(target, name), name
        assert not hasattr(fs, name), name
    with pytest.raises(AttributeError):
        fs.region = "elsewhere"  # read-only: archivefs changes none of them
