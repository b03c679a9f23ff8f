"""Blob Batch framing for the emulated Azure archive: a batch body's sub-requests, and
each sub-response framed as Azure frames it (multipart/mixed of application/http parts)."""

from __future__ import annotations

import http.client
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class SubRequest:
    """One request inside a Blob Batch."""

    content_id: str
    method: str
    url: str
    headers: dict[str, str]


def batch_boundary(content_type: str) -> str | None:
    """The multipart boundary of a Blob Batch's ``Content-Type``; None if not multipart/mixed."""
    kind, _, params = content_type.partition(";")
    if kind.strip().lower() != "multipart/mixed":
        return None
    for param in params.split(";"):
        name, _, value = param.strip().partition("=")
        if name.lower() == "boundary" and value:
            return value.strip('"')
    return None


def parse_batch(body: bytes, boundary: str) -> list[SubRequest]:
    """The sub-requests of a Blob Batch body (multipart/mixed of application/http parts)."""
    subs: list[SubRequest] = []
    for index, raw in enumerate(body.split(f"--{boundary}".encode())[1:]):
        if raw.startswith(b"--"):
            break  # the closing delimiter
        mime, _, http_request = raw.strip(b"\r\n").partition(b"\r\n\r\n")
        mime_headers = _header_lines(mime.decode("latin-1").split("\r\n"))
        lines = http_request.decode("latin-1").split("\r\n")
        method, url, *_ = lines[0].split(" ")
        headers = _header_lines(lines[1:])
        content_id = next((v for k, v in mime_headers.items() if k.lower() == "content-id"), "")
        subs.append(SubRequest(content_id or str(index), method, url, headers))
    return subs


def _header_lines(lines: list[str]) -> dict[str, str]:
    headers: dict[str, str] = {}
    for line in lines:
        if not line:
            break
        name, _, value = line.partition(":")
        headers[name.strip()] = value.strip()
    return headers


def response_part(
    boundary: str, content_id: str, status: int, headers: list[tuple[str, str]], payload: bytes
) -> bytes:
    """One sub-response of a Blob Batch answer, as Azure frames it."""
    reason = http.client.responses.get(status, "")
    head = [
        f"--{boundary}",
        "Content-Type: application/http",
        f"Content-ID: {content_id}",
        "",
        f"HTTP/1.1 {status} {reason}",
        *(f"{k}: {v}" for k, v in headers if k.lower() != "content-length"),
        f"Content-Length: {len(payload)}",
        "",
        "",
    ]
    return "\r\n".join(head).encode("latin-1") + payload + b"\r\n"
