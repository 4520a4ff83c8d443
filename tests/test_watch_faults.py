"""``watch`` classifies an AWS error with the gate's fault model (``faults.api_fault``), not a
list of its own: every code and status the model calls transient is a refresh to ride out
(``Transient``), everything else is raised as it came. The cases are derived from the model."""

from __future__ import annotations

from typing import Any

import pytest
from botocore.exceptions import ClientError

from hyperpod_constructs._runtime.hyperpod_gate import faults
from hyperpod_constructs.tools.watch.aws import Reader, Transient

CASES = [
    *((code, 400) for code in sorted(faults.THROTTLING_CODES)),
    ("SomethingNew", 429),
    ("SomethingNew", 500),
    ("SomethingNew", 503),
    *((code, 400) for code in sorted(faults.ACCESS_DENIED_CODES | faults.NOT_FOUND_CODES)),
    ("ValidationException", 400),
]


def _reader() -> Reader:
    """A reader without a session: only its classification of an error is read here."""
    reader = Reader.__new__(Reader)
    reader._answered = False
    return reader


@pytest.mark.parametrize(("code", "status"), CASES)
def test_an_error_is_transient_exactly_when_the_fault_model_says_so(code: str, status: int) -> None:
    error = ClientError(
        {
            "Error": {"Code": code, "Message": "m"},
            "ResponseMetadata": {"HTTPStatusCode": status},
        },
        "DescribeCluster",
    )

    def failing() -> Any:
        raise error

    transient = faults.api_fault(code, status) in faults.TRANSIENT_API_FAULTS
    with pytest.raises(Transient if transient else ClientError):
        _reader()._call("sagemaker:DescribeCluster train", failing, "DescribeClusterResponse")
    assert transient == (code in faults.THROTTLING_CODES or status == 429 or status >= 500)
