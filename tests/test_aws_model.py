"""The generated copy of AWS's shapes equals botocore's model (the pinned test version)."""

from __future__ import annotations

from hyperpod_constructs.tools._aws import model as _aws_model
from tests.support.aws_model import model


def test_the_copy_equals_botocores_model() -> None:
    roots, shapes, version = model()
    assert roots == _aws_model.ROOTS
    assert shapes == _aws_model.SHAPES, (
        f"botocore {version} changed the shapes: python -m tests.support.aws_model > "
        "hyperpod_constructs/tools/_aws/model.py && "
        "ruff format hyperpod_constructs/tools/_aws/model.py"
    )
