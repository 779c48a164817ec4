"""The attachment fetcher seam: `fetch(url) -> FetchedFile`, or `AttachmentError`.

`HttpxFetcher` is the real one: http(s) only, the whole download bounded by a
timeout, the body streamed and abandoned past the size cap, and only `image/*`
accepted. Nothing of the URL ever becomes a file name: the store names files by the
SHA-256 of their bytes.

Where it may connect: every connection (the first and each redirect's) resolves the
host itself and checks every address before connecting, then connects to the checked
address, so neither a redirect nor a name resolving elsewhere reaches inside.
Loopback is refused unless the QQ client serves its images on this host
(`attachment_allow_loopback`); link-local, private and other non-global ranges unless
`attachment_allow_private`; multicast always.
"""

from __future__ import annotations

import asyncio
import functools
import ipaddress
import socket
import ssl
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Protocol, cast
from urllib.parse import urlsplit

import httpcore
import httpx

from memory_core.errors import AttachmentError


@dataclass(frozen=True, slots=True)
class FetchedFile:
    data: bytes
    mime: str


class AttachmentFetcher(Protocol):
    async def fetch(self, url: str) -> FetchedFile:
        """Download one image; raise `AttachmentError` for any refusal or failure."""
        ...

    async def aclose(self) -> None: ...


def address_refusal(address: str, *, allow_loopback: bool, allow_private: bool) -> str | None:
    """Pure: why a fetch may not connect to `address` (an IP), or None."""
    ip = ipaddress.ip_address(address)
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    if ip.is_loopback or ip.is_unspecified:
        kind, allowed = "loopback", allow_loopback
    elif ip.is_multicast:
        kind, allowed = "multicast", False
    elif ip.is_link_local:
        kind, allowed = "link-local", allow_private
    elif not ip.is_global:
        kind, allowed = "private", allow_private
    else:
        return None
    return None if allowed else f"{address} is a {kind} address"


class _CheckedBackend(httpcore.AsyncNetworkBackend):
    """httpcore's network backend, resolving and checking each host before connecting."""

    def __init__(self, *, allow_loopback: bool, allow_private: bool) -> None:
        # httpcore's export is a stand-in class when anyio is missing; httpx needs anyio.
        self.inner = cast("httpcore.AsyncNetworkBackend", httpcore.AnyIOBackend())
        self.allow = {"allow_loopback": allow_loopback, "allow_private": allow_private}

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,  # noqa: ASYNC109 (httpcore's signature)
        local_address: str | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        addresses = await _resolve(host, port)
        for address in addresses:
            reason = address_refusal(address, **self.allow)
            if reason is not None:
                raise AttachmentError(
                    f"refused: {reason}" + (f" ({host})" if host != address else "")
                )
        if not addresses:
            raise AttachmentError(f"{host} resolves to nothing")
        # TLS still checks the certificate against the URL's host name (httpcore passes
        # it separately), so connecting to the checked address changes nothing else.
        return await self.inner.connect_tcp(
            addresses[0], port, timeout, local_address, socket_options
        )

    async def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,  # noqa: ASYNC109 (httpcore's signature)
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        raise AttachmentError("unix sockets are not fetched")

    async def sleep(self, seconds: float) -> None:
        await self.inner.sleep(seconds)


async def _resolve(host: str, port: int) -> list[str]:
    try:
        return [str(ipaddress.ip_address(host.strip("[]")))]  # a literal: nothing to resolve
    except ValueError:
        pass
    try:
        infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except OSError as exc:
        raise AttachmentError(f"cannot resolve {host}: {exc}") from exc
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


@functools.cache
def _ssl_context() -> ssl.SSLContext:
    """One verifying context per process, shared by every fetcher: loading the CA
    bundle takes a tenth of a second or more, and each core opens a fetcher."""
    return httpx.create_ssl_context()


class HttpxFetcher:
    def __init__(
        self,
        *,
        max_bytes: int,
        timeout_s: float,
        allow_loopback: bool = False,
        allow_private: bool = False,
        client: httpx.AsyncClient | None = None,
    ) -> None:
        self.max_bytes = max_bytes
        self.timeout_s = timeout_s
        if client is not None:
            self._client = client
            return
        transport = httpx.AsyncHTTPTransport(verify=_ssl_context())
        # httpx takes no network backend, so its pool is rebuilt with the checked one.
        transport._pool = httpcore.AsyncConnectionPool(  # pyright: ignore[reportPrivateUsage]
            ssl_context=_ssl_context(),
            network_backend=_CheckedBackend(
                allow_loopback=allow_loopback, allow_private=allow_private
            ),
        )
        self._client = httpx.AsyncClient(
            timeout=httpx.Timeout(timeout_s),
            follow_redirects=True,
            max_redirects=3,
            headers={"User-Agent": "yuji-archive/1"},
            transport=transport,
            trust_env=False,  # a proxy would connect for us, past the address check
        )

    async def fetch(self, url: str) -> FetchedFile:
        if urlsplit(url).scheme not in ("http", "https"):
            raise AttachmentError("only http(s) URLs are fetched")
        try:
            # The total deadline also stops a server that drips one byte at a time.
            async with asyncio.timeout(self.timeout_s):
                return await self._download(url)
        except TimeoutError as exc:
            raise AttachmentError(f"timed out after {self.timeout_s:g}s") from exc
        except httpx.HTTPError as exc:
            raise AttachmentError(f"transport error: {type(exc).__name__}") from exc

    async def _download(self, url: str) -> FetchedFile:
        async with self._client.stream("GET", url) as response:
            if response.status_code != 200:
                raise AttachmentError(f"HTTP {response.status_code}")
            mime = response.headers.get("content-type", "").split(";")[0].strip().lower()
            if not mime.startswith("image/"):
                raise AttachmentError(f"not an image: {mime or 'no content-type'}")
            declared = response.headers.get("content-length", "")
            if declared.isdigit() and int(declared) > self.max_bytes:
                raise AttachmentError(f"too large: {declared} > {self.max_bytes} bytes")
            body = bytearray()
            async for chunk in response.aiter_bytes():
                body += chunk
                if len(body) > self.max_bytes:
                    raise AttachmentError(f"too large: over {self.max_bytes} bytes")
            return FetchedFile(bytes(body), mime)

    async def aclose(self) -> None:
        await self._client.aclose()
