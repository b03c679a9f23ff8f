"""Bundle members read from their bundles: identity-checked ranged reads, CRC checks.

A member is one ranged read of the bundle the catalog recorded (its size, and
its ETag as ``If-Match``); a changed or missing bundle is damage (an
:class:`ArchiveError`), never absence.
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING

from archivefs.access.hot import HotCopies
from archivefs.access.parts import Parts
from archivefs.access.policy import ReadPolicy
from archivefs.catalog.bundle import check_member
from archivefs.catalog.view import Location
from archivefs.errors import (
    ArchiveError,
    BundleChangedError,
    ChecksumMismatchError,
    MissingBundleError,
    ObjectArchivedError,
    ObjectNotFoundError,
    RestoreInProgressError,
)
from archivefs.stores.base import RangeRead
from archivefs.stores.translate import is_precondition_failed

if TYPE_CHECKING:
    from archivefs.catalog.table import MemberInfo


MEMBER_PIECE = 64 * 2**20  # whole members and bundles: ranged reads of at most this many bytes


class BundleReads:
    """Reads of bundle members (uncounted: :class:`archivefs.access.reads.Reads` counts)."""

    def __init__(
        self,
        parts: Parts,
        policy: ReadPolicy,
        hot: HotCopies,
        verified_etags: dict[str, str],
    ) -> None:
        self.parts = parts
        self.policy = policy
        self.hot = hot
        self.verified_etags = verified_etags  # bundle key -> ETag proven by content hash

    async def read_member(self, where: Location, start: int | None, end: int | None) -> bytes:
        """A bundle member: one ranged read of its bundle, CRC-checked when read whole.

        Every read checks that the object answering at the bundle's key is the
        bundle the catalog recorded (its size, and its ETag where recorded), so
        a changed bundle or a damaged catalog never serves another member's bytes.
        """
        member, bundle = where.member, where.bundle
        assert member is not None
        assert bundle is not None
        lo, hi = member_range(member.length, start, end)
        first, last = member.offset + lo, member.offset + hi
        if hi <= lo:
            return b""
        hot = await self.hot.store()
        data: bytes | None = None
        if hot is not None:  # a promoted copy of the whole bundle
            hot_fs, root = hot
            try:
                data = await hot_fs._cat_file(
                    self.hot.path(root, member.bundle), start=first, end=last
                )
            except FileNotFoundError:
                data = None
        if data is None:
            data = await self.read_bundle(where, first, last)
        return checked_member(member, lo, hi, data)

    async def read_bundle(
        self, where: Location, first: int, last: int, *, others: int = 0
    ) -> bytes:
        """Bytes ``[first, last)`` of a member's bundle, from the bundle the catalog recorded.

        Identity: the answering object's size must be the recorded size, and its
        ETag the recorded ETag (sent as ``If-Match``); a 412 for an object that is
        gone (GCS's ``ifGenerationMatch`` in its emulator) is a missing bundle. A
        different ETag with the same content (e.g. after a copy onto itself, which
        re-computes a multipart ETag) is accepted once the whole object's SHA-256
        matches the catalog's.
        ``others``: how many more members this read serves (coalesced reads), named
        in the errors so that each of them says what was being read.
        """
        member, bundle = where.member, where.bundle
        assert member is not None
        assert bundle is not None
        etag = self.verified_etags.get(bundle.key, bundle.etag)
        try:
            got: RangeRead = await self.policy.guarded(
                bundle.key,
                lambda: self.parts.store.get_range(bundle.key, first, last, if_match=etag),
            )
        except (ObjectArchivedError, RestoreInProgressError) as error:
            raise error.in_context(f"(reading {_members(member, others)})") from error
        except ObjectNotFoundError as error:
            raise missing_bundle(member, where.root, others) from error
        except ArchiveError as error:
            if not is_precondition_failed(error) or etag is None:
                raise
            refused = error
        else:
            if got.total_size is not None and got.total_size != bundle.size:
                raise _changed_bundle(
                    member,
                    f"it has {got.total_size} bytes, the catalog recorded {bundle.size}",
                    others,
                )
            return got.data
        # outside the handler, so that the check's own errors are not read as the 412's
        try:
            same = await self.same_content(where)
        except ObjectNotFoundError as error:  # a pinned read of a deleted object can be a 412
            raise missing_bundle(member, where.root, others) from error
        if not same:
            raise _changed_bundle(
                member, "its ETag differs from the one recorded", others
            ) from refused
        return await self.read_bundle(where, first, last, others=others)

    async def same_content(self, where: Location) -> bool:
        """Whether the object now at the bundle's key has the recorded SHA-256 (read whole,
        once per new ETag); if so, its ETag is accepted for later reads."""
        bundle = where.bundle
        assert bundle is not None
        if set(bundle.sha256) == {"0"}:
            return False  # no content hash recorded (a catalog rebuilt from archived bundles)
        state = await self.parts.store.head(bundle.key)
        if state.size != bundle.size or state.etag is None:
            return False
        digest = hashlib.sha256()
        for lo in range(0, bundle.size, MEMBER_PIECE):
            hi = min(lo + MEMBER_PIECE, bundle.size)
            piece = await self.parts.store.get_range(bundle.key, lo, hi, if_match=state.etag)
            digest.update(piece.data)
        if digest.hexdigest() != bundle.sha256:
            return False
        self.verified_etags[bundle.key] = state.etag
        return True


def _members(member: MemberInfo, others: int) -> str:
    """'member 'a'' or, for a coalesced read, 'member 'a' and N others read with it'."""
    more = f" and {others} other member{'s' if others > 1 else ''} read with it" if others else ""
    return f"member {member.path!r}{more}"


def checked_member(member: MemberInfo, lo: int, hi: int, data: bytes) -> bytes:
    """``data`` as bytes ``[lo, hi)`` of ``member``: its length, and its CRC-32 when whole."""
    if len(data) != hi - lo:
        raise ChecksumMismatchError(
            f"member {member.path!r} should have {hi - lo} bytes here, the bundle gave "
            f"{len(data)} (truncated bundle, or a catalog that disagrees with it).",
            path=member.bundle,
            fix="rebuild the catalog from the bundles (`archivefs catalog rebuild`).",
        )
    if lo == 0 and hi == member.length:
        check_member(data, member.crc32, name=member.path, bundle=member.bundle)
    return data


def _changed_bundle(member: MemberInfo, why: str, others: int = 0) -> BundleChangedError:
    return BundleChangedError(
        f"the object at this key is not the bundle the catalog recorded ({why}); "
        f"{_members(member, others)} was not read from it.",
        path=member.bundle,
        fix="put the recorded bundle back, or rebuild the catalog from the bundles as they "
        "are now (`archivefs catalog rebuild`) if the change was intended.",
    )


def missing_bundle(member: MemberInfo, root: str | None, others: int = 0) -> MissingBundleError:
    return MissingBundleError(
        f"the catalog{f' of {root!r}' if root else ''} lists {_members(member, others)} in this "
        "bundle, but the bundle object does not exist: its members cannot be read "
        "(this is damage, not an absent file).",
        path=member.bundle,
        fix="put the bundle back (from a backup or an earlier object version); if it is gone "
        "for good, rebuild the catalog from the remaining bundles (`archivefs catalog rebuild"
        f" s3://{root}`), which drops its members."
        if root
        else "put the bundle back (from a backup or an earlier object version).",
    )


def member_range(length: int, start: int | None, end: int | None) -> tuple[int, int]:
    """fsspec's start/end semantics (negative from the end), clamped to the member."""
    lo = 0 if start is None else (length + start if start < 0 else start)
    hi = length if end is None else (length + end if end < 0 else end)
    return max(0, min(lo, length)), max(0, min(hi, length))
