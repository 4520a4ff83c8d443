"""Lifecycle scripts: the shell scripts HyperPod runs on each node as it is created."""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass

from aws_cdk import Aws, Fn, RemovalPolicy
from aws_cdk import aws_iam as iam
from aws_cdk import aws_s3 as s3
from aws_cdk import aws_s3_deployment as s3deploy
from constructs import Construct, IDependable

from ._nag import acknowledge, arn_placeholder
from .validation.limits import REQUIRED_BUCKET_PREFIX

__all__ = ["REQUIRED_BUCKET_PREFIX", "BoundLifecycle", "LifecycleScripts"]

_ASSET_EXCLUDES = ["__pycache__", "*.pyc", ".DS_Store"]


@dataclass(frozen=True)
class BoundLifecycle:
    """Where a cluster finds its scripts once they are bound to it."""

    source_s3_uri: str
    on_create: str
    dependable: IDependable | None
    """What the cluster must wait for (the upload), if anything."""


class LifecycleScripts:
    """Where HyperPod finds the lifecycle scripts and which one it runs first.

    Optional: without lifecycle scripts HyperPod configures Slurm itself (Bootstrap mode).
    Changing them affects nodes launched afterwards only.
    """

    def __init__(
        self,
        *,
        on_create: str,
        directory: str | None = None,
        bucket: s3.IBucket | None = None,
        prefix: str = "",
        removal_policy: RemovalPolicy = RemovalPolicy.RETAIN,
    ) -> None:
        self.on_create = on_create
        self.directory = directory
        self.bucket = bucket
        # Not a str: kept as given and reported (HP-LIFECYCLE) when the scripts are validated.
        self.prefix = prefix.strip("/") if isinstance(prefix, str) else prefix
        self.removal_policy = removal_policy
        self.source: str | None = None
        """``"directory"`` when built by :meth:`from_directory` (its ``path`` is then
        ``directory``, checked with the scripts)."""
        self._bound: dict[str, tuple[BoundLifecycle, s3.IBucket, str]] = {}
        self._granted: set[tuple[str, int]] = set()

    @classmethod
    def from_directory(
        cls,
        path: str,
        *,
        on_create: str = "on_create.sh",
        removal_policy: RemovalPolicy = RemovalPolicy.RETAIN,
    ) -> LifecycleScripts:
        """Upload a local folder to a new bucket ``sagemaker-lc-<path hash>-<stack uuid>``.

        :param path: the folder; ``on_create`` must be a file in it.
        :param on_create: the entry script HyperPod runs. Default: ``on_create.sh``.
        :param removal_policy: what happens to the bucket when the stack is deleted.
            Default: RETAIN (stack deletion always succeeds; the bucket name embeds the stack
            id, so a re-created stack never collides with it). DESTROY empties and deletes it.
        """
        # Resolved now: the jsii runtime that stages the asset keeps the working directory the
        # process started with, which need not be the one the path is relative to.
        directory = os.path.abspath(path) if isinstance(path, str | os.PathLike) else path
        scripts = cls(on_create=on_create, directory=directory, removal_policy=removal_policy)
        scripts.source = "directory"
        return scripts

    @classmethod
    def from_s3(cls, bucket: s3.IBucket, *, on_create: str, prefix: str = "") -> LifecycleScripts:
        """Use scripts already in S3.

        The execution roles the library defines get read access to the scripts folder; an
        imported execution role only reads ``sagemaker-*`` buckets through
        AmazonSageMakerClusterInstanceRolePolicy (warning ``HP-WARN-LIFECYCLE-BUCKET``).

        :param prefix: the key prefix of the scripts folder (no ``s3://``, ``..``, ``//`` or
            whitespace). Default: the bucket root.
        """
        return cls(on_create=on_create, bucket=bucket, prefix=prefix)

    def bind(self, scope: Construct, role: iam.IRole | None) -> BoundLifecycle:
        """Create what the scripts need inside ``scope`` (once per scope) and let ``role``
        (every execution role that uses them) read them."""
        key = scope.node.path
        if key not in self._bound:
            self._bound[key] = self._bind(scope)
        bound, bucket, prefix = self._bound[key]
        if role is not None and (key, id(role)) not in self._granted:
            self._granted.add((key, id(role)))
            _grant_scripts_read(bucket, prefix, role)
            if bucket is not self.bucket:
                acknowledge(
                    role,
                    "HyperPod nodes read every lifecycle script under the scripts prefix",
                    f"AwsSolutions-IAM5[Resource::{arn_placeholder(bucket)}/{prefix}/*]",
                )
        return bound

    def _bind(self, scope: Construct) -> tuple[BoundLifecycle, s3.IBucket, str]:
        if self.bucket is not None:
            bound = BoundLifecycle(self._uri(self.bucket.bucket_name), self.on_create, None)
            return bound, self.bucket, self.prefix
        assert self.directory is not None
        holder_id, index = "LifecycleScripts", 1
        while scope.node.try_find_child(holder_id) is not None:
            index += 1
            holder_id = f"LifecycleScripts{index}"
        holder = Construct(scope, holder_id)
        path_hash = hashlib.sha256(holder.node.path.encode()).hexdigest()[:8]
        stack_uuid = Fn.select(2, Fn.split("/", Aws.STACK_ID))
        bucket = s3.Bucket(
            holder,
            "Bucket",
            # sagemaker-lc-<hash of the construct path>-<stack uuid>: unique per cluster and per
            # stack instance, so a re-created stack never collides with a retained bucket.
            bucket_name=Fn.join("", [REQUIRED_BUCKET_PREFIX, f"lc-{path_hash}-", stack_uuid]),
            block_public_access=s3.BlockPublicAccess.BLOCK_ALL,
            encryption=s3.BucketEncryption.S3_MANAGED,
            enforce_ssl=True,
            versioned=False,
            removal_policy=self.removal_policy,
            auto_delete_objects=self.removal_policy == RemovalPolicy.DESTROY,
        )
        upload = s3deploy.BucketDeployment(
            holder,
            "Upload",
            sources=[s3deploy.Source.asset(self.directory, exclude=_ASSET_EXCLUDES)],
            destination_bucket=bucket,
            destination_key_prefix="lifecycle",
            retain_on_delete=self.removal_policy != RemovalPolicy.DESTROY,
        )
        acknowledge(
            bucket,
            "The bucket only holds lifecycle scripts uploaded by this stack; access is logged "
            "by CloudTrail data events if the account enables them",
            "AwsSolutions-S1",
        )
        _acknowledge_upload_handler(upload, bucket)
        bound = BoundLifecycle(f"s3://{bucket.bucket_name}/lifecycle/", self.on_create, upload)
        return bound, bucket, "lifecycle"

    def _uri(self, bucket_name: str) -> str:
        return f"s3://{bucket_name}/{self.prefix + '/' if self.prefix else ''}"


def _grant_scripts_read(bucket: s3.IBucket, prefix: str, role: iam.IRole) -> None:
    """Read access to the scripts folder only (not the whole bucket)."""
    role.add_to_principal_policy(
        iam.PolicyStatement(
            sid="ReadLifecycleScripts",
            actions=["s3:GetObject"],
            resources=[bucket.arn_for_objects(f"{prefix}/*" if prefix else "*")],
        )
    )
    role.add_to_principal_policy(
        iam.PolicyStatement(
            sid="ListLifecycleScripts", actions=["s3:ListBucket"], resources=[bucket.bucket_arn]
        )
    )


def _acknowledge_upload_handler(upload: s3deploy.BucketDeployment, bucket: s3.Bucket) -> None:
    """The upload runs CDK's own BucketDeployment handler, a stack-wide singleton."""
    role = upload.handler_role
    acknowledge(
        role,
        "CDK's BucketDeployment handler copies the scripts from the CDK asset bucket into the "
        "lifecycle bucket; its generated policy is scoped to those two buckets",
        "AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/"
        "AWSLambdaBasicExecutionRole]",
        *(
            f"AwsSolutions-IAM5[Action::s3:{action}]"
            for action in ("GetObject*", "GetBucket*", "List*", "DeleteObject*", "Abort*")
        ),
        f"AwsSolutions-IAM5[Resource::{arn_placeholder(bucket)}/*]",
        "AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:s3:::cdk-hnb659fds-assets-"
        "<AWS::AccountId>-<AWS::Region>/*]",
    )
    function = role.node.scope
    if function is not None:
        acknowledge(
            function,
            "The runtime of CDK's BucketDeployment handler is chosen by aws-cdk-lib",
            "AwsSolutions-L1",
        )
