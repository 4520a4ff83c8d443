"""A HyperPod (Slurm, Continuous provisioning) control-plane simulator in virtual time.

It follows the project's HyperPod facts sheet (hyperpod-facts.md):

- the controller group provisions first; once one controller is healthy, the
  login group and the compute groups provision in parallel;
- each group has a capacity curve: how many of its instances capacity allows at
  a given virtual time (seconds since the cluster was created); failed launches
  are retried asynchronously every ``retry_seconds``;
- MinCount gating: a new group stays ``Creating`` while CurrentCount < MinCount
  and turns ``InService`` once CurrentCount >= MinCount, then keeps launching up
  to its target; an existing group whose MinCount was raised stays ``Updating``;
- rollback after 3 hours without the minimum (the timer restarts whenever
  MinCount changes): a new group goes to MinCount/TargetCount 0/0 with no
  instances and straight to ``InService``; an existing group goes back to its
  last InService values (``Updating`` while it scales in, then ``InService``);
- a group past its MinCount transition is ``Degraded`` (the API reference: "some instances
  have failed to provision or are no longer healthy") while it holds fewer instances than
  its target and its last launch attempt fell short, or it lost nodes not yet replaced;
  ``InService`` again once it holds its target;
- the cluster is ``InService`` once a controller (plus a login node if there is
  a login group) is healthy; a non-retryable controller failure makes it
  ``Failed`` with a FailureMessage;
- ListClusterEvents ("Minimum capacity reached", "Rollback initiated", Error
  events for failed launches), ListClusterNodes, DescribeCluster;
- per-node states: a launched node is ``Pending`` while it boots, then
  ``DeepHealthCheckInProgress`` while its group's on-start deep health checks run
  (``GroupSpec.deep_health_check_seconds``), then ``Running``; ListClusterNodes pages
  them (``MaxResults`` 1..100, ``NextToken``, ``InstanceGroupNameContains`` a substring
  filter, sorted by launch time);
- ``CurrentCount`` (and the MinCount transition to ``InService``) counts either the
  ``Running`` nodes only or every node in the group (``current_count="in_group"``):
  AWS's documentation does not say which;
- fault injection: throttling bursts, 5xx, AccessDenied, requests that hang past the
  client's read timeout, and the cluster deleted mid-wait (``Deleting``, then
  ResourceNotFound).

It answers real boto3 clients through :class:`tests.support.wire.WireFake`.
"""

from __future__ import annotations

import atexit
import json
import math
import shutil
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import cache
from pathlib import Path
from typing import Any, Literal

import boto3  # type: ignore[import-untyped, unused-ignore]
import botocore.loaders  # type: ignore[import-untyped, unused-ignore]
import botocore.session  # type: ignore[import-untyped, unused-ignore]
from botocore.exceptions import ReadTimeoutError  # type: ignore[import-untyped, unused-ignore]

from hyperpod_constructs._runtime.hyperpod_gate.aws import CLIENT_CONFIG

from .clock import VirtualClock
from .wire import ACCOUNT, REGION, ApiError, WireFake

CapacityCurve = Callable[[float], int]
"""Seconds since cluster creation -> how many instances capacity allows for the group."""

ROLLBACK_WINDOW = 3 * 3600
TICK = 10.0
NodeType = Literal["Controller", "Login", "Compute"]
CurrentCountMode = Literal["running", "in_group"]
"""What ``CurrentCount`` counts: the ``Running`` nodes, or every node in the group."""
NODE_PAGE_MAX = 100
"""ListClusterNodes' ``MaxResults`` range is 1..100."""


def unlimited() -> CapacityCurve:
    """Capacity is never short."""
    return lambda _t: 1_000_000


def constant(count: int) -> CapacityCurve:
    """Capacity allows ``count`` instances, forever."""
    return lambda _t: count


def steps(*points: tuple[float, int]) -> CapacityCurve:
    """Piecewise constant: ``(seconds_since_creation, allowed)`` points, ascending."""
    ordered = sorted(points)

    def curve(t: float) -> int:
        allowed = 0
        for start, count in ordered:
            if t >= start:
                allowed = count
        return allowed

    return curve


def linear(start_seconds: float, per_hour: float, cap: int) -> CapacityCurve:
    """Nothing before ``start_seconds``, then ``per_hour`` instances/hour up to ``cap``."""

    def curve(t: float) -> int:
        if t < start_seconds:
            return 0
        return min(cap, math.floor((t - start_seconds) / 3600 * per_hour))

    return curve


@dataclass
class GroupSpec:
    """An instance group as CreateCluster/UpdateCluster would define it."""

    name: str
    instance_count: int
    min_instance_count: int = 0
    node_type: NodeType = "Compute"
    instance_type: str = "ml.p5.48xlarge"
    capacity: CapacityCurve = field(default_factory=unlimited)
    boot_seconds: float = 600.0
    """Launch -> healthy (boot, lifecycle script, health checks)."""
    retry_seconds: float = 300.0
    """How often HyperPod retries launches that failed for lack of capacity."""
    failure_message: str | None = None
    """Controller only: a non-retryable failure when its first instance would come up."""
    deep_health_check_seconds: float = 0.0
    """On-start deep health checks: how long a booted node stays ``DeepHealthCheckInProgress``
    before it is ``Running`` (0: the group runs none)."""


@dataclass(slots=True)
class _Instance:
    instance_id: str
    launched_at: float
    ready_at: float
    """Booted: ``Pending`` until then."""
    running_at: float
    """Deep health checks passed: ``DeepHealthCheckInProgress`` until then, then ``Running``."""

    def status(self, t: float) -> str:
        """The node's ListClusterNodes status at ``t`` (while it is pending)."""
        if t < self.ready_at:
            return "Pending"
        return "DeepHealthCheckInProgress" if t < self.running_at else "Running"


@dataclass
class _Group:
    spec: GroupSpec
    min: int
    target: int
    status: str
    is_new: bool
    listed: bool
    created_at: float
    started_at: float | None = None
    min_set_at: float = 0.0
    next_attempt_at: float = 0.0
    healthy: list[_Instance] = field(default_factory=list)
    pending: list[_Instance] = field(default_factory=list)
    last_in_service: tuple[int, int] | None = None
    gating: bool = True
    min_reached_at: float | None = None
    min_running_at: float | None = None
    rolled_back_at: float | None = None
    settle_at: float | None = None
    short: bool = False
    """Whether its last launch attempt could not provision every missing instance."""


@dataclass
class Event:
    """A ListClusterEvents entry."""

    event_id: str
    time: float
    level: Literal["Info", "Warn", "Error"]
    description: str
    group: str | None = None
    instance_id: str | None = None


@dataclass
class Fault:
    """Injected API failure."""

    operation: str | None
    code: str
    status: int
    message: str
    remaining: int | None = None
    start: float | None = None
    end: float | None = None
    hits: int = 0

    def matches(self, operation: str, now: float) -> bool:
        if self.operation is not None and self.operation != operation:
            return False
        if self.remaining is not None and self.remaining <= 0:
            return False
        if self.start is not None and now < self.start:
            return False
        return self.end is None or now < self.end


HANG = "<hang>"
"""Fault code of :meth:`HyperPodSimulator.hang`."""

HEALTH_STATUSES = ("InService", "Degraded")
"""The statuses of a group past its MinCount transition, by whether it holds its target."""

FAULT_KINDS: dict[str, tuple[str, int, str]] = {
    "throttle": ("ThrottlingException", 400, "Rate exceeded"),
    "5xx": ("InternalFailure", 500, "An internal error occurred."),
    "unavailable": ("ServiceUnavailable", 503, "Service is unavailable."),
    "access_denied": (
        "AccessDeniedException",
        400,
        "User: arn:aws:sts::123456789012:assumed-role/Gate-CheckFunctionRole/Gate-Check "
        "is not authorized to perform: sagemaker:{op} on resource: {arn} because no "
        "identity-based policy allows the sagemaker:{op} action",
    ),
}


@cache
def _old_model_root() -> str:
    """A botocore data directory whose sagemaker model predates MinCount."""
    loader = botocore.loaders.Loader()
    model = loader.load_service_model("sagemaker", "service-2")
    members = model["shapes"]["ClusterInstanceGroupDetails"]["members"]
    del members["MinCount"]
    root = tempfile.mkdtemp(prefix="old-botocore-sagemaker-")
    atexit.register(shutil.rmtree, root, True)
    version = loader.determine_latest_version("sagemaker", "service-2")
    target = Path(root, "sagemaker", version)
    target.mkdir(parents=True)
    (target / "service-2.json").write_text(json.dumps(model))
    return root


@cache
def old_boto3_session() -> boto3.Session:
    """A boto3 session whose SageMaker model does not know ``MinCount``.

    The parser of such a client silently drops the field from responses, like a
    Lambda runtime's bundled boto3 that predates MinInstanceCount.
    """
    core = botocore.session.Session()
    core.get_component("data_loader").search_paths.insert(0, _old_model_root())
    return boto3.Session(botocore_session=core)


class HyperPodSimulator:
    """One HyperPod cluster evolving in virtual time, answering the SageMaker API."""

    def __init__(
        self,
        clock: VirtualClock,
        groups: list[GroupSpec],
        *,
        name: str = "train",
        cluster_id: str = "abcd12345678",
        hide_groups_until_controller: bool = True,
        delete_seconds: float = 600.0,
        current_count: CurrentCountMode = "running",
        latency: Mapping[str, float] | None = None,
    ) -> None:
        controllers = [g for g in groups if g.node_type == "Controller"]
        logins = [g for g in groups if g.node_type == "Login"]
        if len(controllers) != 1 or len(logins) > 1:
            raise ValueError("need exactly one Controller group and at most one Login group")
        self.clock = clock
        self.name = name
        self.arn = f"arn:aws:sagemaker:{REGION}:{ACCOUNT}:cluster/{cluster_id}"
        self.created_at = clock.time()
        self.status = "Creating"
        self.failure_message: str | None = None
        self.hide_groups_until_controller = hide_groups_until_controller
        self.current_count = current_count
        self.delete_seconds = delete_seconds
        self.deleting_since: float | None = None
        self.deleted = False
        self.events: list[Event] = []
        self.faults: list[Fault] = []
        self.latency = dict(latency or {})
        """Operation -> virtual seconds each request takes (e.g. ~0.9 s a ListClusterNodes
        page at scale); a request's answer reflects the time it arrives."""
        self._listing: tuple[Any, list[tuple[_Group, _Instance, bool]]] | None = None
        self._ticked_to = self.created_at
        self._instance_ids = 0
        self._event_ids = 0
        self.groups: dict[str, _Group] = {}
        for spec in groups:
            self._add(spec, is_new=True)
        self.fake = WireFake("sagemaker", self._handle)

    # -- scenario controls ---------------------------------------------------
    def _add(self, spec: GroupSpec, *, is_new: bool) -> None:
        if spec.name in self.groups:
            raise ValueError(f"group {spec.name} exists")
        minimum = spec.min_instance_count
        if spec.node_type in ("Controller", "Login") and minimum == 0:
            minimum = 1  # facts: Controller and Login get MinInstanceCount 1 by default
        now = self.clock.time()
        group = _Group(
            spec=spec,
            min=minimum,
            target=spec.instance_count,
            status="Creating",
            is_new=is_new,
            listed=spec.node_type == "Controller" or not self.hide_groups_until_controller,
            created_at=now,
            min_set_at=now,
        )
        self.groups[spec.name] = group
        if spec.node_type == "Controller" or self._controller_healthy():
            self._start(group, now)

    def add_group(self, spec: GroupSpec) -> None:
        """UpdateCluster adding a new instance group (provisions right away)."""
        self.advance()
        self._add(spec, is_new=True)
        self.groups[spec.name].listed = True

    def update_group(
        self, name: str, *, min_instance_count: int | None = None, instance_count: int | None = None
    ) -> None:
        """UpdateCluster changing an existing group's MinCount and/or target."""
        self.advance()
        group = self.groups[name]
        now = self.clock.time()
        if group.status == "InService":
            group.last_in_service = (group.min, group.target)
        if instance_count is not None:
            group.target = instance_count
        if min_instance_count is not None and min_instance_count != group.min:
            group.min = min_instance_count
            group.min_set_at = now  # the 3-hour timer restarts whenever MinCount changes
        group.is_new = False
        group.gating = True
        group.min_reached_at = None
        group.min_running_at = None
        group.status = "Updating"
        group.next_attempt_at = now
        self._emit("Info", f"Update started for instance group {name}", name)

    def lose_nodes(self, name: str, count: int) -> None:
        """``count`` of the group's healthy nodes fail now (HyperPod replaces them when its
        capacity curve allows; the group stays InService: its minimum only governed the first
        transition)."""
        self.advance()
        group = self.groups[name]
        del group.healthy[max(0, len(group.healthy) - count) :]
        group.next_attempt_at = self.clock.time()
        self._emit("Warn", f"{count} instance(s) of instance group {name} failed", name)

    def remove_group(self, name: str) -> None:
        """UpdateCluster removing an instance group: it is Deleting from now on."""
        self.advance()
        group = self.groups[name]
        group.status = "Deleting"
        group.gating = False
        group.pending.clear()
        self._emit("Info", f"Deleting instance group {name}", name)

    def fail_controller(self, message: str) -> None:
        """A non-retryable controller failure, now."""
        self.advance()
        self._fail(message)

    def delete_cluster(self) -> None:
        """DeleteCluster, now: Deleting for ``delete_seconds``, then gone."""
        self.advance()
        self.status = "Deleting"
        self.deleting_since = self.clock.time()

    def inject(
        self,
        kind: str,
        *,
        operation: str | None = "DescribeCluster",
        count: int | None = None,
        start: float | None = None,
        end: float | None = None,
    ) -> Fault:
        """Make matching requests fail; ``kind`` is one of :data:`FAULT_KINDS`."""
        code, status, message = FAULT_KINDS[kind]
        message = message.format(op=operation or "DescribeCluster", arn=self.arn)
        fault = Fault(operation, code, status, message, count, start, end)
        self.faults.append(fault)
        return fault

    # -- model -----------------------------------------------------------------
    def _controller(self) -> _Group:
        return next(g for g in self.groups.values() if g.spec.node_type == "Controller")

    def _controller_healthy(self) -> bool:
        return any(g.spec.node_type == "Controller" and g.healthy for g in self.groups.values())

    def _emit(
        self, level: Literal["Info", "Warn", "Error"], description: str, group: str | None
    ) -> None:
        self._event_ids += 1
        self.events.append(
            Event(f"evt-{self._event_ids:06d}", self.clock.time(), level, description, group)
        )

    def _emit_at(
        self, t: float, level: Literal["Info", "Warn", "Error"], text: str, group: str | None
    ) -> None:
        self._event_ids += 1
        self.events.append(Event(f"evt-{self._event_ids:06d}", t, level, text, group))

    def _start(self, group: _Group, t: float) -> None:
        group.started_at = t
        group.next_attempt_at = t
        group.listed = True

    def _fail(self, message: str) -> None:
        self.status = "Failed"
        self.failure_message = message
        controller = self._controller()
        controller.status = "Failed"
        self._emit("Error", message, controller.spec.name)

    def advance(self) -> None:
        """Bring the model up to the clock (ticks of TICK seconds)."""
        now = self.clock.time()
        while self._ticked_to + TICK <= now:
            self._ticked_to += TICK
            self._tick(self._ticked_to)

    def _new_instance(self, group: _Group, t: float) -> _Instance:
        self._instance_ids += 1
        ready = t + group.spec.boot_seconds
        return _Instance(
            f"i-{self._instance_ids:017x}", t, ready, ready + group.spec.deep_health_check_seconds
        )

    def _count(self, group: _Group) -> int:
        """The group's ``CurrentCount`` (see :data:`CurrentCountMode`)."""
        if self.current_count == "in_group":
            return len(group.healthy) + len(group.pending)
        return len(group.healthy)

    def _tick(self, t: float) -> None:
        if self.deleted or self.status == "Failed":
            return
        if self.status == "Deleting":
            assert self.deleting_since is not None
            if t >= self.deleting_since + self.delete_seconds:
                self.deleted = True
            return
        for group in list(self.groups.values()):
            self._tick_group(group, t)
            if self.status == "Failed":
                return
        controller = self._controller()
        if controller.healthy:
            for group in self.groups.values():
                if group.started_at is None:
                    self._start(group, t)
        logins = [g for g in self.groups.values() if g.spec.node_type == "Login"]
        cluster_up = bool(controller.healthy) and all(g.healthy for g in logins)
        if cluster_up:
            updating = any(g.status == "Updating" and not g.is_new for g in self.groups.values())
            self.status = "Updating" if updating else "InService"

    def _tick_group(self, group: _Group, t: float) -> None:
        spec = group.spec
        if group.started_at is None or group.status in ("Failed", "Deleting"):
            return
        ready = [i for i in group.pending if i.running_at <= t]
        if ready and spec.failure_message is not None and spec.node_type == "Controller":
            group.pending.remove(ready[0])
            self._fail(spec.failure_message)
            return
        if ready:  # one pass, not one list removal per node (groups of thousands)
            group.pending = [i for i in group.pending if i.running_at > t]
            group.healthy.extend(ready)
        if group.settle_at is not None and t >= group.settle_at:
            group.settle_at = None
            group.status = "InService"
            group.gating = False
        in_flight = len(group.healthy) + len(group.pending)
        if in_flight < group.target and t >= group.next_attempt_at:
            allowed = spec.capacity(t - self.created_at)
            launch = max(0, min(group.target, allowed) - in_flight)
            for _ in range(launch):
                group.pending.append(self._new_instance(group, t))
            short = group.target - in_flight - launch
            group.short = short > 0
            if short > 0 and spec.node_type == "Controller":
                # Facts: no capacity for the controller type is non-retryable.
                self._fail(
                    f"Instance group {spec.name} (Controller) could not be provisioned: "
                    f"InsufficientInstanceCapacity for {spec.instance_type}."
                )
                return
            if short > 0:
                self._emit_at(
                    t,
                    "Error",
                    f"Failed to launch {short} {spec.instance_type} instance(s) for instance "
                    f"group {spec.name}: InsufficientInstanceCapacity - we currently do not "
                    "have sufficient capacity in the Availability Zone you requested. "
                    "HyperPod retries the launch asynchronously.",
                    spec.name,
                )
                group.next_attempt_at = t + spec.retry_seconds
        current = self._count(group)
        if group.min_running_at is None and group.min > 0 and len(group.healthy) >= group.min:
            group.min_running_at = t
        if group.gating and group.settle_at is None:
            if current >= group.min:
                group.status = "InService"
                group.gating = False
                group.min_reached_at = t
                group.last_in_service = (group.min, group.target)
                if group.min > 0:
                    self._emit_at(
                        t,
                        "Info",
                        f"Minimum capacity reached for instance group {spec.name}: {current} "
                        f"of minimum {group.min} instances in service (target {group.target})",
                        spec.name,
                    )
            elif t >= group.min_set_at + ROLLBACK_WINDOW and spec.node_type != "Controller":
                self._rollback(group, t)
        if not group.gating and group.settle_at is None and group.status in HEALTH_STATUSES:
            whole = len(group.healthy) + len(group.pending) >= group.target
            group.status = "InService" if whole or not group.short else "Degraded"

    def _rollback(self, group: _Group, t: float) -> None:
        spec = group.spec
        current = len(group.healthy)
        group.rolled_back_at = t
        if group.is_new or group.last_in_service is None:
            self._emit_at(
                t,
                "Warn",
                f"Rollback initiated for instance group {spec.name}: minimum capacity "
                f"{group.min} not reached within 3 hours ({current} in service); rolling back "
                "to MinCount 0, TargetCount 0",
                spec.name,
            )
            group.min, group.target = 0, 0
            group.healthy.clear()
            group.pending.clear()
            group.status = "InService"
            group.gating = False
            return
        old_min, old_target = group.last_in_service
        self._emit_at(
            t,
            "Warn",
            f"Rollback initiated for instance group {spec.name}: minimum capacity {group.min} "
            f"not reached within 3 hours ({current} in service); rolling back to MinCount "
            f"{old_min}, TargetCount {old_target}",
            spec.name,
        )
        group.min, group.target = old_min, old_target
        group.pending = group.pending[: max(0, old_target - len(group.healthy))]
        del group.healthy[old_target:]
        group.status = "Updating"
        group.settle_at = t + 300.0

    # -- API -----------------------------------------------------------------
    def client(self, *, old_boto3: bool = False) -> Any:
        """A real boto3 SageMaker client answered by this simulator."""
        return self.fake.client(service_model_loader=old_boto3_session if old_boto3 else None)

    @property
    def calls(self) -> dict[str, int]:
        """HTTP attempts per operation (retries included)."""
        counts: dict[str, int] = {}
        for name, _ in self.fake.attempts:
            counts[name] = counts.get(name, 0) + 1
        return counts

    def hang(self, *, operation: str | None = "DescribeCluster", count: int | None = None) -> Fault:
        """Make matching requests hang: the client's read timeout expires (virtual time
        advances by it) and botocore sees a ReadTimeoutError, which it retries."""
        fault = Fault(operation, HANG, 0, "hangs", count)
        self.faults.append(fault)
        return fault

    def _handle(self, operation: str, params: dict[str, Any]) -> dict[str, Any]:
        if operation in self.latency:
            self.clock.advance(self.latency[operation])
        self.advance()
        now = self.clock.time()
        for fault in self.faults:
            if fault.code == HANG and fault.matches(operation, now):
                fault.hits += 1
                if fault.remaining is not None:
                    fault.remaining -= 1
                self.clock.advance(float(CLIENT_CONFIG.read_timeout))
                raise ReadTimeoutError(
                    endpoint_url=f"https://api.sagemaker.{REGION}.amazonaws.com/"
                )
        for fault in self.faults:
            if fault.code == HANG:
                continue
            if fault.matches(operation, now):
                fault.hits += 1
                if fault.remaining is not None:
                    fault.remaining -= 1
                raise ApiError(fault.code, fault.message, fault.status)
        requested = params.get("ClusterName")
        if self.deleted or requested not in (self.name, self.arn):
            raise ApiError("ResourceNotFound", f"Cluster {requested} not found.")
        if operation == "DescribeCluster":
            return self.describe()
        if operation == "ListClusterEvents":
            return self._list_events(params)
        if operation == "ListClusterNodes":
            return self._list_nodes(params)
        raise ApiError("ValidationException", f"{operation} is not simulated")

    def describe(self) -> dict[str, Any]:
        """The DescribeCluster response as the service would send it."""
        self.advance()
        groups = []
        for group in self.groups.values():
            if not group.listed:
                continue
            spec = group.spec
            detail: dict[str, Any] = {
                "InstanceGroupName": spec.name,
                "InstanceType": spec.instance_type,
                "Status": group.status,
                "CurrentCount": self._count(group),
                "TargetCount": group.target,
                "MinCount": group.min,
                "ExecutionRole": f"arn:aws:iam::{ACCOUNT}:role/HyperPodInstanceRole",
                "ThreadsPerCore": 1,
                "LifeCycleConfig": {
                    "SourceS3Uri": "s3://sagemaker-lifecycle-123456789012/train/",
                    "OnCreate": "on_create.sh",
                },
                "SlurmConfig": {"NodeType": spec.node_type},
            }
            if spec.node_type == "Compute":
                detail["SlurmConfig"]["PartitionNames"] = [spec.name]
            groups.append(detail)
        response: dict[str, Any] = {
            "ClusterArn": self.arn,
            "ClusterName": self.name,
            "ClusterStatus": self.status,
            "CreationTime": datetime.fromtimestamp(self.created_at, UTC),
            "InstanceGroups": groups,
            "VpcConfig": {"SecurityGroupIds": ["sg-0123456789abcdef0"], "Subnets": ["subnet-0a1b"]},
            "Orchestrator": {"Slurm": {}},
            "NodeRecovery": "Automatic",
            "NodeProvisioningMode": "Continuous",
        }
        if self.failure_message:
            response["FailureMessage"] = self.failure_message
        return response

    def _page(
        self, items: list[Any], params: dict[str, Any], default: int
    ) -> tuple[list[Any], str | None]:
        size = int(params.get("MaxResults") or default)
        offset = int(params.get("NextToken") or 0)
        chunk = items[offset : offset + size]
        token = str(offset + size) if offset + size < len(items) else None
        return chunk, token

    def _list_events(self, params: dict[str, Any]) -> dict[str, Any]:
        max_results = params.get("MaxResults")
        if max_results is not None and not 1 <= int(max_results) <= 100:
            raise ApiError("ValidationException", "MaxResults must be between 1 and 100")
        events = list(self.events)
        if params.get("InstanceGroupName"):
            events = [e for e in events if e.group == params["InstanceGroupName"]]
        if params.get("EventTimeAfter") is not None:
            events = [e for e in events if e.time > float(params["EventTimeAfter"])]
        if params.get("EventTimeBefore") is not None:
            events = [e for e in events if e.time < float(params["EventTimeBefore"])]
        events.sort(
            key=lambda e: (e.time, e.event_id), reverse=params.get("SortOrder") == "Descending"
        )
        chunk, token = self._page(events, params, 10)
        response: dict[str, Any] = {
            "Events": [
                {
                    "EventId": e.event_id,
                    "ClusterArn": self.arn,
                    "ClusterName": self.name,
                    **({"InstanceGroupName": e.group} if e.group else {}),
                    "ResourceType": "InstanceGroup" if e.group else "Cluster",
                    "EventTime": datetime.fromtimestamp(e.time, UTC),
                    "Description": e.description,
                    "EventLevel": e.level,
                }
                for e in chunk
            ]
        }
        if token:
            response["NextToken"] = token
        return response

    def _list_nodes(self, params: dict[str, Any]) -> dict[str, Any]:
        max_results = params.get("MaxResults")
        if max_results is not None and not 1 <= int(max_results) <= NODE_PAGE_MAX:
            raise ApiError("ValidationException", "MaxResults must be between 1 and 100")
        token = params.get("NextToken")
        if token is not None and not str(token).isdigit():
            raise ApiError("ValidationException", "Invalid NextToken")
        now = self.clock.time()
        listed = self._sorted_nodes(params)
        chunk, token = self._page(listed, params, NODE_PAGE_MAX)
        nodes = [
            {
                "InstanceGroupName": group.spec.name,
                "InstanceId": instance.instance_id,
                "InstanceType": group.spec.instance_type,
                "LaunchTime": datetime.fromtimestamp(instance.launched_at, UTC),
                "InstanceStatus": {"Status": "Running" if healthy else instance.status(now)},
            }
            for group, instance, healthy in chunk
        ]
        response: dict[str, Any] = {"ClusterNodeSummaries": nodes}
        if token:
            response["NextToken"] = token
        return response

    def _sorted_nodes(self, params: dict[str, Any]) -> list[tuple[_Group, _Instance, bool]]:
        """The nodes a ListClusterNodes request pages through, in its order; the order is
        kept until a node is launched, promoted or removed (a large cluster is listed page by
        page without sorting it again for each page)."""
        contains = params.get("InstanceGroupNameContains") or ""
        by_name = params.get("SortBy") == "NAME"
        descending = params.get("SortOrder") == "Descending"
        membership = tuple((len(g.healthy), len(g.pending)) for g in self.groups.values())
        key = (contains, by_name, descending, self._instance_ids, membership)
        if self._listing is not None and self._listing[0] == key:
            return self._listing[1]
        listed = [
            (group, instance, healthy)
            for group in self.groups.values()
            if contains in group.spec.name
            for healthy, instances in ((True, group.healthy), (False, group.pending))
            for instance in instances
        ]
        listed.sort(
            key=lambda n: (n[1].instance_id,) if by_name else (n[1].launched_at, n[1].instance_id),
            reverse=descending,
        )
        self._listing = (key, listed)
        return listed

    # -- observations for assertions -----------------------------------------------
    def min_reached_at(self, name: str) -> float | None:
        """Virtual time the group last reached its minimum (None if it has not)."""
        self.advance()
        return self.groups[name].min_reached_at

    def min_running_at(self, name: str) -> float | None:
        """Virtual time at which the group first had its minimum of ``Running`` nodes (None if
        it has not since its minimum was last set)."""
        self.advance()
        return self.groups[name].min_running_at

    def rolled_back_at(self, name: str) -> float | None:
        """Virtual time the group was rolled back (None if it was not)."""
        self.advance()
        return self.groups[name].rolled_back_at
