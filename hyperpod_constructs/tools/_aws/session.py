"""The one AWS session of the command-line tools: whose credentials, which region, and one
deadline for every AWS call.

- :func:`add_aws_options` adds ``--profile``, ``--region``, ``--role-arn``,
  ``--role-session-name``, ``--external-id`` and ``--aws-timeout`` to a subcommand's parser;
  :meth:`AwsOptions.from_args` reads them back from the parsed arguments.
- :func:`open_session` (or :func:`session_from_args`, from the parsed arguments) turns them
  into an :class:`AwsSession`: the named profile (else the
  normal credential chain), the region, and with ``--role-arn`` the role assumed through STS
  ``AssumeRole`` (credentials refreshed before they expire, so a long ``watch`` keeps reading).
  Every problem (unknown profile, no region, no credentials, a role that cannot be assumed) is
  a :class:`SessionError` with one printable line.
- :meth:`AwsSession.client` returns a boto3 client whose every operation is bounded by the
  deadline (``--aws-timeout``, default :data:`DEFAULT_TIMEOUT` seconds): connecting, sending,
  reading and botocore's retries together, measured on the wall clock. botocore's own read
  timeout counts per socket read, so an endpoint sending one byte every few seconds never
  trips it; the deadline does (:class:`DeadlineError`).

Importing this module imports neither ``boto3`` nor ``botocore`` (they load when a session
opens) and changes nothing process-wide.
"""

from __future__ import annotations

import argparse
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from ..._core.sanitize import printable

__all__ = [
    "CONNECT_TIMEOUT",
    "DEFAULT_TIMEOUT",
    "MAX_ATTEMPTS",
    "READ_TIMEOUT",
    "AwsOptions",
    "AwsSession",
    "DeadlineError",
    "SessionError",
    "add_aws_options",
    "bounded",
    "open_session",
    "session_from_args",
]

DEFAULT_TIMEOUT = 60
"""Seconds one AWS call may take in all (connect, send, read, retries) before it is abandoned."""
MIN_TIMEOUT, MAX_TIMEOUT = 1, 3600
CONNECT_TIMEOUT = 5
"""botocore's connect timeout, seconds (never more than the deadline)."""
READ_TIMEOUT = 20
"""botocore's read timeout, seconds per socket read (never more than the deadline)."""
MAX_ATTEMPTS = 4
"""botocore's retries per call (standard retry mode: 5 attempts in all), all within the
deadline."""
_ROLE_ARN = re.compile(r"arn:aws[a-z-]*:iam::[0-9]{12}:role/[\w+=,.@/-]{1,512}", re.ASCII)
_SESSION_NAME = re.compile(r"[\w+=,.@-]{2,64}", re.ASCII)
T = TypeVar("T")


class SessionError(Exception):
    """The AWS session cannot be opened or a call cannot be made; ``str()`` is one printable
    line."""

    def __str__(self) -> str:
        return printable(" ".join(super().__str__().split()))


class DeadlineError(SessionError):
    """An AWS call did not finish within the deadline (``--aws-timeout``)."""

    def __init__(self, seconds: float) -> None:
        super().__init__(f"no complete answer within {seconds:g} s (--aws-timeout)")
        self.seconds = seconds


def bounded(call: Callable[[], T], seconds: float) -> T:
    """``call()``, or :class:`DeadlineError` once ``seconds`` have passed on the wall clock.

    The call runs in a daemon thread: a socket that keeps receiving a byte now and then cannot
    hold the caller past the deadline, and an abandoned call never keeps the process alive.
    What ``call()`` raises is raised here."""
    outcome: list[Any] = []
    done = threading.Event()

    def run() -> None:
        try:
            outcome.append((True, call()))
        except BaseException as error:  # handed to the caller, whatever it is
            outcome.append((False, error))
        finally:
            done.set()

    threading.Thread(target=run, name="hyperpod-constructs-aws-call", daemon=True).start()
    if not done.wait(seconds):
        raise DeadlineError(seconds)
    ok, value = outcome[0]
    if not ok:
        raise value
    result: T = value
    return result


def _timeout(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not MIN_TIMEOUT <= value <= MAX_TIMEOUT:  # also refuses NaN
        raise argparse.ArgumentTypeError(
            f"{text} is not allowed; allowed: {MIN_TIMEOUT}..{MAX_TIMEOUT} seconds"
        )
    return value


def add_aws_options(parser: argparse.ArgumentParser, *, region_help: str) -> None:
    """Add the AWS options every tool that reads AWS takes: ``--profile``, ``--region``
    (described by ``region_help``), ``--role-arn``, ``--role-session-name``, ``--external-id``
    and ``--aws-timeout`` (default :data:`DEFAULT_TIMEOUT`)."""
    aws = parser.add_argument_group("AWS access")
    aws.add_argument(
        "--profile",
        help="the AWS config profile to use (default: AWS_PROFILE, else the default chain)",
    )
    aws.add_argument("--region", help=region_help)
    aws.add_argument(
        "--role-arn",
        metavar="ARN",
        help="assume this IAM role (STS AssumeRole) with the profile's credentials and read "
        "with the role's, e.g. the deployment account's role in a pipeline",
    )
    aws.add_argument(
        "--role-session-name",
        metavar="NAME",
        help="the session name of --role-arn (default: hyperpod-constructs-<command>)",
    )
    aws.add_argument(
        "--external-id", metavar="ID", help="the external id the role's trust policy requires"
    )
    aws.add_argument(
        "--aws-timeout",
        type=_timeout,
        default=float(DEFAULT_TIMEOUT),
        metavar="SECONDS",
        help=(
            "the longest one AWS call may take in all, retries included, "
            f"{MIN_TIMEOUT}..{MAX_TIMEOUT} (default: {DEFAULT_TIMEOUT})"
        ),
    )


@dataclass(frozen=True)
class AwsOptions:
    """Whose credentials, which region and the deadline of each call (see
    :func:`add_aws_options`); every field defaults to the normal credential chain."""

    profile: str | None = None
    region: str | None = None
    role_arn: str | None = None
    role_session_name: str | None = None
    external_id: str | None = None
    timeout: float = DEFAULT_TIMEOUT

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> AwsOptions:
        """The options :func:`add_aws_options` added, from parsed arguments (a missing one
        takes its default)."""
        return cls(
            profile=getattr(args, "profile", None),
            region=getattr(args, "region", None),
            role_arn=getattr(args, "role_arn", None),
            role_session_name=getattr(args, "role_session_name", None),
            external_id=getattr(args, "external_id", None),
            timeout=float(getattr(args, "aws_timeout", DEFAULT_TIMEOUT)),
        )


class _BoundedClient:
    """A boto3 client whose every operation runs within the deadline."""

    def __init__(self, client: Any, seconds: float) -> None:
        self._client = client
        self._seconds = seconds
        self._operations = frozenset(client.meta.method_to_api_mapping)

    def __getattr__(self, name: str) -> Any:
        attribute = getattr(self._client, name)
        if name not in self._operations:
            return attribute

        def operation(*args: Any, **kwargs: Any) -> Any:
            return bounded(lambda: attribute(*args, **kwargs), self._seconds)

        return operation


class AwsSession:
    """An open session: :attr:`region`, :attr:`timeout` and :meth:`client`."""

    def __init__(self, session: Any, *, timeout: float, tool: str) -> None:
        self.boto3_session = session
        """The boto3 session (credentials and region resolved)."""
        self.region: str = session.region_name
        self.timeout = timeout
        self._tool = tool

    def client(self, service: str) -> Any:
        """A boto3 client of ``service`` in :attr:`region`, every operation bounded by
        :attr:`timeout`; raises :class:`SessionError` for a region boto3 refuses."""
        from botocore.config import Config  # type: ignore[import-untyped, unused-ignore]
        from botocore.exceptions import BotoCoreError  # type: ignore[import-untyped, unused-ignore]

        config = Config(
            retries={"mode": "standard", "max_attempts": MAX_ATTEMPTS},
            connect_timeout=min(CONNECT_TIMEOUT, self.timeout),
            read_timeout=min(READ_TIMEOUT, self.timeout),
            user_agent_extra=f"hyperpod-constructs-{self._tool}",
        )
        try:
            client = self.boto3_session.client(service, config=config)
        except (BotoCoreError, ValueError) as error:  # e.g. InvalidRegionError
            raise SessionError(f"cannot use region {self.region!r}: {error}") from None
        return _BoundedClient(client, self.timeout)


def open_session(
    options: AwsOptions, *, tool: str, region: str | None = None, session: Any = None
) -> AwsSession:
    """The session ``options`` describe for the command ``tool``; ``region`` is used when
    ``--region`` was not given (e.g. the stack's region in the cloud assembly); ``session`` (a
    boto3 session) replaces the profile's; an :class:`AwsSession` is returned as it is.
    Raises :class:`SessionError`."""
    import boto3  # type: ignore[import-untyped, unused-ignore]
    from botocore.exceptions import BotoCoreError  # type: ignore[import-untyped, unused-ignore]

    if isinstance(session, AwsSession):  # already open (e.g. a command's, shared)
        return session
    wanted = options.region or region
    try:
        if session is None:
            named = {"profile_name": options.profile} if options.profile else {}
            session = boto3.session.Session(region_name=wanted, **named)
        credentials = bounded(session.get_credentials, options.timeout)
    except DeadlineError as error:
        raise SessionError(f"reading the AWS credentials: {error}") from None
    except BotoCoreError as error:  # ProfileNotFound, a broken config, a failing SSO ...
        raise SessionError(f"cannot open the AWS session: {error}") from None
    if session.region_name is None:
        raise SessionError(
            "no AWS region: pass --region, set AWS_DEFAULT_REGION, or set a region in your "
            "AWS config"
        )
    if credentials is None:
        raise SessionError(
            "no AWS credentials found (environment, AWS config and credentials files, SSO, "
            "or an instance role); configure them as for the AWS CLI"
        )
    opened = AwsSession(session, timeout=options.timeout, tool=tool)
    if options.role_arn is None:
        return opened
    return _assume_role(opened, options, tool=tool)


def session_from_args(
    args: argparse.Namespace, *, tool: str, region: str | None = None
) -> AwsSession:
    """:func:`open_session` with the options :func:`add_aws_options` added to ``args``'s
    parser: the one call a command needs (``session.client("sagemaker")``, or
    ``session.boto3_session``). Raises :class:`SessionError`."""
    return open_session(AwsOptions.from_args(args), tool=tool, region=region)


def _assume_role(source: AwsSession, options: AwsOptions, *, tool: str) -> AwsSession:
    """A session with the credentials of ``options.role_arn``, assumed with ``source``'s and
    refreshed before they expire."""
    import boto3
    import botocore.session  # type: ignore[import-untyped, unused-ignore]
    from botocore.credentials import (  # type: ignore[import-untyped, unused-ignore]
        CredentialProvider,
        RefreshableCredentials,
    )
    from botocore.exceptions import (  # type: ignore[import-untyped, unused-ignore]
        BotoCoreError,
        ClientError,
    )

    role = str(options.role_arn)
    if not _ROLE_ARN.fullmatch(role):
        raise SessionError(
            f"--role-arn {role!r}: not an IAM role ARN (arn:aws:iam::<account>:role/<name>)"
        )
    name = options.role_session_name or f"hyperpod-constructs-{tool}"
    if not _SESSION_NAME.fullmatch(name):
        raise SessionError(f"--role-session-name {name!r}: 2 to 64 of letters, digits and +=,.@_-")
    request = {"RoleArn": role, "RoleSessionName": name}
    if options.external_id is not None:
        request["ExternalId"] = options.external_id
    sts = source.client("sts")

    def fetch() -> dict[str, str]:
        answer = sts.assume_role(**request)["Credentials"]
        return {
            "access_key": answer["AccessKeyId"],
            "secret_key": answer["SecretAccessKey"],
            "token": answer["SessionToken"],
            "expiry_time": answer["Expiration"].isoformat(),
        }

    try:
        first = fetch()
    except ClientError as error:
        detail = error.response.get("Error", {})
        raise SessionError(
            f"cannot assume role {role}: {detail.get('Code')}: {detail.get('Message')}"
        ) from None
    except (BotoCoreError, SessionError) as error:
        raise SessionError(f"cannot assume role {role}: {error}") from None

    class _Role(CredentialProvider):  # type: ignore[misc, unused-ignore]
        METHOD = "assume-role"

        def load(self) -> Any:
            return RefreshableCredentials.create_from_metadata(
                metadata=first, refresh_using=fetch, method=self.METHOD
            )

    core = botocore.session.Session(profile=options.profile)
    chain = core.get_component("credential_provider")
    chain.insert_before(chain.providers[0].METHOD, _Role())  # first: before env and profile
    assumed = boto3.session.Session(botocore_session=core, region_name=source.region)
    return AwsSession(assumed, timeout=source.timeout, tool=tool)
