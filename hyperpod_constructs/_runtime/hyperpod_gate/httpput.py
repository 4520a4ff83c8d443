"""HTTP PUT of a JSON document to a presigned URL, with retries.

Used for the CloudFormation custom resource response (the wait condition is signalled with
``SignalResource``, see ``cfnsignal.py``).  The URL is a credential: it never appears in a log
line, an exception message or a returned reason (see :func:`redact`).
"""

from __future__ import annotations

import http.client
import json
import re
import urllib.error
from collections.abc import Mapping
from typing import Any
from urllib.request import Request, urlopen

from . import aws, faults

_URL = re.compile(r"(?i)\bhttps?://\S+")


PUT_TIMEOUT = 5.0
PUT_ATTEMPTS = 2
PUT_BACKOFF = 1.0


class DeliveryError(Exception):
    """The PUT did not succeed; the message never contains the URL. ``status`` is the last
    HTTP status (``None``: no answer); ``permanent`` whether the same PUT would fail again
    (:func:`faults.signal_fault`)."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.permanent = faults.signal_fault(status) == "permanent"


def redact(text: str) -> str:
    """Replace every http(s) URL in ``text`` with ``<url>``."""
    return _URL.sub("<url>", text)


def build_request(url: str, payload: Mapping[str, Any]) -> Request:
    """Build the PUT request: JSON body and an empty Content-Type.

    The presigned S3 URLs CloudFormation hands out are signed without a content
    type; an explicit empty header stops urllib from adding its default
    ``application/x-www-form-urlencoded``.
    """
    body = json.dumps(payload, separators=(",", ":")).encode("utf-8")
    return Request(
        url,
        data=body,
        method="PUT",
        headers={"Content-Type": "", "Content-Length": str(len(body))},
    )


def put_json(
    url: str,
    payload: Mapping[str, Any],
    *,
    timeout: float = PUT_TIMEOUT,
    attempts: int = PUT_ATTEMPTS,
    backoff: float = PUT_BACKOFF,
) -> int:
    """PUT ``payload`` as JSON to ``url``; return the HTTP status.

    Retries connection errors, timeouts and 5xx/429 answers up to ``attempts``
    times; raises :class:`DeliveryError` (naming only the status or error type)
    when every attempt failed.
    """
    if not url.lower().startswith("https://"):
        raise DeliveryError("refusing to send: not an https URL", 400)
    last = "no attempt made"
    last_status: int | None = None
    for attempt in range(max(1, attempts)):
        if attempt:
            aws.sleep(backoff * (2 ** (attempt - 1)))
        try:
            with urlopen(build_request(url, payload), timeout=timeout) as response:
                status = int(response.status)
        except urllib.error.HTTPError as exc:
            status = int(exc.code)
        except (urllib.error.URLError, OSError, http.client.HTTPException, ValueError) as exc:
            last, last_status = type(exc).__name__, None
            continue
        if 200 <= status < 300:
            return status
        last, last_status = f"HTTP {status}", status
        if faults.signal_fault(status) == "permanent":
            break
    raise DeliveryError(f"PUT failed after retries: {last}", last_status)
