"""Notifications a pipeline can use.

Each SNS message the gate publishes carries a JSON body (``notify.MESSAGE_SCHEMA``, checked
here with the ``jsonschema`` library) and message attributes to filter on; the messages the
real handlers sent in a harness world are published again through a real boto3 SNS client to
moto's SNS (botocore validates them against the Publish input shape), where a subscription
with a filter policy on ``decision`` receives exactly the READY one."""

from __future__ import annotations

import json
from typing import Any

import boto3  # type: ignore[import-untyped, unused-ignore]
import pytest
from aws_cdk.assertions import Match
from botocore.validate import ParamValidator  # type: ignore[import-untyped, unused-ignore]
from jsonschema import Draft202012Validator  # type: ignore[import-untyped, unused-ignore]
from moto import mock_aws

from hyperpod_constructs._runtime.hyperpod_gate import notify, poll
from tests.support.groups import controller_spec
from tests.support.hyperpod_sim import GroupSpec, constant, steps
from tests.support.wire import reference_model
from tests.support.world import GateWorld

MIN, HOUR = 60, 3600
ARM_AT = MIN


def cluster(capacity: Any) -> list[GroupSpec]:
    return [
        controller_spec(),
        GroupSpec("gpu", 16, 16, capacity=capacity),
    ]


def published(monkeypatch: pytest.MonkeyPatch, capacity: Any, **options: Any) -> dict[str, Any]:
    """The one message a gate world published (READY with capacity, FAILED without)."""
    with monkeypatch.context() as mp:
        w = GateWorld(mp, cluster(capacity), **options)
        w.clock.advance(ARM_AT)
        assert w.arm_gate()["Status"] == "SUCCESS"
        w.run(until_elapsed=6 * HOUR)
        (message,) = w.sns.messages
        w.assert_no_secret_leak()
        w.close()
    return message


def validator() -> Draft202012Validator:
    Draft202012Validator.check_schema(notify.MESSAGE_SCHEMA)
    return Draft202012Validator(
        notify.MESSAGE_SCHEMA, format_checker=Draft202012Validator.FORMAT_CHECKER
    )


def test_schema_is_pinned() -> None:
    """The schema is stable: version 2 and its required fields are what docs/gate.md lists (a
    change here is a new schemaVersion, not an edit; 2 added operation, waitedFor, leftOut)."""
    assert notify.SCHEMA_VERSION == "2"
    assert notify.MESSAGE_SCHEMA["required"] == [
        "schemaVersion",
        "type",
        "status",
        "decision",
        "clusterName",
        "stackId",
        "stackName",
        "reason",
        "time",
        "groups",
        "operation",
        "waitedFor",
        "leftOut",
    ]
    group = notify.MESSAGE_SCHEMA["properties"]["groups"]["items"]
    assert group["required"] == [
        "name",
        "status",
        "currentCount",
        "minCount",
        "targetCount",
        "runningCount",
    ]


def test_ready_and_failed_messages_follow_the_schema(monkeypatch: pytest.MonkeyPatch) -> None:
    """READY (confirmed: 16 Running) and FAILED (the deadline) bodies validate against the
    schema; the attributes repeat the body's decision, cluster and stack."""
    check = validator()
    ready = published(monkeypatch, steps((0, 0), (30 * MIN, 16)))
    failed = published(monkeypatch, constant(4), timeout_seconds=HOUR)
    for message, decision in ((ready, "READY"), (failed, "FAILED")):
        body = json.loads(message["Message"])
        errors = [e.message for e in check.iter_errors(body)]
        assert errors == []
        assert body["status"] == body["decision"] == decision
        assert body["clusterName"] == "train"
        assert body["stackName"] == body["stackId"].split("/")[1]
        attributes = message["MessageAttributes"]
        assert {k: v["StringValue"] for k, v in attributes.items()} == {
            "decision": decision,
            "status": decision,
            "cluster": "train",
            "stack": body["stackName"],
            "type": notify.MESSAGE_TYPE,
            "schemaVersion": notify.SCHEMA_VERSION,
        }
    (gpu,) = json.loads(ready["Message"])["groups"]
    assert gpu == {
        "name": "gpu",
        "status": "InService",
        "currentCount": 16,
        "minCount": 16,
        "targetCount": 16,
        "runningCount": 16,  # confirmed with ListClusterNodes
    }
    (short,) = json.loads(failed["Message"])["groups"]
    assert short["currentCount"] == 4 and short["runningCount"] is None


def test_a_pipeline_filters_on_the_decision_through_real_sns(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The gate's messages, published again through a real SNS client (botocore validates the
    parameters against Publish's input shape) to moto: a queue subscribed with the filter
    policy ``{"decision": ["READY"]}`` receives the READY message only, body intact."""
    ready = published(monkeypatch, steps((0, 0), (30 * MIN, 16)))
    failed = published(monkeypatch, constant(4), timeout_seconds=HOUR)
    shape = reference_model("sns").operation_model("Publish").input_shape
    for message in (ready, failed):
        assert not ParamValidator().validate(message, shape).has_errors()
    with mock_aws():
        sns = boto3.client("sns", region_name="us-east-1")
        sqs = boto3.client("sqs", region_name="us-east-1")
        topic = sns.create_topic(Name="gate")["TopicArn"]
        queue = sqs.create_queue(QueueName="pipeline")["QueueUrl"]
        queue_arn = sqs.get_queue_attributes(QueueUrl=queue, AttributeNames=["QueueArn"])[
            "Attributes"
        ]["QueueArn"]
        sns.subscribe(
            TopicArn=topic,
            Protocol="sqs",
            Endpoint=queue_arn,
            Attributes={
                "FilterPolicy": json.dumps({"decision": ["READY"]}),
                "RawMessageDelivery": "true",
            },
        )
        for message in (failed, ready):
            sns.publish(**{**message, "TopicArn": topic})
        received = sqs.receive_message(QueueUrl=queue, MaxNumberOfMessages=10)["Messages"]
    assert [json.loads(m["Body"]) for m in received] == [json.loads(ready["Message"])]


def test_the_running_count_is_a_metric(monkeypatch: pytest.MonkeyPatch) -> None:
    """The check that confirmed the Running nodes logs them as the EMF metric RunningCount."""
    with monkeypatch.context() as mp:
        w = GateWorld(mp, cluster(steps((0, 0), (30 * MIN, 16))))
        w.clock.advance(ARM_AT)
        assert w.arm_gate()["Status"] == "SUCCESS"
        w.run(until_elapsed=3 * HOUR)
        documents = [
            json.loads(line)
            for line in w.stdout().splitlines()
            if line.startswith("{") and poll.RUNNING_COUNT_METRIC in line
        ]
        w.close()
    assert documents, "no RunningCount metric"
    last = documents[-1]
    names = [m["Name"] for m in last["_aws"]["CloudWatchMetrics"][0]["Metrics"]]
    assert poll.RUNNING_COUNT_METRIC in names
    assert last["InstanceGroup"] == "gpu" and last[poll.RUNNING_COUNT_METRIC] == 16


# -- the subscription that comes too late ---------------------------------------------------


def _subscribed(*, after_ready: bool) -> list[Any]:
    from aws_cdk import Stack
    from aws_cdk import aws_sns_subscriptions as subscriptions
    from aws_cdk import aws_sqs as sqs
    from aws_cdk.assertions import Annotations

    from hyperpod_constructs import MinCountGateOptions
    from hyperpod_constructs._gate.subscriptions import WARNING_ID
    from tests.gate.test_construct import build, compute, controller

    def subscribe(stack: Stack, cluster: Any) -> None:
        gate = cluster.min_count_gate
        queue = sqs.Queue(stack, "Pipeline", enforce_ssl=True)
        subscription = gate.topic.add_subscription(subscriptions.SqsSubscription(queue))
        if after_ready:  # the README's pattern for dependants, applied to the subscription
            subscription.node.add_dependency(cluster.ready)

    stack, _ = build(
        [controller(), compute("gpu", 4, 4)],
        MinCountGateOptions(create_notification_topic=True),
        after=subscribe,
    )
    found: list[Any] = Annotations.from_stack(stack).find_warning(
        "*", Match.string_like_regexp(WARNING_ID.split(":")[1])
    )
    return found


def test_a_subscription_that_waits_for_ready_is_a_synth_warning() -> None:
    """A subscription to the gate's topic that depends on cluster.ready would be created after
    the READY message: the synth warns, naming the wait condition; without the dependency it
    does not."""
    (warning,) = _subscribed(after_ready=True)
    assert "never receives the READY message" in str(warning.entry.data)
    assert _subscribed(after_ready=False) == []
