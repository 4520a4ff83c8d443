"""Rules for lifecycle scripts (``LifeCycleConfig``). Pure: scripts in, findings out."""

from __future__ import annotations

import os

from .._cdk.tokens import is_unresolved
from .._core import limits
from .._core.arguments import TOKEN, argument_finding
from .._core.finding import Finding
from .._core.rule import E, Rule, Scope, Source, W, reports
from .._core.sources import INSTANCE_ROLE_POLICY
from ..lifecycle import LIFECYCLE_FILES, ON_CREATE, LifecycleScripts, selection_findings

LIFECYCLE = Rule(
    "HP-LIFECYCLE",
    E,
    Scope.GROUP,
    "`lifecycle_scripts.*` / `LifeCycleConfig`",
    "`on_create` a file name (1..128 characters, no `/`) present in the directory; an existing "
    "directory; an S3 prefix without `..`, `//`, `s3://` or whitespace; the S3 URI at most 1024 "
    "characters; exactly one of a directory, a bucket or an `s3://<bucket>/<prefix>` URI "
    "(`from_s3_uri`, with one of `on_create` / `on_init_complete`)",
    source=Source.api(
        "ClusterLifeCycleConfig",
        "OnCreate 1..128 characters, SourceS3Uri up to 1024 (the library also refuses path tricks"
        " in the prefix)",
    ),
)

WARN_LIFECYCLE_BUCKET = Rule(
    "HP-WARN-LIFECYCLE-BUCKET",
    W,
    Scope.GROUP,
    "`lifecycle_scripts.bucket` / `LifeCycleConfig.SourceS3Uri`",
    "a `sagemaker-*` bucket when the execution role is imported (the library cannot grant it read "
    "access to another bucket)",
    source=Source(
        INSTANCE_ROLE_POLICY,
        "the managed instance role policy reads only buckets named sagemaker-*",
    ),
)

RULES = (LIFECYCLE, LIFECYCLE_FILES, WARN_LIFECYCLE_BUCKET)
"""This family's rules, in documentation order (``LIFECYCLE_FILES`` is declared in
:mod:`~hyperpod_constructs.lifecycle`, which builds its findings)."""
ON_CREATE_FIX = "pass on_create='<file>' naming the entry script at the top of the scripts folder"
SOURCE = "LifeCycleConfig.SourceS3Uri"


def _not_text(field: str, value: object, group: str | None) -> Finding:
    """A text field given something else: a number token (CDK encodes it as a float) is
    named as such, anything else by its type."""
    if not is_unresolved(value):
        return argument_finding(field.split(" ")[0], value, "a str", group=group)
    return LIFECYCLE.finding(
        field=field,
        value=TOKEN,
        allowed="text: a string token, not a number or list token",
        fix="pass a string parameter (value_as_string) or Token.as_string(...)",
        group=group,
    )


def _on_create(scripts: LifecycleScripts, group: str | None) -> list[Finding]:
    on_create = scripts.on_create
    if not isinstance(on_create, str):
        return [_not_text(ON_CREATE, on_create, group)]
    if is_unresolved(on_create):
        return []
    allowed = f"a file name (1..{limits.MAX_ON_CREATE_LENGTH} characters, no '/')"
    if (
        not on_create
        or "/" in on_create
        or len(on_create) > limits.MAX_ON_CREATE_LENGTH
        or on_create in (".", "..")
        or not on_create.isprintable()
    ):
        return [
            LIFECYCLE.finding(
                field=ON_CREATE,
                value=on_create,
                allowed=allowed,
                fix=ON_CREATE_FIX,
                group=group,
            )
        ]
    directory = scripts.directory
    if (
        isinstance(directory, str)
        and os.path.isdir(directory)
        and not os.path.isfile(os.path.join(directory, on_create))
    ):
        return [
            LIFECYCLE.finding(
                field=ON_CREATE,
                value=on_create,
                allowed=f"a file that exists in {directory!r}",
                fix=ON_CREATE_FIX,
                group=group,
            )
        ]
    return []


def _directory(scripts: LifecycleScripts, group: str | None) -> list[Finding]:
    directory = scripts.directory
    if scripts.source == "directory" and not isinstance(directory, str):
        return [
            argument_finding(
                "lifecycle_scripts.path",
                directory,
                "a str or os.PathLike naming the scripts folder",
                group=group,
            )
        ]
    if directory is None or (isinstance(directory, str) and os.path.isdir(directory)):
        return []
    if not isinstance(directory, str):
        return [argument_finding("lifecycle_scripts.path", directory, "a str", group=group)]
    return [
        LIFECYCLE.finding(
            field=f"lifecycle_scripts.path ({SOURCE})",
            value=directory,
            allowed="an existing directory",
            fix="pass an existing folder (a relative path is read from the folder the app runs in)",
            group=group,
        )
    ]


def prefix_problem(prefix: object) -> str | None:
    """Why ``prefix`` is not a usable S3 key prefix of the scripts folder; None when it is."""
    if not isinstance(prefix, str):
        if is_unresolved(prefix):
            return "text: a string token, not a number or list token"
        return f"a str (got {type(prefix).__name__})"
    if is_unresolved(prefix):
        return None
    if not prefix:
        return None  # the bucket root
    parts = prefix.split("/")
    if "s3:" in parts or "://" in prefix:
        return "a key prefix, not an S3 URI (no 's3://' inside it)"
    if any(part in (".", "..") for part in parts):
        return "no '.' or '..' segments"
    if any(not part for part in parts):
        return "no empty segments ('//')"
    if any(char.isspace() or not char.isprintable() for char in prefix):
        return "no whitespace or control characters"
    return None


def _bucket(scripts: LifecycleScripts, group: str | None, role_owned: bool) -> list[Finding]:
    bucket = scripts.bucket
    if bucket is None:
        return []
    if not hasattr(bucket, "bucket_name") or not hasattr(bucket, "arn_for_objects"):
        return [argument_finding("lifecycle_scripts.bucket", bucket, "an s3.IBucket", group=group)]
    found: list[Finding] = []
    problem = prefix_problem(scripts.prefix)
    if problem is not None:
        found.append(
            LIFECYCLE.finding(
                field=f"lifecycle_scripts.prefix ({SOURCE})",
                value=scripts.prefix,
                allowed=f"a folder of the bucket, e.g. 'lifecycle/v1': {problem}",
                fix="pass the key prefix of the scripts folder only",
                group=group,
            )
        )
        return found
    name = bucket.bucket_name
    if is_unresolved(name) or is_unresolved(scripts.prefix):
        return found
    uri = f"s3://{name}/{scripts.prefix + '/' if scripts.prefix else ''}"
    if len(uri) > limits.MAX_SOURCE_S3_URI_LENGTH:
        found.append(
            LIFECYCLE.finding(
                field=f"lifecycle_scripts.prefix ({SOURCE})",
                value=uri,
                allowed=f"an S3 URI of at most {limits.MAX_SOURCE_S3_URI_LENGTH} characters",
                fix="use a shorter prefix",
                group=group,
            )
        )
    if not role_owned and not name.startswith(limits.REQUIRED_BUCKET_PREFIX):
        found.append(
            WARN_LIFECYCLE_BUCKET.finding(
                value=name,
                allowed=f"a bucket named {limits.REQUIRED_BUCKET_PREFIX}* when the execution "
                "role is imported: AmazonSageMakerClusterInstanceRolePolicy reads only those, "
                "and the library cannot add a read policy to a role it does not define",
                fix="give the imported role s3:GetObject and s3:ListBucket on the bucket, or "
                "use a sagemaker-* bucket",
                group=group,
            )
        )
    return found


def _s3_uri(scripts: LifecycleScripts, group: str | None) -> list[Finding]:
    """Scripts named by their ``SourceS3Uri`` (``LifecycleScripts.from_s3_uri``)."""
    found: list[Finding] = []
    if scripts.entry_field not in ("OnCreate", "OnInitComplete"):
        found.append(
            LIFECYCLE.finding(
                field="lifecycle_scripts.on_create / .on_init_complete (LifeCycleConfig)",
                value="both given",
                allowed="exactly one of on_create or on_init_complete",
                fix="pass on_create= (the scripts set the node up) or on_init_complete= "
                "(they run after HyperPod's own set-up), not both",
                group=group,
            )
        )
    uri = scripts.source_s3_uri
    if uri is not None and not isinstance(uri, str):  # a number token is a float
        found.append(_not_text(f"lifecycle_scripts.source_s3_uri ({SOURCE})", uri, group))
    elif uri is not None and not is_unresolved(uri):
        if not limits.SOURCE_S3_URI.match(uri) or len(uri) > limits.MAX_SOURCE_S3_URI_LENGTH:
            found.append(
                LIFECYCLE.finding(
                    field=f"lifecycle_scripts.source_s3_uri ({SOURCE})",
                    value=uri,
                    allowed="an s3://<bucket>/<prefix> URI of at most "
                    f"{limits.MAX_SOURCE_S3_URI_LENGTH} characters",
                    fix="pass the URI as HyperPod takes it, e.g. s3://sagemaker-lc-123/scripts/",
                    group=group,
                )
            )
        elif not _bucket_name_ok(uri.partition("://")[2].partition("/")[0]):
            found.append(
                LIFECYCLE.finding(
                    field=f"lifecycle_scripts.source_s3_uri ({SOURCE})",
                    value=uri,
                    allowed="s3://<bucket>/<prefix> with a bucket name S3 takes: 3..63 letters, "
                    "digits, dots and hyphens, a letter or digit first and last, no '..', not "
                    "an IP address",
                    fix="pass the name of the bucket the scripts are in, e.g. "
                    "s3://sagemaker-lc-123/scripts/",
                    group=group,
                )
            )
    return found


def _bucket_name_ok(name: str) -> bool:
    """A bucket name S3 takes, or one with a token in it (known at deploy time)."""
    return is_unresolved(name) or limits.S3_BUCKET_NAME.fullmatch(name) is not None


@reports(LIFECYCLE, LIFECYCLE_FILES, WARN_LIFECYCLE_BUCKET)
def lifecycle_findings(
    scripts: object, *, group: str | None, role_owned: bool = True
) -> list[Finding]:
    """Problems with lifecycle scripts (given to a group, or to the whole cluster).

    :param scripts: a :class:`~hyperpod_constructs.LifecycleScripts`, or ``None`` (anything
        else is a finding).
    :param group: the instance group they were given to, or ``None`` for the cluster.
    :param role_owned: whether the execution role that reads them is defined in this app
        (the library then grants it read access to any bucket). Default: True.
    """
    if scripts is None:
        return []
    if not isinstance(scripts, LifecycleScripts):
        return [
            argument_finding(
                "lifecycle_scripts",
                scripts,
                "LifecycleScripts.from_directory(...) or LifecycleScripts.from_s3(...)",
                group=group,
            )
        ]
    found = [
        *_on_create(scripts, group),
        *_directory(scripts, group),
        *_bucket(scripts, group, role_owned),
        *_s3_uri(scripts, group),
    ]
    if not found and scripts.source == "directory":
        # Only for a readable folder and an entry script that exists in it.
        found += selection_findings(scripts, group=group)[1]
    if (
        (scripts.directory is None) == (scripts.bucket is None)
        and scripts.source is None
        and scripts.source_s3_uri is None
    ):
        source = "neither" if scripts.directory is None else "both"
        found.append(
            LIFECYCLE.finding(
                field=f"lifecycle_scripts.directory / .bucket ({SOURCE})",
                value=f"{source} given",
                allowed="exactly one of a directory or a bucket",
                fix="build it with LifecycleScripts.from_directory(...) or .from_s3(...)",
                group=group,
            )
        )
    return found
