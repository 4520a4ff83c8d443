"""The limits HyperPod and CloudFormation enforce (SageMaker API model, resource schema)."""

from __future__ import annotations

import re

MAX_INSTANCE_COUNT = 6758
MIN_THREADS_PER_CORE, MAX_THREADS_PER_CORE = 1, 2
MAX_INSTANCE_GROUPS = 100
MAX_STORAGE_CONFIGS = 4
MAX_DEEP_HEALTH_CHECKS = 2
"""Distinct known values; the schema's maxItems is 3, but only two values exist."""
MIN_EBS_GIB, MAX_EBS_GIB = 1, 16384
MAX_NAME_LENGTH = 63
MAX_PARTITION_LENGTH = 1024
MAX_SECURITY_GROUPS, MAX_SUBNETS = 5, 16
MAX_ON_CREATE_LENGTH = 128
MAX_FSX_DNS_NAME_LENGTH = 275
MAX_MOUNT_PATH_LENGTH = 1024
MAX_KMS_KEY_ID_LENGTH = 2048
MIN_TRAINING_PLAN_ARN_LENGTH, MAX_TRAINING_PLAN_ARN_LENGTH = 50, 2048
MAX_SOURCE_S3_URI_LENGTH = 1024
MAX_DB_ENDPOINT_LENGTH, MAX_DB_NAME_LENGTH = 255, 64
MIN_DB_PORT, MAX_DB_PORT = 1, 65535
MAX_SCHEDULE_EXPRESSION_LENGTH, MAX_UPDATE_WAIT_SECONDS, MAX_ROLLBACK_ALARMS = 256, 3600, 10
MAX_ALARM_NAME_LENGTH = 255
"""``AlarmDetails.AlarmName`` (API model: 1..255, pattern ``(?!\\s*$).+``)."""
MAX_TAGS, MAX_TAG_KEY_LENGTH, MAX_TAG_VALUE_LENGTH = 50, 128, 256
MIN_COUNT_WINDOW_HOURS = 3
"""HyperPod rolls a group back if its ``MinInstanceCount`` is not met within this many hours
of the group's creation or update (fixed; Slurm scaling guide): the gate's deadline, ``watch``'s
countdown, ``plan``'s and ``preflight``'s windows all read it from here."""
MAX_GATE_TIMEOUT_HOURS = 12
"""The longest a CloudFormation wait condition can wait (``AWS::CloudFormation::WaitCondition``
``Timeout``: 43200 s), which bounds the readiness gate's timeout."""

REQUIRED_BUCKET_PREFIX = "sagemaker-"
"""HyperPod's managed instance role policy only reads buckets whose name starts with this."""
SOURCE_S3_URI = re.compile(r"^(https|s3)://([^/]+)/?(.*)$")
"""``LifeCycleConfig.SourceS3Uri`` (the resource schema's pattern)."""
S3_BUCKET_NAME = re.compile(
    r"(?!\d{1,3}(\.\d{1,3}){3}$)(?!.*(\.\.|\.-|-\.))[a-zA-Z0-9][a-zA-Z0-9._-]{1,61}[a-zA-Z0-9]"
)
"""A bucket name S3 takes (and aws-cdk-lib's ``Bucket.from_bucket_name``): 3..63 letters,
digits, dots and hyphens (capitals and underscores of legacy buckets too), a letter or digit
first and last, no ``..``, ``.-`` or ``-.``, not an IP address. Use ``fullmatch``."""

NAME_PATTERN = re.compile(r"[a-zA-Z0-9](-*[a-zA-Z0-9])*")
"""Cluster, instance group and partition names; use with ``fullmatch`` (``$`` would accept a
trailing newline)."""
INSTANCE_TYPE = re.compile(r"ml\.[a-z0-9-]+\.[a-z0-9]+")
"""``ml.<family>.<size>`` (full match)."""
TRAINING_PLAN_ARN = re.compile(
    r"^arn:aws[a-z\-]*:sagemaker:[a-z0-9\-]*:[0-9]{12}:training-plan/.*$"
)
IMAGE_ID = re.compile(r"^(ami-([0-9a-f]{8}|[0-9a-f]{17})|default)$")
"""The schema's pattern (8..17 hex digits, either case) narrowed to what an AMI id is and what
cfn-lint's ``AWS::EC2::Image.Id`` format accepts: 8 or 17 lowercase hex digits."""
FSX_DNS_NAME = re.compile(r"^((fs|fc)i?-[0-9a-f]{8,}\..{4,253})$")
FSX_MOUNT_NAME = re.compile(r"^([A-Za-z0-9_-]{1,8})$")
MOUNT_PATH = re.compile(
    r"^/(?!/)(?!.*/$)(?!(?:.*/)?\.\.?(?:/|$))[a-zA-Z0-9._-]+(/[a-zA-Z0-9._-]+)*$"
)
"""The CloudFormation schema's pattern (stricter than the API's ``/[a-zA-Z0-9._/-]+``), and
no ``.`` or ``..`` segment (a path trick that would mount outside the named folder)."""
KMS_KEY_ID = re.compile(r"^[a-zA-Z0-9:/_-]*$")
_LABEL = r"[a-zA-Z0-9]([a-zA-Z0-9\-]{0,61}[a-zA-Z0-9])?"
DB_ENDPOINT = re.compile(rf"^({_LABEL})(\.{_LABEL})*$")
"""A host name: dot-separated labels of 1..63 letters, digits and inner hyphens."""
DB_NAME = re.compile(r"^[a-zA-Z0-9$_]+$")
TAG_PUNCTUATION = frozenset("_.:/=+-@")
"""Tag keys and values: Unicode letters, digits, separators (p{L} p{N} p{Z}) and these."""
SCHEDULE_EXPRESSION = re.compile(
    r"cron\((?:[0-5][0-9]|[0-9]|) (?:[01][0-9]|2[0-3]|[0-9]) (?:[1-9]|0[1-9]|[12][0-9]|3[01]|\?) "
    r"(?:[1-9]|0[1-9]|1[0-2]|\*|\*/(?:[1-9]|1[0-2])|) "
    r"(?:MON|TUE|WED|THU|FRI|SAT|SUN|[1-7]|\?|L|(?:[1-7]#[1-5])|(?:[1-7]L)) "
    r"(?:20[2-9][0-9]|\*|)\)"
)
"""``ScheduledUpdateConfig.ScheduleExpression``: the resource schema's pattern (searched, as
cfn-lint does)."""
