"""The CloudFormation resource types the tools look for in a template."""

CLUSTER_TYPE = "AWS::SageMaker::Cluster"
"""The resource type rendered by :class:`~hyperpod_constructs.HyperPodSlurmCluster`."""
WAIT_CONDITION_TYPE = "AWS::CloudFormation::WaitCondition"
"""The readiness gate's wait condition."""
NESTED_STACK_TYPE = "AWS::CloudFormation::Stack"
"""A nested stack (CDK's ``NestedStack``)."""
