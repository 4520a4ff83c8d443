"""The gate's Lambda code, staged as ``lambda.Code.from_asset`` stages it, without the L2.

``lambda.Code.from_asset(path).bind(function)`` creates one ``s3_assets.Asset`` at
``<function>/Code`` with ``deploy_time=True``, and the function records it with
``Asset.add_resource_metadata(resource, "Code")``. The gate's functions are L1
``CfnFunction``s (docs/performance.md), so it creates that same asset itself: same construct
path, hash, staging folder, asset manifest entry and template, for every stack synthesizer.

The asset, a jsii construct, asks the stack's synthesizer for the location in its own
constructor, on the JavaScript side. Python never calls a synthesizer: ``stack.synthesizer``
seen from Python is the object the user passed, while the stack binds a copy of it, so a call
from Python reaches an unbound synthesizer and fails (``StackSynthesizerBoundStackFirst``).
"""

from __future__ import annotations

from aws_cdk import CfnResource
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_s3_assets as s3_assets
from constructs import Construct

from .._core.finding import Finding
from .._synthesizer import refusing_synthesizer
from ..validation.cluster_rules import synthesizer_asset_findings


class LambdaCode:
    """A directory staged once as a zip asset for Lambda functions, at ``<function>/Code``
    where ``function`` is the construct of the first function that uses it.

    When the stack's synthesizer cannot host file assets (``BootstraplessSynthesizer``), the
    code is empty and :attr:`findings` say which synthesizer refused it and what to use.
    """

    def __init__(self, function: Construct, path: str, *, exclude: list[str]) -> None:
        self.findings: list[Finding] = []
        """Why the code could not be staged (the synth must fail on them); empty when it was."""
        self._asset: s3_assets.Asset | None = None
        try:
            self._asset = s3_assets.Asset(
                function, "Code", path=path, exclude=exclude, deploy_time=True
            )
        except RuntimeError as refused:  # what jsii raises for an error thrown in JavaScript
            self.findings = synthesizer_asset_findings(
                refusing_synthesizer(function, str(refused)),
                "the readiness gate's Lambda code",
                str(refused),
            )
        self.code = (
            lambda_.CfnFunction.CodeProperty(zip_file="")  # never written: the synth fails
            if self._asset is None
            else lambda_.CfnFunction.CodeProperty(
                s3_bucket=self._asset.s3_bucket_name, s3_key=self._asset.s3_object_key
            )
        )
        """The ``Code`` of a ``CfnFunction`` that runs it."""

    def bind(self, function: CfnResource) -> None:
        """Record on ``function`` where its code came from, as ``lambda.Code.from_asset``
        does when the ``aws:cdk:enable-asset-metadata`` context is set."""
        if self._asset is not None:
            self._asset.add_resource_metadata(function, "Code")
