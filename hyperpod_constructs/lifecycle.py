"""Lifecycle scripts: the shell scripts HyperPod runs on each node as it is created."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from aws_cdk import CfnResource, Fn, IgnoreMode, RemovalPolicy, SymlinkFollowMode
from constructs import Construct, IDependable

from ._cdk.dependable import drop_implied_dependencies
from ._cdk.lazy import final_any, lazy_string
from ._cdk.modules import submodule
from ._cdk.nag import acknowledge, acknowledge_compliance, acknowledge_guard, arn_placeholder
from ._cdk.paths import child_path, path_of
from ._cdk.roles import statements_land
from ._cdk.tokens import is_unresolved, pseudo
from ._core.finding import Finding, HyperPodValidationError, Severity
from ._core.limits import REQUIRED_BUCKET_PREFIX, S3_BUCKET_NAME
from ._core.rule import Rule, Scope, Source
from .lifecycle_files import LifecycleFileError, Selection, ignore_lines, select_files

if TYPE_CHECKING:  # imported where scripts are bound: a cluster without them loads neither
    from aws_cdk import aws_ec2 as ec2
    from aws_cdk import aws_iam as iam
    from aws_cdk import aws_kms as kms
    from aws_cdk import aws_logs as logs
    from aws_cdk import aws_s3 as s3
else:  # imported where first used (_cdk/modules.py)
    iam = submodule("aws_iam")

__all__ = ["REQUIRED_BUCKET_PREFIX", "BoundLifecycle", "LifecycleBucketOptions", "LifecycleScripts"]

LIFECYCLE_FILES = Rule(
    "HP-LIFECYCLE-FILES",
    Severity.ERROR,
    Scope.GROUP,
    "`lifecycle_scripts` of `from_directory` (`exclude` / `include`)",
    "valid `.gitignore` patterns; no symbolic link leaving the folder; `on_create` among the "
    "files the upload keeps",
    source=Source.library(
        "the include / exclude patterns of the library's own upload "
        "(LifecycleScripts.from_directory)"
    ),
)
"""The rule of the files a local folder uploads (:func:`selection_findings`), declared here
where its findings are built; the lifecycle family (validation/lifecycle_rules.py) lists it."""
ON_CREATE = "lifecycle_scripts.on_create (LifeCycleConfig.OnCreate)"

UPLOAD_IGNORE_MODE = IgnoreMode.GIT
"""How the upload's exclude lines are read (they are anchored ``.gitignore`` lines)."""
UPLOAD_FOLLOW = SymlinkFollowMode.ALWAYS
"""Links are materialised: :func:`~hyperpod_constructs.lifecycle_files.select_files` refuses
any leaving the folder. Both settings enter the asset hash."""


@dataclass(frozen=True)
class BoundLifecycle:
    """Where a cluster finds its scripts once they are bound to it."""

    source_s3_uri: str
    on_create: str
    dependable: IDependable | None
    """What the cluster must wait for (the upload), if anything."""
    entry_field: str = "OnCreate"
    """``OnCreate`` (the scripts set the node up) or ``OnInitComplete`` (they run after
    HyperPod's own set-up, the API's Extended mode)."""


@dataclass(frozen=True, kw_only=True)
class LifecycleBucketOptions:
    """What an organisation's guardrails ask of the bucket :meth:`LifecycleScripts.from_directory`
    creates and of its upload (docs/guardrails.md). Every field is optional; the defaults
    write the bucket as before (SSE-S3, no versioning, no access log, no lifecycle rule).

    Example:

    ```python
    LifecycleScripts.from_directory(
        "lifecycle",
        bucket_options=LifecycleBucketOptions(
            encryption_key=key, versioned=True, server_access_logs_bucket=logs_bucket,
            lifecycle_rules=[s3.LifecycleRule(noncurrent_version_expiration=Duration.days(30))],
            upload_vpc=vpc,
        ),
    )
    ```
    """

    encryption_key: kms.IKey | None = None
    """Encrypt the bucket with this customer managed key (SSE-KMS). The cluster's execution
    roles get ``kms:Decrypt`` on it (HyperPod's managed policy grants none) and the upload
    ``kms:GenerateDataKey``. Default: S3 managed keys (SSE-S3). Control Tower: CT.S3.PR.10."""
    versioned: bool = False
    """Keep every version of the scripts. Default: False. Control Tower: CT.S3.PR.4 (pair it
    with a ``noncurrent_version_expiration`` rule)."""
    server_access_logs_bucket: s3.IBucket | None = None
    """Write S3 server access logs to this bucket. Default: none (CloudTrail data events
    log reads if the account enables them). Control Tower: CT.S3.PR.2."""
    server_access_logs_prefix: str | None = None
    """The key prefix of those logs. Default: the bucket root."""
    lifecycle_rules: Sequence[s3.LifecycleRule] = ()
    """Lifecycle rules of the bucket. Default: none. Control Tower: CT.S3.PR.9."""
    upload_vpc: ec2.IVpc | None = None
    """Run the upload (aws-cdk-lib's BucketDeployment handler) in this VPC; its subnets need
    a route to S3 (a gateway endpoint or NAT). Default: outside any VPC. Control Tower:
    CT.LAMBDA.PR.3."""
    upload_vpc_subnets: ec2.SubnetSelection | None = None
    """The subnets of ``upload_vpc``. Default: its private subnets."""
    upload_log_group: logs.ILogGroup | None = None
    """The upload's log group, e.g. ``logs.LogGroup(..., encryption_key=key,
    retention=RetentionDays.ONE_YEAR)``. Default: the one aws-cdk-lib creates (kept two
    years, not encrypted with a key of yours). Control Tower: CT.CLOUDWATCH.PR.2/PR.3."""


class LifecycleScripts:
    """Where HyperPod finds the lifecycle scripts and which one it runs first.

    Optional: without lifecycle scripts HyperPod configures Slurm itself (Bootstrap mode).
    Changing them affects nodes launched afterwards only.

    Example:

    ```python
    scripts = LifecycleScripts.from_directory("lifecycle", on_create="on_create.sh")
    # HyperPodSlurmCluster(..., lifecycle_scripts=scripts): uploaded to a bucket at deploy time
    ```
    """

    def __init__(
        self,
        *,
        on_create: str,
        directory: str | None = None,
        bucket: s3.IBucket | None = None,
        prefix: str = "",
        removal_policy: RemovalPolicy = RemovalPolicy.RETAIN,
        exclude: Sequence[str] = (),
        include: Sequence[str] | None = None,
        use_default_excludes: bool = True,
        source_s3_uri: str | None = None,
        entry_field: str = "OnCreate",
        bucket_options: LifecycleBucketOptions | None = None,
    ) -> None:
        """Prefer the factories, :meth:`from_directory`, :meth:`from_s3` and
        :meth:`from_s3_uri`, which set these consistently.

        :param on_create: the entry script HyperPod runs (``OnCreate``), relative to the
            scripts folder.
        :param directory: a local folder to upload. Default: none (scripts already in S3).
        :param bucket: a bucket that holds the scripts. Default: none.
        :param prefix: the key prefix of the scripts folder in ``bucket``. Default: the root.
        :param removal_policy: of the bucket created for ``directory``. Default: RETAIN.
        :param exclude: patterns left out of the upload, on top of the defaults. Default: none.
        :param include: an allow-list of patterns to upload. Default: every file not excluded.
        :param use_default_excludes: leave out dotfiles, VCS folders and key material.
            Default: True.
        :param source_s3_uri: the ``SourceS3Uri`` as HyperPod takes it, rendered unchanged.
            Default: none.
        :param entry_field: which field names the entry script: ``OnCreate`` (default) or
            ``OnInitComplete``.
        :param bucket_options: of the bucket created for ``directory`` and its upload.
            Default: ``LifecycleBucketOptions()``.
        """
        self.on_create = on_create
        self.source_s3_uri = source_s3_uri
        self.entry_field = entry_field
        self.directory = directory
        self.bucket = bucket
        # Not a str: kept as given and reported (HP-LIFECYCLE) when the scripts are validated.
        self.prefix = prefix.strip("/") if isinstance(prefix, str) else prefix
        self.removal_policy = removal_policy
        # Anything but a list or tuple (a lone string, a number, None) stays as given, so
        # select() can refuse it by name instead of reading a string's characters as patterns.
        self.exclude: Sequence[str] = _patterns(exclude)
        self.include: Sequence[str] | None = _patterns(include)
        self.use_default_excludes = use_default_excludes
        self.bucket_options = bucket_options or LifecycleBucketOptions()
        self.source: str | None = None
        """``"directory"`` when built by :meth:`from_directory` (its ``path`` is then
        ``directory``, checked with the scripts)."""
        self._bound: dict[str, tuple[BoundLifecycle, s3.IBucket, str, str]] = {}
        self._granted: dict[tuple[str, int], bool] = {}
        self._readers: dict[str, list[str]] = {}
        """Per scope: the role ARNs allowed to read the uploaded scripts."""
        self._placeholders: dict[str, str] = {}
        """Per scope: the uploaded scripts' bucket's ARN as cdk-nag spells it."""

    @classmethod
    def from_directory(
        cls,
        path: str,
        *,
        on_create: str = "on_create.sh",
        removal_policy: RemovalPolicy = RemovalPolicy.RETAIN,
        exclude: Sequence[str] = (),
        include: Sequence[str] | None = None,
        use_default_excludes: bool = True,
        bucket_options: LifecycleBucketOptions | None = None,
    ) -> LifecycleScripts:
        """Upload a local folder to a new bucket ``sagemaker-lc-<path hash>-<stack uuid>``.

        Every node of the cluster can read what is uploaded, so only scripts should be: by
        default dotfiles and dot-folders (``.env``, ``.git/``, ``.ssh/``), other version-control
        folders, key material (``*.pem``, ``*.key``, ``id_rsa`` ...) and ``__pycache__`` are
        left out (``DEFAULT_EXCLUDES`` of ``hyperpod_constructs.lifecycle_files``), and a
        symbolic link whose target lies outside the folder fails synthesis. Patterns use
        ``.gitignore`` conventions.

        :param path: the folder; ``on_create`` must be a file in it.
        :param on_create: the entry script HyperPod runs. Default: ``on_create.sh``.
        :param removal_policy: what happens to the bucket when the stack is deleted.
            Default: RETAIN (stack deletion always succeeds; the bucket name embeds the stack
            id, so a re-created stack never collides with it). DESTROY empties and deletes it.
        :param exclude: more patterns to leave out, on top of the defaults. Default: none.
        :param include: if given, upload only files matching one of these patterns (an
            allow-list; excludes still apply; ``on_create`` must match). Default: every file
            that is not excluded.
        :param use_default_excludes: leave out dotfiles, VCS folders and key material.
            Default: True. Set False only for a folder you have checked file by file.
        :param bucket_options: the bucket's encryption key, versioning, access log and
            lifecycle rules, and the upload's VPC (``LifecycleBucketOptions`` of
            ``hyperpod_constructs.lifecycle``), for an
            organisation's guardrails. Default: none of them.
        """
        # Resolved now: the jsii runtime that stages the asset keeps the working directory the
        # process started with, which need not be the one the path is relative to.
        directory = os.path.abspath(path) if isinstance(path, str | os.PathLike) else path
        scripts = cls(
            on_create=on_create,
            directory=directory,
            removal_policy=removal_policy,
            exclude=exclude,
            include=include,
            use_default_excludes=use_default_excludes,
            bucket_options=bucket_options,
        )
        scripts.source = "directory"
        return scripts

    def select(self) -> Selection:
        """The files of the local folder that are uploaded, and those left out.

        Raises ``LifecycleFileError`` (``hyperpod_constructs.lifecycle_files``) for a symbolic
        link leaving the folder or an invalid pattern; only for :meth:`from_directory`.
        """
        assert self.directory is not None, "only scripts from a local folder are uploaded"
        return select_files(
            self.directory,
            exclude=self.exclude,
            include=self.include,
            use_default_excludes=self.use_default_excludes,
        )

    @classmethod
    def from_s3(cls, bucket: s3.IBucket, *, on_create: str, prefix: str = "") -> LifecycleScripts:
        """Use scripts already in S3.

        The execution roles the library defines get read access to the scripts folder; an
        imported execution role only reads ``sagemaker-*`` buckets through
        AmazonSageMakerClusterInstanceRolePolicy (warning ``HP-WARN-LIFECYCLE-BUCKET``).

        :param bucket: the bucket that holds the scripts (``s3.Bucket.from_bucket_name``).
        :param on_create: the entry script HyperPod runs, relative to ``prefix``.
        :param prefix: the key prefix of the scripts folder (no ``s3://``, ``..``, ``//`` or
            whitespace). Default: the bucket root.
        """
        return cls(on_create=on_create, bucket=bucket, prefix=prefix)

    @classmethod
    def from_s3_uri(
        cls, uri: str, *, on_create: str | None = None, on_init_complete: str | None = None
    ) -> LifecycleScripts:
        """Use scripts already in S3, named by their ``SourceS3Uri`` exactly as HyperPod takes
        it (e.g. ``s3://sagemaker-lc-123/scripts/``); rendered unchanged.

        Give exactly one of ``on_create`` (the scripts set the node up) or
        ``on_init_complete`` (they run after HyperPod's own set-up). A bucket whose name does
        not start with ``sagemaker-`` is accepted: the execution role then needs its own read
        access (HyperPod's managed policy reads only ``sagemaker-*`` buckets).

        :param uri: ``s3://<bucket>/<folder>/``, rendered as given.
        :param on_create: the entry script HyperPod runs to set a node up (``OnCreate``).
        :param on_init_complete: the script HyperPod runs after its own set-up
            (``OnInitComplete``).
        """
        entry, field = (
            (on_init_complete, "OnInitComplete") if on_create is None else (on_create, "OnCreate")
        )
        if on_create is not None and on_init_complete is not None:
            field = "OnCreate+OnInitComplete"
        return cls(on_create=entry or "", source_s3_uri=uri, entry_field=field)

    def bind(self, scope: Construct, role: iam.IRole | None) -> BoundLifecycle:
        """Create what the scripts need inside ``scope`` (once per scope) and let ``role``
        (every execution role that uses them) read them. The cluster calls it for each group.

        :param scope: the cluster (the bucket and upload are created in it).
        :param role: an execution role that reads the scripts, or ``None``.
        """
        key = path_of(scope)
        if key not in self._bound:
            self._bound[key] = self._bind(scope)
        bound, bucket, prefix, objects = self._bound[key]
        if role is not None and (key, id(role)) not in self._granted:
            self._granted[(key, id(role))] = _grant_scripts_read(bucket, objects, role)
            if self.directory is not None:  # the bucket this library creates
                self._readers[key].append(role.role_arn)
                acknowledge(
                    role,
                    "HyperPod nodes read every lifecycle script under the scripts prefix",
                    f"AwsSolutions-IAM5[Resource::{self._placeholders[key]}/{prefix}/*]",
                )
        return bound

    def can_grant(self, scope: Construct, role: iam.IRole) -> bool:
        """Whether :meth:`bind` could grant ``role`` read access to the scripts.

        :param scope: the scope given to :meth:`bind`.
        :param role: the role given to :meth:`bind`.
        """
        return self._granted.get((path_of(scope), id(role)), True)

    def _bind(self, scope: Construct) -> tuple[BoundLifecycle, s3.IBucket, str, str]:
        """What :meth:`bind` made in ``scope``: the rendered config, the bucket, the scripts'
        key prefix and the ARN of the objects the execution roles may read."""
        from aws_cdk import aws_s3 as s3
        from aws_cdk import aws_s3_deployment as s3deploy

        if self.source_s3_uri is not None:
            bucket_name, prefix, objects = _uri_parts(self.source_s3_uri)
            bucket = s3.Bucket.from_bucket_name(
                scope, _free_id(scope, "LifecycleBucket"), bucket_name
            )
            bound = BoundLifecycle(self.source_s3_uri, self.on_create, None, self.entry_field)
            return bound, bucket, prefix, objects or _objects_arn(bucket, prefix)
        if self.bucket is not None:
            bound = BoundLifecycle(self._uri(self.bucket.bucket_name), self.on_create, None)
            return bound, self.bucket, self.prefix, _objects_arn(self.bucket, self.prefix)
        assert self.directory is not None
        selection = self._checked_selection(scope)
        options = self.bucket_options
        holder_id = _free_id(scope, "LifecycleScripts")
        holder = Construct(scope, holder_id)
        path_hash = hashlib.sha256(child_path(scope, holder_id).encode()).hexdigest()[:8]
        stack_uuid = Fn.select(2, Fn.split("/", pseudo("STACK_ID")))
        bucket = s3.Bucket(
            holder,
            "Bucket",
            # sagemaker-lc-<hash of the construct path>-<stack uuid>: unique per cluster and per
            # stack instance, so a re-created stack never collides with a retained bucket.
            bucket_name=Fn.join("", [REQUIRED_BUCKET_PREFIX, f"lc-{path_hash}-", stack_uuid]),
            block_public_access=s3.BlockPublicAccess.BLOCK_ALL,
            encryption=s3.BucketEncryption.S3_MANAGED
            if options.encryption_key is None
            else s3.BucketEncryption.KMS,
            encryption_key=options.encryption_key,
            bucket_key_enabled=options.encryption_key is not None or None,
            enforce_ssl=True,
            versioned=options.versioned,
            server_access_logs_bucket=options.server_access_logs_bucket,
            server_access_logs_prefix=options.server_access_logs_prefix,
            lifecycle_rules=list(options.lifecycle_rules) or None,
            removal_policy=self.removal_policy,
            auto_delete_objects=self.removal_policy == RemovalPolicy.DESTROY,
        )
        upload = s3deploy.BucketDeployment(
            holder,
            "Upload",
            sources=[
                s3deploy.Source.asset(
                    self.directory,
                    # Exactly the selection: every left-out entry, anchored at the root. Links
                    # are materialised; select() has refused those leaving the folder.
                    exclude=ignore_lines(selection),
                    ignore_mode=UPLOAD_IGNORE_MODE,
                    follow_symlinks=UPLOAD_FOLLOW,
                )
            ],
            destination_bucket=bucket,
            destination_key_prefix="lifecycle",
            retain_on_delete=self.removal_policy != RemovalPolicy.DESTROY,
            vpc=options.upload_vpc,
            vpc_subnets=options.upload_vpc_subnets,
            log_group=options.upload_log_group,
        )
        if options.server_access_logs_bucket is None:
            acknowledge(
                bucket,
                "The bucket only holds lifecycle scripts uploaded by this stack; access is "
                "logged by CloudTrail data events if the account enables them",
                "AwsSolutions-S1",
            )
        acknowledge_compliance(
            bucket,
            "The bucket holds a copy of the app's lifecycle-scripts folder that every "
            "deployment uploads again: the folder in the app's repository is the versioned, "
            "replicated source of truth, and access is logged by CloudTrail data events",
            "S3BucketReplicationEnabled",
            *(() if options.server_access_logs_bucket else ("S3BucketLoggingEnabled",)),
            *(() if options.versioned else ("S3BucketVersioningEnabled",)),
        )
        lock_reason = (
            "Every deployment replaces the scripts with the app's folder (the upload prunes "
            "the files it no longer has), and a DESTROY removal policy empties the bucket; "
            "object lock would refuse both, while the app's repository keeps the history"
        )
        acknowledge_compliance(bucket, lock_reason, "S3BucketDefaultLockEnabled")
        acknowledge_guard(
            bucket,
            (lock_reason, "s3_bucket_object_lock_enabled_check"),
            (
                "Nothing reacts to a change of the scripts: only the stack's own upload "
                "writes them, during a deployment that CloudFormation records, and HyperPod "
                "reads them when it launches a node",
                "s3_event_notifications_enabled_check",
            ),
        )
        if options.encryption_key is None:
            acknowledge_compliance(
                bucket,
                "Encrypted with S3 managed keys (SSE-S3): every HyperPod node reads the "
                "scripts through AmazonSageMakerClusterInstanceRolePolicy, which grants no "
                "kms:Decrypt",
                "S3DefaultEncryptionKMS",
            )
        handler_role = upload.handler_role
        readers = self._readers.setdefault(path_of(scope), [handler_role.role_arn])
        bucket.add_to_resource_policy(_deny_other_readers(bucket, readers))
        # Read once: the upload handler's acknowledgment and each role's name it.
        placeholder = self._placeholders[path_of(scope)] = arn_placeholder(bucket)
        _acknowledge_upload_handler(handler_role, placeholder)
        bound = BoundLifecycle(f"s3://{bucket.bucket_name}/lifecycle/", self.on_create, upload)
        return bound, bucket, "lifecycle", _objects_arn(bucket, "lifecycle")

    def _checked_selection(self, scope: Construct) -> Selection:
        """:meth:`select`, with its problems (``HP-LIFECYCLE-FILES``) raised as a validation
        error at ``scope``. The cluster reports them at synth and never binds such scripts;
        this guards a direct call of :meth:`bind`."""
        selection, findings = selection_findings(self, group=None)
        if selection is None or findings:
            raise HyperPodValidationError(scope.node.path, findings)
        return selection

    def _uri(self, bucket_name: str) -> str:
        return f"s3://{bucket_name}/{f'{self.prefix}/' if self.prefix else ''}"


def _free_id(scope: Construct, base: str) -> str:
    """``base``, or ``base2``, ``base3``, ... : the first id not taken in ``scope``."""
    candidate, index = base, 1
    while scope.node.try_find_child(candidate) is not None:
        index += 1
        candidate = f"{base}{index}"
    return candidate


def _patterns(value: Sequence[str] | None) -> Any:
    """A list or tuple of patterns as a tuple; any other value as given (refused by name)."""
    return tuple(value) if isinstance(value, list | tuple) else value


def _objects_arn(bucket: s3.IBucket, prefix: str) -> str:
    """The ARN of the objects under ``prefix`` (the whole bucket's for the root)."""
    return bucket.arn_for_objects(f"{prefix}/*" if prefix else "*")


def _uri_parts(uri: str) -> tuple[str, str, str]:
    """The bucket name, the key prefix and (when the prefix cannot be read here) the ARN of
    the objects the scripts are, of a ``SourceS3Uri`` given to ``from_s3_uri``.

    - A token whose scheme is unresolved (a ``CfnParameter``: ``s3://...`` is only known at
      deploy time): the bucket is the URI's third ``/``-separated part and the objects are
      everything after ``://``, both resolved by CloudFormation.
    - Not a str (a number token): the rules report it (``HP-ARG-TYPE``).
    - A concrete bucket name that S3 does not take (``s3://ab/``): the rules report it
      (``HP-LIFECYCLE``); the name is passed on unresolved so that aws-cdk-lib's own check of
      it does not stop the app before the report.
    """
    if not isinstance(uri, str):  # reported (HP-ARG-TYPE): nothing to read here
        return lazy_string(lambda: str(uri)), "", ""
    if is_unresolved(uri) and "://" not in uri:
        after_scheme = Fn.select(1, Fn.split("://", uri))
        objects = Fn.join("", ["arn:", pseudo("PARTITION"), ":s3:::", after_scheme, "*"])
        return Fn.select(2, Fn.split("/", uri)), "", objects
    bucket_name, _, prefix = uri.partition("://")[2].partition("/")
    if not is_unresolved(bucket_name) and not S3_BUCKET_NAME.fullmatch(bucket_name):
        bucket_name = lazy_string(lambda: bucket_name)
    return bucket_name, prefix.strip("/"), ""


def _grant_scripts_read(bucket: s3.IBucket, objects: str, role: iam.IRole) -> bool:
    """Read access to the scripts (``objects``, their folder only, not the whole bucket);
    False when the role cannot take it (an immutable imported role)."""
    added = _add_statement(
        role,
        iam.PolicyStatement(
            sid="ReadLifecycleScripts", actions=["s3:GetObject"], resources=[objects]
        ),
    )
    _add_statement(
        role,
        iam.PolicyStatement(
            sid="ListLifecycleScripts", actions=["s3:ListBucket"], resources=[bucket.bucket_arn]
        ),
    )
    if bucket.encryption_key is not None:
        bucket.encryption_key.grant_decrypt(role)
    return added and statements_land(role)


def _add_statement(role: iam.IRole, statement: iam.PolicyStatement) -> bool:
    """``role.add_to_principal_policy(statement).statement_added``. A role of this app says
    it in one jsii call (``Role.add_to_policy``), where the struct ``add_to_principal_policy``
    returns costs one per field."""
    if isinstance(role, iam.Role):
        return bool(role.add_to_policy(statement))
    return bool(role.add_to_principal_policy(statement).statement_added)


def _deny_other_readers(bucket: s3.IBucket, readers: list[str]) -> iam.PolicyStatement:
    """Only ``readers`` (the cluster's execution roles and the upload handler) read objects.

    AmazonSageMakerClusterInstanceRolePolicy lets every HyperPod node of the account read
    every ``sagemaker-*`` bucket: without this statement, any cluster's nodes could read
    this cluster's scripts. ``readers`` is read at synth, so roles bound later count.
    """
    return iam.PolicyStatement(
        sid="OnlyTheClusterReadsTheScripts",
        effect=iam.Effect.DENY,
        principals=[iam.AnyPrincipal()],
        actions=["s3:GetObject", "s3:GetObjectVersion"],
        resources=[bucket.arn_for_objects("*")],
        conditions={"ArnNotEquals": {"aws:PrincipalArn": final_any(lambda: list(readers))}},
    )


def _acknowledge_upload_handler(role: iam.IRole, bucket_placeholder: str) -> None:
    """The upload runs CDK's own BucketDeployment handler (``role``: its role), a stack-wide
    singleton. ``bucket_placeholder``: the lifecycle bucket's ARN as cdk-nag spells it."""
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
        f"AwsSolutions-IAM5[Resource::{bucket_placeholder}/*]",
        "AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:s3:::cdk-hnb659fds-assets-"
        "<AWS::AccountId>-<AWS::Region>/*]",
    )
    acknowledge_compliance(
        role,
        "aws-cdk-lib writes the BucketDeployment handler's policy on its own role, scoped to "
        "the asset bucket and the lifecycle bucket",
        "IAMNoInlinePolicy",
    )
    function = role.node.scope
    if function is not None:
        handler = function.node.default_child
        if isinstance(handler, CfnResource):
            drop_implied_dependencies(handler)
        acknowledge(
            function,
            "The runtime of CDK's BucketDeployment handler is chosen by aws-cdk-lib",
            "AwsSolutions-L1",
        )
        acknowledge_compliance(
            function,
            "CDK's BucketDeployment handler runs only during deployments, invoked by "
            "CloudFormation, which retries and reports its failures; it reaches only the S3 "
            "API and keeps its logs in the log group aws-cdk-lib creates for it",
            "LambdaConcurrency",
            "LambdaDLQ",
            "LambdaInsideVPC",
            "CloudWatchLogGroupEncrypted",
        )
        acknowledge_compliance(
            function,
            "aws-cdk-lib chooses the runtime and the tracing of its BucketDeployment handler, "
            "which runs a copy between two S3 buckets once per deployment",
            "LambdaLatestVersion",
            "LambdaTracing",
        )


def selection_findings(
    scripts: LifecycleScripts, *, group: str | None
) -> tuple[Selection | None, list[Finding]]:
    """The files a local folder uploads (``LifecycleScripts.select``) and the
    ``HP-LIFECYCLE-FILES`` findings (:data:`LIFECYCLE_FILES`): a
    link leaving the folder, an invalid pattern, or an ``on_create`` script the excludes /
    include leave out. The selection is None when it cannot be made."""
    try:
        selection = scripts.select()
    except LifecycleFileError as problem:
        return None, [
            LIFECYCLE_FILES.finding(
                field=problem.field,
                value=problem.value,
                allowed=problem.allowed,
                fix=problem.fix,
                group=group,
            )
        ]
    if scripts.on_create in selection.files:
        return selection, []
    return selection, [
        LIFECYCLE_FILES.finding(
            field=ON_CREATE,
            value=scripts.on_create,
            allowed="a file the upload keeps (not left out by the excludes, and matched by "
            "include when include is given)",
            fix="rename the script, or change exclude / include",
            group=group,
        )
    ]
