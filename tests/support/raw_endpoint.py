"""An HTTP endpoint on 127.0.0.1 that answers every request with the same raw bytes, sent all
at once or one byte every ``every`` seconds: what no honest AWS endpoint sends (a dripping
answer, which botocore's per-read timeout never catches; a body no parser reads)."""

from __future__ import annotations

import socket
import threading
from types import TracebackType


class RawEndpoint:
    """``with RawEndpoint(answer, every=1.0) as endpoint``: ``endpoint.url`` answers each
    request with ``answer`` (status line, headers and body); ``requests`` counts them."""

    def __init__(self, answer: bytes, *, every: float = 0.0) -> None:
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
                connection.recv(65536)
                if not self.every:
                    connection.sendall(self.answer)
                    return
                for byte in self.answer:
                    if self._stop.wait(self.every):
                        return
                    connection.sendall(bytes([byte]))
            except OSError:
                return
