"""Organisation policy for HyperPod clusters, applied as a CDK Aspect.

``Aspects.of(app).add(HyperPodPolicy(...))`` checks every HyperPod cluster in the app at
synth; see ``docs/policies.md``.
"""

from .._cdk.dependable import DropImpliedDependsOn
from .aspect import EXEMPTION_METADATA, WARNING_ID_PREFIX, HyperPodPolicy, PolicyExemption
from .rules import (
    AllowedInstanceTypes,
    ClusterFacts,
    EbsCustomerManagedKey,
    MaxInstanceCount,
    MinInstanceFloor,
    PolicyRule,
    PolicyRuleId,
    PolicySeverity,
    RequiredDeepHealthChecks,
    RequiredTags,
    VpcRequired,
)

__all__ = [
    "EXEMPTION_METADATA",
    "WARNING_ID_PREFIX",
    "AllowedInstanceTypes",
    "ClusterFacts",
    "DropImpliedDependsOn",
    "EbsCustomerManagedKey",
    "HyperPodPolicy",
    "MaxInstanceCount",
    "MinInstanceFloor",
    "PolicyExemption",
    "PolicyRule",
    "PolicyRuleId",
    "PolicySeverity",
    "RequiredDeepHealthChecks",
    "RequiredTags",
    "VpcRequired",
]
