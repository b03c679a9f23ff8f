"""Bundles on every provider: a tree bundled into a class, its catalog, member reads
after one restore per bundle or for one fee per bundle, and a damaged or missing bundle
refused by name."""

from __future__ import annotations

from typing import TYPE_CHECKING

import fsspec
import pytest

from archivefs.catalog import ByPrefix, Catalog
from archivefs.catalog.layout import catalog_dir
from archivefs.catalog.writer import bundle_tree
from archivefs.errors import BudgetExceededError, MissingBundleError, ObjectArchivedError
from tests.support.counts import assert_each_once
from tests.support.providers import (
    NO_FEES,
    NO_RESTORES,
    provider_params,
    quick_restores,
    reads,
    restore_calls,
    restore_requests,
    restores_started,
)
from tests.support.trees import flipped_byte_is_caught, make_tree

if TYPE_CHECKING:
    from pathlib import Path

    from tests.support.providers import Provider

pytestmark = pytest.mark.timeout(900)
BUNDLES = ".archivefs/bundles/"


def bundle_dirs(provider: Provider, tmp_path: Path, klass: str, n: int) -> dict[str, bytes]:
    """``n`` files in d0/, d1/, d2/ bundled (one bundle per directory) into ``klass``
    below ``<bucket>/k``; checks the catalog; returns member path -> bytes."""
    src = tmp_path / "src"
    files = {f"d{i % 3}/f{i:03d}.dat": f"member {i} ".encode() * 40 for i in range(n)}
    for name, data in files.items():
        (src / name).parent.mkdir(parents=True, exist_ok=True)
        (src / name).write_bytes(data)
    raw, dest = provider.raw(), f"{provider.bucket}/k"
    bundle_tree(fsspec.filesystem("file"), str(src), raw, dest, policy=ByPrefix(depth=1),
                storage_class=klass)  # fmt: skip
    catalog = Catalog.load(raw, catalog_dir(dest))
    assert len(catalog.bundles) == 3  # one per directory
    fs = provider.fs()
    for key, bundle in catalog.bundles.items():
        assert bundle.storage_class.value == klass  # parsed in the destination's names
        assert fs.info(key)["storage_class"] == klass  # and stored in it
    provider.server.requests.clear()
    return {f"{dest}/{name}": data for name, data in files.items()}


@pytest.mark.parametrize("provider", provider_params(skip=NO_RESTORES), indirect=True)
def test_members_are_restored_as_their_bundle_then_read(provider: Provider, tmp_path: Path) -> None:
    quick_restores(provider)
    files = bundle_dirs(provider, tmp_path, provider.spec.chunk_class, 60)
    dest = f"{provider.bucket}/k"
    fs = provider.fs()
    with pytest.raises(ObjectArchivedError):
        fs.cat_file(f"{dest}/d0/f000.dat")

    result = fs.restore(f"{dest}/d1/", wait=True, timeout=600)
    assert len(result.plan) == 1  # 20 members, one group: their bundle
    assert restore_requests(provider) == 1
    assert fs.cat_file(f"{dest}/d1/f004.dat") == files[f"{dest}/d1/f004.dat"]
    calls = restore_calls(provider)
    fs.restore(f"{dest}/", wait=True, timeout=600)  # the two others, submitted together
    assert restore_calls(provider) - calls == provider.spec.restore_calls(2)
    assert restore_requests(provider, status=202) == 3  # one per bundle
    started = restores_started(provider)
    assert_each_once(started, [k for k in started if BUNDLES in k])
    assert len(started) == 3
    assert fs.cat(sorted(files)) == files


@pytest.mark.parametrize("provider", provider_params(skip=NO_FEES), indirect=True)
def test_members_in_a_fee_class_read_one_range_per_bundle_within_the_budget(
    provider: Provider, tmp_path: Path
) -> None:
    assert provider.spec.fee_class is not None
    files = bundle_dirs(provider, tmp_path, provider.spec.fee_class, 30)
    wanted = sorted(p for p in files if "/d1/" in p)
    with pytest.raises(BudgetExceededError, match=r"1 object\(s\) that bill a retrieval fee"):
        provider.fs(max_cost=0.0000001).cat(wanted)  # 10 members, one bundle: one fee read
    assert reads(provider, f"k/{BUNDLES}") == 0

    assert provider.fs(max_cost=0.01).cat(wanted) == {p: files[p] for p in wanted}
    assert reads(provider, f"k/{BUNDLES}") == 1  # adjacent members: one ranged read
    assert restore_requests(provider) == 0


def bundle_tree_hot(provider: Provider, tmp_path: Path) -> tuple[str, dict[str, bytes]]:
    files = make_tree(tmp_path / "src", 30)
    root = f"{provider.bucket}/a"
    bundle_tree(fsspec.filesystem("file"), str(tmp_path / "src"), provider.raw(), root,
                storage_class=provider.spec.hot_class)  # fmt: skip
    return root, files


# issue 33: a rewritten bundle is refused as not the bundle the catalog recorded
# (BundleChangedError) before its bytes are used, on every provider
@pytest.mark.parametrize("provider", provider_params(), indirect=True)
def test_a_rewritten_bundle_is_refused_before_its_bytes_are_used(
    provider: Provider, tmp_path: Path
) -> None:
    root, files = bundle_tree_hot(provider, tmp_path)
    assert all(b.etag for b in Catalog.load(provider.raw(), catalog_dir(root)).bundles.values())
    flipped_byte_is_caught(provider.fs(), provider.raw(), root, "obs05/f00005.dat", files)


# ... and a deleted bundle is a MissingBundleError naming it
@pytest.mark.parametrize("provider", provider_params(), indirect=True)
def test_a_missing_bundle_is_an_error_naming_it(provider: Provider, tmp_path: Path) -> None:
    root, files = bundle_tree_hot(provider, tmp_path)
    raw = provider.raw()
    catalog = Catalog.load(raw, catalog_dir(root))
    bundle_of = {n: catalog.lookup(f"{root}/{n}").bundle for n in files}  # type: ignore[union-attr]
    gone = bundle_of["obs07/f00007.dat"]
    raw.rm(gone)  # a lifecycle rule, an operator, a damaged pointer
    fs = provider.fs()
    member = f"{root}/obs07/f00007.dat"
    for read in (lambda: fs.cat_file(member), lambda: fs.cat_file(member, start=0, end=4)):
        with pytest.raises(MissingBundleError, match="bundle object does not exist") as info:
            read()
        assert not isinstance(info.value, FileNotFoundError)
        assert info.value.path == gone
    intact = sorted(n for n, b in bundle_of.items() if b != gone)
    assert intact  # members of the other bundles still read
    assert fs.cat_file(f"{root}/{intact[0]}") == files[intact[0]]
