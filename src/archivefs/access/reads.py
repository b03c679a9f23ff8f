"""Reads, with one counting point: plain objects through the read policy, members coalesced.

Every byte fetched from a store and every byte handed to a caller is counted
here (``read_stats``), and nowhere else under ``access/``: what read
amplification the estimates use is measured in one place.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import TYPE_CHECKING, Any, cast

from fsspec.asyn import _run_coros_in_chunks

from archivefs.access.approval import Approval
from archivefs.access.bundles import BundleReads, checked_member, member_range
from archivefs.access.hot import HotCopies
from archivefs.access.parts import Parts
from archivefs.access.policy import ReadPolicy
from archivefs.catalog.view import Location
from archivefs.entries import state_from_entry
from archivefs.errors import ArchiveError, ObjectNotFoundError
from archivefs.hints import readable_state
from archivefs.member_reads import CONCURRENCY as READ_CONCURRENCY
from archivefs.member_reads import Block, Part, plan_blocks
from archivefs.model import ObjectState
from archivefs.s3compat import split_version

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable


PLAIN_READS_AT_ONCE = 256
"""Plain-object reads of one ``cat_ranges`` in flight at once, unless the caller (or the
filesystem's ``batch_size``) says: a few connection pools' worth. Past the pool a read only
waits, yet each adds its set-up to every turn of the event loop: 1,000 at once stalled the
loop for seconds, past the 5 s a connection has to open."""


class Reads:
    """``cat_file``, ``cat_ranges`` and file-block reads of plain objects and members."""

    def __init__(
        self,
        parts: Parts,
        policy: ReadPolicy,
        bundles: BundleReads,
        hot: HotCopies,
        approval: Approval,
        generic_cat_ranges: Callable[..., Awaitable[list[Any]]],
    ) -> None:
        self.parts = parts
        self.policy = policy
        self.bundles = bundles
        self.hot = hot
        self.approval = approval
        self.generic_cat_ranges = generic_cat_ranges  # fsspec's: every range on its own
        # plain objects whose reads the budget has seen: the state of those that bill a
        # retrieval fee (each GET of them is charged), None for the others
        self._fee_checked: dict[str, ObjectState | None] = {}

    def delivered(self, size: int) -> None:
        """Count ``size`` bytes handed to a caller (a file's ``read``)."""
        self.parts.read_stats.delivered(size)

    async def member(self, where: Location) -> bytes:
        """A whole member (one ranged read of its bundle, CRC-checked), counted as fetched."""
        data = await self.bundles.read_member(where, None, None)
        self.parts.read_stats.fetched(len(data))
        return data

    async def member_part(self, where: Location, start: int, end: int) -> bytes:
        """Bytes ``[start, end)`` of a member, from a promoted copy of its bundle if the
        hot store has one, else from its bundle (identity-checked; CRC-checked when
        whole), counted as fetched."""
        data = await self.bundles.read_member(where, start, end)
        self.parts.read_stats.fetched(len(data))
        return data

    async def cat_file(
        self, path: str, start: int | None = None, end: int | None = None, **kwargs: Any
    ) -> bytes:
        data = await self.fetch(path, start, end, **kwargs)
        self.parts.read_stats.delivered(len(data))
        return data

    async def fetch(
        self, path: str, start: int | None = None, end: int | None = None, **kwargs: Any
    ) -> bytes:
        """One read from the hot store, a bundle, or the cold store (counted as fetched)."""
        pieces = await self._fetch_uncounted(path, start, end, False, **kwargs)
        data = pieces[0] if len(pieces) == 1 else b"".join(pieces)
        self.parts.read_stats.fetched(len(data))
        return data

    async def fetch_pieces(self, path: str, start: int, end: int, **kwargs: Any) -> list[bytes]:
        """:meth:`fetch` of ``[start, end)``, its bytes as they arrived: where one ranged GET
        of a plain object brings them and the store keeps a body's pieces
        (``get_range_pieces``), pieces of at most a MiB, never joined into one string
        (a reader that slices them, as a file's readahead does, saves a copy of every
        byte); one piece otherwise. Counted as fetched, as every read."""
        pieces = await self._fetch_uncounted(path, start, end, True, **kwargs)
        self.parts.read_stats.fetched(sum(map(len, pieces)))
        return pieces

    async def _fetch_uncounted(
        self, path: str, start: int | None, end: int | None, pieces: bool, **kwargs: Any
    ) -> list[bytes]:
        path, version = split_version(self.parts.strip(path), kwargs.pop("version_id", None))
        if _empty_range(start, end):
            return [b""]  # e.g. readline() at the end of a file: no backwards range is sent
        if version is not None:  # that version, from the store (hot copies are current ones)
            versioned: bytes = await self.policy.guarded_version(
                path,
                version,
                lambda: self.parts.fs._cat_file(path, start=start, end=end, version_id=version),
            )
            return [versioned]
        hot = await self.hot.store()
        if hot is not None:
            hot_fs, root = hot
            try:
                data: bytes = await hot_fs._cat_file(
                    self.hot.path(root, path), start=start, end=end
                )
                return [data]
            except FileNotFoundError:
                pass

        async def read() -> list[bytes]:
            where = await self.parts.catalogs.locate(path)
            if where.member is not None:
                return [await self.bundles.read_member(where, start, end)]
            return await self.read_object(path, start, end, where, pieces, **kwargs)

        found: list[bytes] = await self.parts.or_unregistered(path, read)
        return found

    async def read_object(
        self,
        path: str,
        start: int | None,
        end: int | None,
        where: Location,
        pieces: bool,
        **kwargs: Any,
    ) -> list[bytes]:
        """A plain object from the cold store, through the read policy, in one piece; with
        ``pieces``, a range of it in the pieces its GET brought them where the store keeps
        them (``get_range_pieces``) and no budget charges each GET of it.

        s3fs sends a HEAD before every whole-object read, for the size (it fetches
        objects above one block in parallel parts), unless its own listing cache
        knows it, which archivefs's listings do not fill. So: a whole read of an
        object whose size and state are known (a listing, the catalog, a restore
        seen finished) is one GET; otherwise archivefs sends that HEAD itself and
        keeps the state, so an archived object costs the one HEAD that says so,
        not a HEAD, a refused GET and another HEAD.
        """
        sizes = start is None and end is None and _sizes_whole_reads(self.parts.fs, kwargs)
        # with a budget or hook, the first read of an object on any store (whole or ranged)
        # learns its state once, so a retrieval fee is charged before each GET is sent
        guard = self.parts.hooks.wants_estimate
        fee_state = self._fee_checked.get(path) if guard else None
        if sizes or (guard and path not in self._fee_checked):
            state = self.known_state(path, where)
            fresh = None
            if state is None:
                with contextlib.suppress(ObjectNotFoundError):
                    state = fresh = await self.parts.store.head(path)
            if state is not None and not state.readable:
                await self.policy.apply(path, None, fresh)  # raises, or returns once it reads
            elif state is not None and guard:
                fee_state = state if self.approval.bills_reads(state) else None
                self._fee_checked[path] = fee_state
            if sizes and (state is None or state.size <= self.parts.fs.default_block_size):
                # one GET, no HEAD (larger objects: s3fs's parallel parts); for an object the
                # HEAD did not find, the GET's error says whether the key or the bucket is missing
                kwargs["max_concurrency"] = 1
        if fee_state is not None and sizes:
            kwargs["max_concurrency"] = 1  # one billed GET, whatever the size
        get_range_pieces = getattr(self.parts.store, "get_range_pieces", None)
        streams = pieces and fee_state is None and not kwargs and _explicit_range(start, end)
        if get_range_pieces is not None and streams:  # one GET, its body's pieces as they came
            first, last = int(start or 0), int(end or 0)
            streamed: list[bytes] = await self.policy.guarded(
                path, lambda: get_range_pieces(self.read_path(path), first, last)
            )
            return streamed
        if _explicit_range(start, end) and getattr(self.parts.store, "reads_ranges", False):
            # the store's one ranged request, where the fsspec library's cat_file is not one
            first, last = int(start or 0), int(end or 0)

            async def ranged() -> bytes:
                return (await self.parts.store.get_range(self.read_path(path), first, last)).data

            send: Callable[[], Awaitable[bytes]] = ranged
        else:

            def send() -> Awaitable[bytes]:
                return cast(
                    "Awaitable[bytes]",
                    self.parts.fs._cat_file(self.read_path(path), start=start, end=end, **kwargs),
                )

        if fee_state is not None:  # every GET of it is billed: reserved before it is sent
            send = self._charged(fee_state, start, end, send)
        data: bytes = await self.policy.guarded(path, send)
        return [data]

    def _charged(
        self,
        state: ObjectState,
        start: int | None,
        end: int | None,
        send: Callable[[], Awaitable[bytes]],
    ) -> Callable[[], Awaitable[bytes]]:
        """``send``, with the GET's price (request and retrieval fee of the bytes asked)
        reserved from the budget before each try and what was not fetched given back."""

        async def charged() -> bytes:
            asked = _range_length(state.size, start, end)
            cost = await asyncio.to_thread(self.approval.charge_read, state, asked)
            try:
                data = await send()
            except BaseException:
                await asyncio.to_thread(self.approval.refund_read, state, asked, 0, cost)
                raise
            if len(data) < asked:
                await asyncio.to_thread(self.approval.refund_read, state, asked, len(data), cost)
            return data

        return charged

    def read_path(self, path: str) -> str:
        """Where the store reads ``path`` from: on Azure with ``rehydrate="copy"``, its
        rehydrated copy once the store has seen it online; else ``path`` itself. Called
        at each try, so a read retried after the read policy finds the copy."""
        read_path = getattr(self.parts.store, "read_path", None)
        return path if read_path is None else str(read_path(path))

    def known_state(self, path: str, where: Location) -> ObjectState | None:
        """What this filesystem already knows of a plain object, without asking the store.

        Possibly stale, which costs nothing wrong: an object that turns out
        archived is refused and then goes through the read policy, and one
        believed archived is checked with a HEAD before the policy acts.
        """
        if where.catalog is not None and path in where.catalog.plain:
            catalog = where.catalog  # listed hot objects, in the provider's own hot class
            return ObjectState(path=path, size=catalog.plain[path], storage_class=catalog.hot_class)
        ready = readable_state(self.parts.store_scope, path)
        if ready is not None:
            return ready
        try:
            cached = self.parts.ls_from_cache(path)
        except FileNotFoundError:
            return None
        for entry in cached or []:
            if entry["name"] == path and entry.get("type") == "file" and "restore" in entry:
                return state_from_entry(entry)
        return None

    async def cat_members(
        self, wanted: list[tuple[int, Location, int | None, int | None]]
    ) -> dict[int, bytes | BaseException]:
        """Ranges of bundle members, coalesced: one ranged GET per block of adjacent members.

        ``wanted``: ``(index, location, start, end)`` with fsspec's start/end
        semantics inside each member. Returns index -> bytes, or the error for
        that member (the same errors, after the same checks, as single-member
        reads: the bundle's size and ETag, each member's length, and the CRC-32
        of each member read whole).
        """
        out: dict[int, bytes | BaseException] = {}
        where_of: dict[int, Location] = {}
        parts: list[tuple[str, Part]] = []
        for index, where, start, end in wanted:
            member = where.member
            assert member is not None
            lo, hi = member_range(member.length, start, end)
            where_of[index] = where
            if hi <= lo:
                out[index] = b""
            else:
                parts.append((member.bundle, Part(index, member.offset + lo, member.offset + hi)))
        semaphore = asyncio.Semaphore(min(self.parts.concurrency, READ_CONCURRENCY))

        async def fetch(block: Block) -> None:
            first = where_of[block.parts[0].index]
            try:
                async with semaphore:
                    data = await self.bundles.read_bundle(
                        first, block.start, block.end, others=len(block.parts) - 1
                    )
            except Exception as error:
                out.update((part.index, error) for part in block.parts)
                return
            self.parts.read_stats.fetched(len(data))
            for part in block.parts:
                member = where_of[part.index].member
                assert member is not None
                lo, hi = part.first - member.offset, part.last - member.offset
                try:
                    out[part.index] = checked_member(member, lo, hi, block.piece(part, data))
                except ArchiveError as error:
                    out[part.index] = error

        await asyncio.gather(*(fetch(b) for b in plan_blocks(parts)))
        return out

    async def cat(
        self,
        path: Any,
        paths: list[str],
        on_error: str = "raise",
        batch_size: int | None = None,
        **kwargs: Any,
    ) -> Any:
        """fsspec's ``cat`` of ``paths`` (``path`` expanded), read together by
        :meth:`cat_ranges`: the one result when ``path`` named one file, else a dict by
        path (``on_error``: ``"raise"`` the first error, ``"omit"`` or ``"return"`` it)."""
        out = await self.cat_ranges(
            paths, None, None, batch_size=batch_size, on_error="return", **kwargs
        )
        if on_error == "raise":
            failed = next((r for r in out if isinstance(r, BaseException)), None)
            if failed is not None:
                raise failed
        if len(paths) > 1 or isinstance(path, list) or paths[0] != self.parts.strip(path):
            return {
                k: v
                for k, v in zip(paths, out, strict=True)
                if on_error != "omit" or not isinstance(v, BaseException)
            }
        return out[0]

    async def cat_ranges(
        self,
        paths: list[str],
        starts: Any,
        ends: Any,
        max_gap: int | None = None,
        batch_size: int | None = None,
        on_error: str = "return",
        **kwargs: Any,
    ) -> list[Any]:
        """fsspec's ``cat_ranges``; ranges of bundle members are coalesced per bundle.

        Members of the same bundle that lie next to each other are fetched
        together, one ranged GET per up to 8 MiB (``archivefs.member_reads``),
        concurrently; everything else is read range by range as fsspec does.
        With ``max_gap`` or a hot store, fsspec's own: every range is read on its
        own (a promoted copy may answer any of them).
        """
        if max_gap is not None or await self.hot.store() is not None:
            out: list[Any] = await self.generic_cat_ranges(
                paths, starts, ends, max_gap=max_gap, batch_size=batch_size, on_error=on_error
            )
            return out
        if not isinstance(paths, list):
            raise TypeError("cat_ranges: paths must be a list.")
        starts = list(starts) if isinstance(starts, (list, tuple)) else [starts] * len(paths)
        ends = list(ends) if isinstance(ends, (list, tuple)) else [ends] * len(paths)
        if len(starts) != len(paths) or len(ends) != len(paths):
            raise ValueError("cat_ranges: paths, starts and ends must have the same length.")
        results: list[Any] = [None] * len(paths)
        members: list[tuple[int, Location, int | None, int | None]] = []
        plain: list[int] = []
        for index, raw in enumerate(paths):
            path = self.parts.strip(raw)
            try:
                where = await self.parts.catalogs.locate(path)
            except Exception as error:
                results[index] = error
                continue
            if where.member is not None:
                members.append((index, where, starts[index], ends[index]))
            else:
                plain.append(index)
        coros = [self.cat_file(paths[i], start=starts[i], end=ends[i], **kwargs) for i in plain]
        read = await _run_coros_in_chunks(
            coros,
            batch_size=batch_size or self.parts.batch_size or PLAIN_READS_AT_ONCE,
            nofiles=True,
            return_exceptions=True,
        )
        for index, value in zip(plain, read, strict=True):
            results[index] = value  # counted by _cat_file
        for index, value in (await self.cat_members(members)).items():
            results[index] = value
            if isinstance(value, bytes):
                self.parts.read_stats.delivered(len(value))
        if on_error != "return":
            failed = next((r for r in results if isinstance(r, BaseException)), None)
            if failed is not None:
                raise failed
        return results


def _explicit_range(start: int | None, end: int | None) -> bool:
    """``[start, end)`` given from the object's start, both ends known."""
    return start is not None and end is not None and 0 <= start < end


def _empty_range(start: int | None, end: int | None) -> bool:
    """A range that holds no byte whatever the object's size (both ends known, end <= start)."""
    return start is not None and end is not None and 0 <= end <= start


def _sizes_whole_reads(fs: Any, kwargs: dict[str, Any]) -> bool:
    """The cold store asks an object's size before reading it whole (s3fs, to split
    large objects into parallel parts), and the caller did not choose how to read it."""
    return hasattr(fs, "_cat_file_concurrent") and "max_concurrency" not in kwargs


def _range_length(size: int, start: int | None, end: int | None) -> int:
    """How many bytes a read of ``[start, end)`` of a ``size``-byte object asks for
    (fsspec's semantics: ``None`` for either end, negative from the end)."""
    first = 0 if start is None else (start if start >= 0 else max(0, size + start))
    last = size if end is None else (end if end >= 0 else max(0, size + end))
    return max(0, min(last, size) - min(first, size))
