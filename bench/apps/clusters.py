"""N gated clusters in one stack, each with a dependant: what an organisation's pipeline
synthesizes for its teams.

Usage: ``clusters.py N``. Each cluster is a controller and one compute group of 2
``ml.p5.48xlarge`` gated at 2 (no VPC, no lifecycle scripts), and an SSM parameter that waits
for its readiness gate (``cluster.ready``). ``clusters.py 1`` is the gated cluster with a
dependant; ``clusters.py 20`` the twenty-cluster case. The floor of either is ``floor.py``
given the template this app writes.
"""

from __future__ import annotations

import _harness

_harness.start()

import sys  # noqa: E402
from typing import Any  # noqa: E402

from aws_cdk import Stack  # noqa: E402
from aws_cdk import aws_ssm as ssm  # noqa: E402

from hyperpod_constructs import (  # noqa: E402
    HyperPodInstanceType,
    HyperPodSlurmCluster,
    InstanceGroup,
)


def define_clusters(app: Any, count: int) -> None:
    """Add the stack with ``count`` gated clusters and their dependants to ``app``."""
    stack = Stack(app, "Clusters")
    for index in range(count):
        cluster = HyperPodSlurmCluster(
            stack,
            f"Cluster{index}",
            cluster_name=f"team-{index}",
            instance_groups=[
                InstanceGroup.controller(
                    "controller", instance_type=HyperPodInstanceType.ML_M5_2XLARGE
                ),
                InstanceGroup.compute(
                    "gpu",
                    instance_type=HyperPodInstanceType.ML_P5_48XLARGE,
                    instance_count=2,
                    min_instance_count=2,
                ),
            ],
        )
        ready = ssm.StringParameter(
            stack, f"Ready{index}", string_value=cluster.cluster_name, parameter_name=None
        )
        ready.node.add_dependency(cluster.ready)


def define(app: Any) -> None:
    """Add the stack of ``clusters.py N`` to ``app``."""
    define_clusters(app, int(sys.argv[1]))


if __name__ == "__main__":
    _harness.run(define)
