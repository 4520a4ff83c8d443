"""Serve wire fakes (the HyperPod simulator, a stack fake) on a local HTTP endpoint.

Real boto3 clients in this process or in a subprocess are pointed at :attr:`SimServer.url`
(``endpoint_url=`` or ``AWS_ENDPOINT_URL``): botocore serializes, signs, sends, parses and
retries for real; each request is routed by the service name in its SigV4 credential scope to
the :class:`~tests.support.wire.WireFake` of that service, which validates the answer against
botocore's model and serializes it as the service's protocol does.

Bounded: it listens on 127.0.0.1 only, answers at most ``max_requests`` requests, and stops by
itself after ``lifetime`` seconds or when the ``with`` block ends.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable, Mapping
from email.utils import formatdate
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any

from botocore.awsrequest import AWSPreparedRequest, HeadersDict  # type: ignore[import-untyped, unused-ignore]

from .wire import WireFake

_SCOPE = re.compile(r"Credential=[^/]+/[0-9]{8}/[^/]+/([^/]+)/aws4_request")


class SimServer:
    """An HTTP endpoint answering with ``fakes`` (signing name -> fake, e.g. ``"sagemaker"``).

    ``before_request(service, operation)`` runs before each request is answered (e.g. to move
    virtual time forward); ``clock`` (epoch seconds, e.g. a virtual clock) dates the answers'
    ``Date`` header as AWS does; ``requests`` records ``(service, operation)`` of each one.
    ``rewrite(service, operation, body)`` may replace an answer's body (bytes) before it is
    sent, to serve what no fake would: ``{}``, a truncated body, text that is not JSON.
    """

    def __init__(
        self,
        fakes: Mapping[str, WireFake],
        *,
        before_request: Callable[[str, str], None] | None = None,
        clock: Callable[[], float] | None = None,
        rewrite: Callable[[str, str, bytes], bytes] | None = None,
        max_requests: int = 5000,
        lifetime: float = 120.0,
    ) -> None:
        self.fakes = dict(fakes)
        self.before_request = before_request
        self.clock = clock
        self.rewrite = rewrite
        self.max_requests = max_requests
        self.lifetime = lifetime
        self.requests: list[tuple[str, str]] = []
        self.errors: list[BaseException] = []
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._server.daemon_threads = True
        self._server.block_on_close = False
        self._server.timeout = 0.2
        self._lock = threading.Lock()  # one request at a time reaches the fakes
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, name="sim-server", daemon=True)

    @property
    def url(self) -> str:
        """``http://127.0.0.1:<port>``."""
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def __enter__(self) -> SimServer:
        self._thread.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
        self._server.server_close()

    def _serve(self) -> None:
        ends = time.monotonic() + self.lifetime
        while not self._stop.is_set() and time.monotonic() < ends:
            if len(self.requests) >= self.max_requests:
                break
            self._server.handle_request()

    # -- one request -------------------------------------------------------------------------
    def _answer(self, method: str, path: str, headers: HeadersDict, body: bytes) -> Any:
        scope = _SCOPE.search(str(headers.get("Authorization") or ""))
        if scope is None:
            return None, "unsigned request"
        service = scope.group(1)
        fake = self.fakes.get(service)
        if fake is None:
            return None, f"no fake for service {service}"
        request = AWSPreparedRequest(method, self.url + path, headers, body, stream_output=False)
        operation, _ = fake._operation(request, body)
        self.requests.append((service, operation))
        if self.before_request is not None:
            self.before_request(service, operation)
        return fake._before_send(request), None

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # headers and body leave at once, no 40 ms stall
            timeout = 10  # an idle keep-alive connection closes after this many seconds

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length)
                try:
                    with server._lock:
                        response, refusal = server._answer(
                            "POST", self.path, HeadersDict(dict(self.headers.items())), body
                        )
                except BaseException as error:  # a contract violation must fail the test
                    server.errors.append(error)
                    response, refusal = None, f"fake failed: {error!r}"
                if response is None:
                    payload = (refusal or "refused").encode()
                    self.send_response(403)
                    self.send_header("Content-Type", "text/plain")
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                    return
                payload = response.content
                if server.rewrite is not None and server.requests:
                    payload = server.rewrite(*server.requests[-1], payload)
                self.send_response(response.status_code)
                for name, value in response.headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def date_time_string(self, timestamp: float | None = None) -> str:
                if server.clock is None or timestamp is not None:
                    return super().date_time_string(timestamp)
                return formatdate(server.clock(), usegmt=True)

            def log_message(self, format: str, *args: Any) -> None:
                return None

        return Handler
