"""An HTTP endpoint on 127.0.0.1 that answers every request with the same raw bytes, sent all
at once or one byte every ``every`` seconds: what no honest AWS endpoint sends (a dripping
answer, which botocore's per-read timeout never catches; a body no parser reads)."""

from __future__ import annotations

import socket
import threading
from collections.abc import Callable
from types import TracebackType


class RawEndpoint:
    """``with RawEndpoint(answer, every=1.0) as endpoint``: ``endpoint.url`` answers each
    request with ``answer`` (status line, headers and body; or a function of the request's
    bytes that returns them); ``requests`` counts them."""

    def __init__(self, answer: bytes | Callable[[bytes], bytes], *, every: float = 0.0) -> None:
        self.answer = answer
        self.every = every
        self.requests = 0
        self._stop = threading.Event()
        self._socket = socket.create_server(("127.0.0.1", 0))
        self._socket.settimeout(0.2)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._socket.getsockname()[1]}"

    def __enter__(self) -> RawEndpoint:
        threading.Thread(target=self._accept, daemon=True).start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._stop.set()
        self._socket.close()

    def _accept(self) -> None:
        while not self._stop.is_set():
            try:
                connection, _ = self._socket.accept()
            except OSError:  # the accept timed out, or the endpoint closed
                continue
            self.requests += 1
            threading.Thread(target=self._answer, args=(connection,), daemon=True).start()

    def _answer(self, connection: socket.socket) -> None:
        with connection:
            connection.settimeout(5)
            try:
                request = _read_request(connection)
                answer = self.answer if isinstance(self.answer, bytes) else self.answer(request)
                if not self.every:
                    connection.sendall(answer)
                    return
                for byte in answer:
                    if self._stop.wait(self.every):
                        return
                    connection.sendall(bytes([byte]))
            except OSError:
                return


def _read_request(connection: socket.socket) -> bytes:
    """One HTTP request: its headers and the body its ``Content-Length`` announces."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = connection.recv(65536)
        if not chunk:
            return data
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value.strip())
    while len(body) < length:
        chunk = connection.recv(65536)
        if not chunk:
            break
        body += chunk
    return head + b"\r\n\r\n" + body


def http_answer(body: bytes, *, status: str = "200 OK", content_type: str = "text/xml") -> bytes:
    """A complete HTTP/1.1 answer carrying ``body``."""
    return (
        f"HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    ).encode() + body
