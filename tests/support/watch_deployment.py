"""A deployment of the example app's ``FsdpTraining`` stack for ``watch`` tests.

The cluster's groups, the gate's requirements and its wait condition come from the synthesized
template; the HyperPod simulator and a stack fake are served on a local HTTP endpoint
(:class:`~tests.support.sim_server.SimServer`), and the real gate (arm and check Lambdas, the ASL
loop, in :class:`~tests.support.world.GateWorld`) signals the wait condition, all in virtual
time. ``watch`` runs in this process with real boto3 clients pointed at the endpoint; its
sleep moves virtual time forward.
"""

from __future__ import annotations

import io
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import pytest

from hyperpod_constructs.__main__ import _parser
from hyperpod_constructs.tools.watch.cli import run_watch

from .hyperpod_sim import CapacityCurve
from .sim_server import SimServer
from .stack_fake import FakeStack
from .wire import REGION
from .world import GateWorld, Requirement, simulated_groups, template_resolver

STACK = "FsdpTraining"
ARM_AFTER = 900.0
"""Seconds after cluster creation when CloudFormation completes the cluster resource and arms the
gate (the controller boots in 600 s in the simulator)."""


def resources_of(template: Mapping[str, Any], kind: str) -> list[tuple[str, Mapping[str, Any]]]:
    return [(k, r) for k, r in template["Resources"].items() if r["Type"] == kind]


def aws_environment(monkeypatch: pytest.MonkeyPatch, endpoint: str | None) -> None:
    """Credentials from the environment only, nothing from this machine's AWS config."""
    for name in ("AWS_PROFILE", "AWS_DEFAULT_PROFILE", "AWS_SESSION_TOKEN", "AWS_DEFAULT_REGION"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIDWATCHTESTWATCHTE")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "watch-test-secret")
    monkeypatch.setenv("AWS_CONFIG_FILE", "/dev/null")
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", "/dev/null")
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    if endpoint is None:
        monkeypatch.delenv("AWS_ENDPOINT_URL", raising=False)
    else:
        monkeypatch.setenv("AWS_ENDPOINT_URL", endpoint)


@dataclass
class WatchRun:
    code: int
    stdout: str
    stderr: str

    @property
    def refreshes(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.stdout.splitlines()]


@dataclass
class Deployment:
    """The stack being created, its cluster and its gate."""

    monkeypatch: pytest.MonkeyPatch
    template: Mapping[str, Any]
    capacity: CapacityCurve
    controller_failure: str | None = None
    previous_min: int | None = None
    """The gated groups' MinInstanceCount at creation when not the template's (the stack is
    then updated to the template's values, see :meth:`update_to_template`)."""
    arm_after: float | None = ARM_AFTER
    """When CloudFormation arms the gate (None: never, e.g. a deployed stack of other values)."""
    parameters: Mapping[str, str] = field(default_factory=dict)
    """The stack's parameter values (the template's defaults for the others)."""
    world: GateWorld = field(init=False)
    stack: FakeStack = field(init=False)

    def __post_init__(self) -> None:
        specs = simulated_groups(self.template, self.capacity, self.parameters)
        self.gated = [spec.name for spec in specs if spec.min_instance_count > 0]
        for spec in specs:
            if spec.node_type == "Controller":
                spec.failure_message = self.controller_failure
            if spec.name in self.gated and self.previous_min is not None:
                spec.min_instance_count = self.previous_min
        ((_, cluster),) = resources_of(self.template, "AWS::SageMaker::Cluster")
        self.world = GateWorld(
            self.monkeypatch,
            specs,
            topic=False,
            sim_options={"name": cluster["Properties"]["ClusterName"]},
            template=self.template,
            parameters=self.parameters,
        )
        self.stack = FakeStack(self.world.clock, STACK, self.template, self.parameters)
        if self.arm_after is not None:
            self.world.at(self.arm_after, self._arm)

    @property
    def sim(self) -> Any:
        return self.world.sim

    def _arm(self) -> None:
        """CloudFormation: the cluster resource is complete; create the arm custom resource
        (which starts the real gate loop) and the wait condition."""
        if self.sim.status == "Failed":
            self.stack.status = "ROLLBACK_IN_PROGRESS"
            self.stack.reason = "The following resource(s) failed to create: [Cluster]."
            return
        ((cluster_id, _),) = resources_of(self.template, "AWS::SageMaker::Cluster")
        ((gate_id, gate),) = resources_of(self.template, "Custom::HyperPodMinCountGate")
        props = gate["Properties"]
        condition_id = props["WaitConditionLogicalId"]
        ((_, condition),) = resources_of(self.template, "AWS::CloudFormation::WaitCondition")
        assert condition["CreationPolicy"]["ResourceSignal"]["Count"] == 1
        if cluster_id not in self.stack.resources:
            self.stack.create(cluster_id, physical_id=self.sim.arn)
        resolve = template_resolver(self.template, self.parameters)
        requirements = [
            Requirement(r["GroupName"], int(resolve(r["MinCount"])), int(resolve(r["TargetCount"])))
            for r in props["Requirements"]
        ]
        # The world runs this template's gate: its arm resource and wait condition.
        response = self.world.arm_gate(requirements)
        assert response["Status"] == "SUCCESS", response
        self.stack.create(gate_id)
        self.stack.link_wait_condition(condition_id, self.world.cfn)

    def update_to_template(self) -> None:
        """CloudFormation updates the stack: UpdateCluster sets the template's minimums now (the
        cluster resource's update time), and the gate is armed five minutes later."""
        ((cluster_id, cluster),) = resources_of(self.template, "AWS::SageMaker::Cluster")
        for group in cluster["Properties"]["InstanceGroups"]:
            if group["InstanceGroupName"] in self.gated:
                self.sim.update_group(
                    group["InstanceGroupName"], min_instance_count=int(group["MinInstanceCount"])
                )
        self.stack.status = "UPDATE_IN_PROGRESS"
        self.stack.create(cluster_id, "UPDATE_COMPLETE", physical_id=self.sim.arn)
        self.world.scheduler.after(300, self._arm)

    def sleep(self, seconds: float) -> None:
        """``watch``'s sleep: the world (HyperPod, the gate loop) moves on by ``seconds``."""
        self.world.run(until_elapsed=self.world.clock.elapsed + seconds, stop_when_idle=False)

    def server(self, **options: Any) -> SimServer:
        return SimServer(
            {"sagemaker": self.sim.fake, "cloudformation": self.stack.fake},
            clock=self.world.clock.time,
            **options,
        )

    def watch(self, cdk_out: str | None, *extra: str, endpoint: str) -> WatchRun:
        """Run ``watch --stack FsdpTraining`` (``--app cdk_out`` unless None) in process."""
        aws_environment(self.monkeypatch, endpoint)
        app = ["--app", cdk_out] if cdk_out is not None else []
        args = _parser().parse_args(["watch", *app, "--stack", STACK, "--region", REGION, *extra])
        out, err = io.StringIO(), io.StringIO()
        code = run_watch(args, sleep=self.sleep, now=self.world.clock.now, stdout=out, stderr=err)
        return WatchRun(code, out.getvalue(), err.getvalue())
