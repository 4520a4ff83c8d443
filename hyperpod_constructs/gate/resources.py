"""The gate's Lambda code, staged as ``lambda.Code.from_asset`` stages it, without the L2.

``lambda.Code.from_asset`` binds an ``s3_assets.Asset``, whose construct also imports the
assets bucket as an ``s3.Bucket``: loading that module and building those constructs is
most of what an L2 function costs a synth (docs/performance.md). The gate writes its
functions as L1 ``CfnFunction``s and stages their shared code with the core
:class:`~aws_cdk.AssetStaging` and the stack synthesizer, exactly as the asset does: same
construct path, same hash, same staging folder, same asset manifest entry.
"""

from __future__ import annotations

from aws_cdk import AssetStaging, CfnResource, FileAssetPackaging, Names, Stack
from aws_cdk import aws_lambda as lambda_
from constructs import Construct

ASSET_METADATA_CONTEXT = "aws:cdk:enable-asset-metadata"
"""The context key with which aws-cdk-lib records where an asset came from (for SAM local);
the cdk CLI sets it."""


class LambdaCode:
    """A directory staged once as a zip asset for Lambda functions, at ``<function>/Code``
    where ``function`` is the construct of the first function that uses it."""

    def __init__(self, function: Construct, path: str, *, exclude: list[str]) -> None:
        code = Construct(function, "Code")
        stack = Stack.of(function)
        staging = AssetStaging(code, "Stage", source_path=path, exclude=exclude)
        self._staged_path = staging.relative_staged_path(stack)
        location = stack.synthesizer.add_file_asset(
            source_hash=staging.asset_hash,
            file_name=self._staged_path,
            packaging=FileAssetPackaging.ZIP_DIRECTORY,
            deploy_time=True,
            display_name=Names.stack_relative_construct_path(code),
        )
        self.code = lambda_.CfnFunction.CodeProperty(
            s3_bucket=location.bucket_name, s3_key=location.object_key
        )
        """The ``Code`` of a ``CfnFunction`` that runs it."""
        self._metadata = bool(function.node.try_get_context(ASSET_METADATA_CONTEXT))

    def bind(self, function: CfnResource) -> None:
        """Record on ``function`` where its code came from, as ``lambda.Code.from_asset``
        does when the ``aws:cdk:enable-asset-metadata`` context is set."""
        if self._metadata:
            function.add_metadata("aws:asset:path", self._staged_path)
            function.add_metadata("aws:asset:is-bundled", False)
            function.add_metadata("aws:asset:property", "Code")
