"""Scheduled AMI updates of an instance group (``ScheduledUpdateConfig``)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from aws_cdk import Duration

from .enums import BatchSizeType


@dataclass(frozen=True)
class BatchSize:
    """How many instances a rolling AMI update replaces at a time (``CapacitySizeConfig``).

    Create it with :meth:`instances` or :meth:`percentage`; the value must be at least 1.

    Example:

    ```python
    BatchSize.instances(2), BatchSize.percentage(25)
    ```
    """

    type: BatchSizeType
    """``Type``: a count of instances or a percentage of the group."""
    value: int
    """``Value``: the number of instances, or the percentage (at least 1)."""

    @classmethod
    def instances(cls, count: int) -> BatchSize:
        """``count`` instances per batch.

        :param count: instances replaced at a time, at least 1.
        """
        return cls(BatchSizeType.INSTANCE_COUNT, count)

    @classmethod
    def percentage(cls, percent: int) -> BatchSize:
        """``percent`` % of the group's instances per batch (``Type: CAPACITY_PERCENTAGE``).

        :param percent: the share of the group's instances replaced at a time, 1..100.
        """
        return cls(BatchSizeType.CAPACITY_PERCENTAGE, percent)

    def render(self) -> dict[str, Any]:
        """The CloudFormation ``CapacitySizeConfig`` object."""
        return {"Type": self.type.value, "Value": self.value}


@dataclass(frozen=True, kw_only=True)
class ScheduledUpdate:
    """When and how HyperPod rolls a new AMI onto a group.

    Example:

    ```python
    ScheduledUpdate(
        schedule_expression="cron(0 3 ? * SUN *)",  # Sundays 03:00 UTC
        maximum_batch_size=BatchSize.percentage(25),
        wait_interval=Duration.minutes(10),
    )  # InstanceGroup.compute(..., scheduled_update=...)
    ```

    :param schedule_expression: ``cron(...)`` in HyperPod's 6-field format, e.g.
        ``cron(0 3 ? * SUN *)``.
    :param maximum_batch_size: instances replaced at a time. Default: HyperPod's default.
    :param rollback_maximum_batch_size: instances rolled back at a time (needs
        ``maximum_batch_size``). Default: HyperPod's default.
    :param wait_interval: pause between batches, 0..3600 s. Default: HyperPod's default.
    :param rollback_alarms: CloudWatch alarm names (1..10) that roll the update back.
        Default: none.
    """

    schedule_expression: str
    maximum_batch_size: BatchSize | None = None
    rollback_maximum_batch_size: BatchSize | None = None
    wait_interval: Duration | None = None
    rollback_alarms: Sequence[str] = ()

    def wait_interval_seconds(self) -> float | None:
        """The wait interval in seconds (``None`` when not set)."""
        if self.wait_interval is None:
            return None
        return float(self.wait_interval.to_seconds())

    def render(self) -> dict[str, Any]:
        """The CloudFormation ``ScheduledUpdateConfig`` object (optional keys omitted)."""
        deployment: dict[str, Any] = {}
        if self.maximum_batch_size is not None or self.rollback_maximum_batch_size is not None:
            policy: dict[str, Any] = {}
            if self.maximum_batch_size is not None:
                policy["MaximumBatchSize"] = self.maximum_batch_size.render()
            if self.rollback_maximum_batch_size is not None:
                policy["RollbackMaximumBatchSize"] = self.rollback_maximum_batch_size.render()
            deployment["RollingUpdatePolicy"] = policy
        seconds = self.wait_interval_seconds()
        if seconds is not None:
            deployment["WaitIntervalInSeconds"] = int(seconds)
        if self.rollback_alarms:
            deployment["AutoRollbackConfiguration"] = [
                {"AlarmName": name} for name in self.rollback_alarms
            ]
        body: dict[str, Any] = {"ScheduleExpression": self.schedule_expression}
        if deployment:
            body["DeploymentConfig"] = deployment
        return body
