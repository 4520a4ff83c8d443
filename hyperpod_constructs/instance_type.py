"""Instance types HyperPod accepts, and how many accelerators each one carries."""

from __future__ import annotations

import re
from typing import ClassVar, Literal

ACCELERATORS_PER_INSTANCE: dict[str, int] = {
    "ml.g5.12xlarge": 4,
    "ml.g5.16xlarge": 1,
    "ml.g5.24xlarge": 4,
    "ml.g5.2xlarge": 1,
    "ml.g5.48xlarge": 8,
    "ml.g5.4xlarge": 1,
    "ml.g5.8xlarge": 1,
    "ml.g5.xlarge": 1,
    "ml.g6.12xlarge": 4,
    "ml.g6.16xlarge": 1,
    "ml.g6.24xlarge": 4,
    "ml.g6.2xlarge": 1,
    "ml.g6.48xlarge": 8,
    "ml.g6.4xlarge": 1,
    "ml.g6.8xlarge": 1,
    "ml.g6.xlarge": 1,
    "ml.g6e.12xlarge": 4,
    "ml.g6e.16xlarge": 1,
    "ml.g6e.24xlarge": 4,
    "ml.g6e.2xlarge": 1,
    "ml.g6e.48xlarge": 8,
    "ml.g6e.4xlarge": 1,
    "ml.g6e.8xlarge": 1,
    "ml.g6e.xlarge": 1,
    "ml.g7e.12xlarge": 2,
    "ml.g7e.24xlarge": 4,
    "ml.g7e.48xlarge": 8,
    "ml.gr6.4xlarge": 1,
    "ml.gr6.8xlarge": 1,
    "ml.p4d.24xlarge": 8,
    "ml.p4de.24xlarge": 8,
    "ml.p5.48xlarge": 8,
    "ml.p5.4xlarge": 1,
    "ml.p5e.48xlarge": 8,
    "ml.p5en.48xlarge": 8,
    "ml.p6-b200.48xlarge": 8,
    "ml.p6-b300.48xlarge": 8,
    "ml.p6e-gb200.36xlarge": 4,
    "ml.trn1.32xlarge": 16,
    "ml.trn1n.32xlarge": 16,
    "ml.trn2.3xlarge": 1,
    "ml.trn2.48xlarge": 16,
}
"""GPUs (or Trainium chips) per instance, for the types whose count the library knows.

Source: the accelerator table in ``shared/hyperpod-facts.md``. Types missing here are
either CPU-only or not yet catalogued: size them with explicit counts.
"""

_ACCELERATED_FAMILY = re.compile(r"^ml\.(p\d|g\d|gr\d|trn\d)")
_INSTANCE_TYPE = re.compile(r"^ml\.[a-z0-9-]+\.[a-z0-9]+$")

AcceleratorKind = Literal["gpu", "trainium"]


class HyperPodInstanceType:
    """An EC2 instance type for a HyperPod instance group (enum-like, open set).

    Use a constant such as ``HyperPodInstanceType.ML_P5_48XLARGE`` for the types the
    SageMaker API model lists today, or ``HyperPodInstanceType.of("ml.x.y")`` for types
    newer than this library. Changing a group's instance type replaces the group's
    instances (CloudFormation create-only property of the group).
    """

    ML_P4D_24XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.p4d.24xlarge`` (8 GPUs)."""
    ML_P4DE_24XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.p4de.24xlarge`` (8 GPUs)."""
    ML_P5_48XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.p5.48xlarge`` (8 GPUs)."""
    ML_P5_4XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.p5.4xlarge`` (1 GPUs)."""
    ML_P6E_GB200_36XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.p6e-gb200.36xlarge`` (4 GPUs)."""
    ML_TRN1_32XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.trn1.32xlarge`` (16 Trainium chips)."""
    ML_TRN1N_32XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.trn1n.32xlarge`` (16 Trainium chips)."""
    ML_G5_XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.g5.xlarge`` (1 GPUs)."""
    ML_G5_2XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.g5.2xlarge`` (1 GPUs)."""
    ML_G5_4XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.g5.4xlarge`` (1 GPUs)."""
    ML_G5_8XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.g5.8xlarge`` (1 GPUs)."""
    ML_G5_12XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.g5.12xlarge`` (4 GPUs)."""
    ML_G5_16XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.g5.16xlarge`` (1 GPUs)."""
    ML_G5_24XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.g5.24xlarge`` (4 GPUs)."""
    ML_G5_48XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.g5.48xlarge`` (8 GPUs)."""
    ML_C5_LARGE: ClassVar[HyperPodInstanceType]
    """``ml.c5.large``."""
    ML_C5_XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.c5.xlarge``."""
    ML_C5_2XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.c5.2xlarge``."""
    ML_C5_4XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.c5.4xlarge``."""
    ML_C5_9XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.c5.9xlarge``."""
    ML_C5_12XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.c5.12xlarge``."""
    ML_C5_18XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.c5.18xlarge``."""
    ML_C5_24XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.c5.24xlarge``."""
    ML_C5N_LARGE: ClassVar[HyperPodInstanceType]
    """``ml.c5n.large``."""
    ML_C5N_2XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.c5n.2xlarge``."""
    ML_C5N_4XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.c5n.4xlarge``."""
    ML_C5N_9XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.c5n.9xlarge``."""
    ML_C5N_18XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.c5n.18xlarge``."""
    ML_M5_LARGE: ClassVar[HyperPodInstanceType]
    """``ml.m5.large``."""
    ML_M5_XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.m5.xlarge``."""
    ML_M5_2XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.m5.2xlarge``."""
    ML_M5_4XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.m5.4xlarge``."""
    ML_M5_8XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.m5.8xlarge``."""
    ML_M5_12XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.m5.12xlarge``."""
    ML_M5_16XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.m5.16xlarge``."""
    ML_M5_24XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.m5.24xlarge``."""
    ML_T3_MEDIUM: ClassVar[HyperPodInstanceType]
    """``ml.t3.medium``."""
    ML_T3_LARGE: ClassVar[HyperPodInstanceType]
    """``ml.t3.large``."""
    ML_T3_XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.t3.xlarge``."""
    ML_T3_2XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.t3.2xlarge``."""
    ML_G6_XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.g6.xlarge`` (1 GPUs)."""
    ML_G6_2XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.g6.2xlarge`` (1 GPUs)."""
    ML_G6_4XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.g6.4xlarge`` (1 GPUs)."""
    ML_G6_8XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.g6.8xlarge`` (1 GPUs)."""
    ML_G6_16XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.g6.16xlarge`` (1 GPUs)."""
    ML_G6_12XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.g6.12xlarge`` (4 GPUs)."""
    ML_G6_24XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.g6.24xlarge`` (4 GPUs)."""
    ML_G6_48XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.g6.48xlarge`` (8 GPUs)."""
    ML_GR6_4XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.gr6.4xlarge`` (1 GPUs)."""
    ML_GR6_8XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.gr6.8xlarge`` (1 GPUs)."""
    ML_G6E_XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.g6e.xlarge`` (1 GPUs)."""
    ML_G6E_2XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.g6e.2xlarge`` (1 GPUs)."""
    ML_G6E_4XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.g6e.4xlarge`` (1 GPUs)."""
    ML_G6E_8XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.g6e.8xlarge`` (1 GPUs)."""
    ML_G6E_16XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.g6e.16xlarge`` (1 GPUs)."""
    ML_G6E_12XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.g6e.12xlarge`` (4 GPUs)."""
    ML_G6E_24XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.g6e.24xlarge`` (4 GPUs)."""
    ML_G6E_48XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.g6e.48xlarge`` (8 GPUs)."""
    ML_P5E_48XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.p5e.48xlarge`` (8 GPUs)."""
    ML_P5EN_48XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.p5en.48xlarge`` (8 GPUs)."""
    ML_P6_B200_48XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.p6-b200.48xlarge`` (8 GPUs)."""
    ML_TRN2_3XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.trn2.3xlarge`` (1 Trainium chips)."""
    ML_TRN2_48XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.trn2.48xlarge`` (16 Trainium chips)."""
    ML_C6I_LARGE: ClassVar[HyperPodInstanceType]
    """``ml.c6i.large``."""
    ML_C6I_XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.c6i.xlarge``."""
    ML_C6I_2XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.c6i.2xlarge``."""
    ML_C6I_4XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.c6i.4xlarge``."""
    ML_C6I_8XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.c6i.8xlarge``."""
    ML_C6I_12XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.c6i.12xlarge``."""
    ML_C6I_16XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.c6i.16xlarge``."""
    ML_C6I_24XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.c6i.24xlarge``."""
    ML_C6I_32XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.c6i.32xlarge``."""
    ML_M6I_LARGE: ClassVar[HyperPodInstanceType]
    """``ml.m6i.large``."""
    ML_M6I_XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.m6i.xlarge``."""
    ML_M6I_2XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.m6i.2xlarge``."""
    ML_M6I_4XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.m6i.4xlarge``."""
    ML_M6I_8XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.m6i.8xlarge``."""
    ML_M6I_12XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.m6i.12xlarge``."""
    ML_M6I_16XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.m6i.16xlarge``."""
    ML_M6I_24XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.m6i.24xlarge``."""
    ML_M6I_32XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.m6i.32xlarge``."""
    ML_R6I_LARGE: ClassVar[HyperPodInstanceType]
    """``ml.r6i.large``."""
    ML_R6I_XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.r6i.xlarge``."""
    ML_R6I_2XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.r6i.2xlarge``."""
    ML_R6I_4XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.r6i.4xlarge``."""
    ML_R6I_8XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.r6i.8xlarge``."""
    ML_R6I_12XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.r6i.12xlarge``."""
    ML_R6I_16XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.r6i.16xlarge``."""
    ML_R6I_24XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.r6i.24xlarge``."""
    ML_R6I_32XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.r6i.32xlarge``."""
    ML_I3EN_LARGE: ClassVar[HyperPodInstanceType]
    """``ml.i3en.large``."""
    ML_I3EN_XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.i3en.xlarge``."""
    ML_I3EN_2XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.i3en.2xlarge``."""
    ML_I3EN_3XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.i3en.3xlarge``."""
    ML_I3EN_6XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.i3en.6xlarge``."""
    ML_I3EN_12XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.i3en.12xlarge``."""
    ML_I3EN_24XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.i3en.24xlarge``."""
    ML_M7I_LARGE: ClassVar[HyperPodInstanceType]
    """``ml.m7i.large``."""
    ML_M7I_XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.m7i.xlarge``."""
    ML_M7I_2XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.m7i.2xlarge``."""
    ML_M7I_4XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.m7i.4xlarge``."""
    ML_M7I_8XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.m7i.8xlarge``."""
    ML_M7I_12XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.m7i.12xlarge``."""
    ML_M7I_16XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.m7i.16xlarge``."""
    ML_M7I_24XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.m7i.24xlarge``."""
    ML_M7I_48XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.m7i.48xlarge``."""
    ML_R7I_LARGE: ClassVar[HyperPodInstanceType]
    """``ml.r7i.large``."""
    ML_R7I_XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.r7i.xlarge``."""
    ML_R7I_2XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.r7i.2xlarge``."""
    ML_R7I_4XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.r7i.4xlarge``."""
    ML_R7I_8XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.r7i.8xlarge``."""
    ML_R7I_12XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.r7i.12xlarge``."""
    ML_R7I_16XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.r7i.16xlarge``."""
    ML_R7I_24XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.r7i.24xlarge``."""
    ML_R7I_48XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.r7i.48xlarge``."""
    ML_R5D_16XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.r5d.16xlarge``."""
    ML_G7E_2XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.g7e.2xlarge``."""
    ML_G7E_4XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.g7e.4xlarge``."""
    ML_G7E_8XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.g7e.8xlarge``."""
    ML_G7E_12XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.g7e.12xlarge`` (2 GPUs)."""
    ML_G7E_24XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.g7e.24xlarge`` (4 GPUs)."""
    ML_G7E_48XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.g7e.48xlarge`` (8 GPUs)."""
    ML_P6_B300_48XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.p6-b300.48xlarge`` (8 GPUs)."""
    ML_G4DN_XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.g4dn.xlarge``."""
    ML_G4DN_2XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.g4dn.2xlarge``."""
    ML_G4DN_4XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.g4dn.4xlarge``."""
    ML_G4DN_8XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.g4dn.8xlarge``."""
    ML_G4DN_12XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.g4dn.12xlarge``."""
    ML_G4DN_16XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.g4dn.16xlarge``."""
    ML_C6G_MEDIUM: ClassVar[HyperPodInstanceType]
    """``ml.c6g.medium``."""
    ML_C6G_LARGE: ClassVar[HyperPodInstanceType]
    """``ml.c6g.large``."""
    ML_C6G_XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.c6g.xlarge``."""
    ML_C6G_2XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.c6g.2xlarge``."""
    ML_C6G_4XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.c6g.4xlarge``."""
    ML_C6G_8XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.c6g.8xlarge``."""
    ML_C6G_12XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.c6g.12xlarge``."""
    ML_C6G_16XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.c6g.16xlarge``."""
    ML_C7G_MEDIUM: ClassVar[HyperPodInstanceType]
    """``ml.c7g.medium``."""
    ML_C7G_LARGE: ClassVar[HyperPodInstanceType]
    """``ml.c7g.large``."""
    ML_C7G_XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.c7g.xlarge``."""
    ML_C7G_2XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.c7g.2xlarge``."""
    ML_C7G_4XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.c7g.4xlarge``."""
    ML_C7G_8XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.c7g.8xlarge``."""
    ML_C7G_12XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.c7g.12xlarge``."""
    ML_C7G_16XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.c7g.16xlarge``."""
    ML_C8G_MEDIUM: ClassVar[HyperPodInstanceType]
    """``ml.c8g.medium``."""
    ML_C8G_LARGE: ClassVar[HyperPodInstanceType]
    """``ml.c8g.large``."""
    ML_C8G_XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.c8g.xlarge``."""
    ML_C8G_2XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.c8g.2xlarge``."""
    ML_C8G_4XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.c8g.4xlarge``."""
    ML_C8G_8XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.c8g.8xlarge``."""
    ML_C8G_12XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.c8g.12xlarge``."""
    ML_C8G_16XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.c8g.16xlarge``."""
    ML_C8G_24XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.c8g.24xlarge``."""
    ML_C8G_48XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.c8g.48xlarge``."""
    ML_C6A_LARGE: ClassVar[HyperPodInstanceType]
    """``ml.c6a.large``."""
    ML_C6A_XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.c6a.xlarge``."""
    ML_C6A_2XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.c6a.2xlarge``."""
    ML_C6A_4XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.c6a.4xlarge``."""
    ML_C6A_8XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.c6a.8xlarge``."""
    ML_C6A_12XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.c6a.12xlarge``."""
    ML_C6A_16XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.c6a.16xlarge``."""
    ML_C6A_24XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.c6a.24xlarge``."""
    ML_C6A_32XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.c6a.32xlarge``."""
    ML_C6A_48XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.c6a.48xlarge``."""
    ML_M6A_LARGE: ClassVar[HyperPodInstanceType]
    """``ml.m6a.large``."""
    ML_M6A_XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.m6a.xlarge``."""
    ML_M6A_2XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.m6a.2xlarge``."""
    ML_M6A_4XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.m6a.4xlarge``."""
    ML_M6A_8XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.m6a.8xlarge``."""
    ML_M6A_12XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.m6a.12xlarge``."""
    ML_M6A_16XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.m6a.16xlarge``."""
    ML_M6A_24XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.m6a.24xlarge``."""
    ML_M6A_32XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.m6a.32xlarge``."""
    ML_M6A_48XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.m6a.48xlarge``."""
    ML_M6G_MEDIUM: ClassVar[HyperPodInstanceType]
    """``ml.m6g.medium``."""
    ML_M6G_LARGE: ClassVar[HyperPodInstanceType]
    """``ml.m6g.large``."""
    ML_M6G_XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.m6g.xlarge``."""
    ML_M6G_2XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.m6g.2xlarge``."""
    ML_M6G_4XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.m6g.4xlarge``."""
    ML_M6G_8XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.m6g.8xlarge``."""
    ML_M6G_12XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.m6g.12xlarge``."""
    ML_M6G_16XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.m6g.16xlarge``."""
    ML_M7G_MEDIUM: ClassVar[HyperPodInstanceType]
    """``ml.m7g.medium``."""
    ML_M7G_LARGE: ClassVar[HyperPodInstanceType]
    """``ml.m7g.large``."""
    ML_M7G_XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.m7g.xlarge``."""
    ML_M7G_2XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.m7g.2xlarge``."""
    ML_M7G_4XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.m7g.4xlarge``."""
    ML_M7G_8XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.m7g.8xlarge``."""
    ML_M7G_12XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.m7g.12xlarge``."""
    ML_M7G_16XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.m7g.16xlarge``."""
    ML_M8G_MEDIUM: ClassVar[HyperPodInstanceType]
    """``ml.m8g.medium``."""
    ML_M8G_LARGE: ClassVar[HyperPodInstanceType]
    """``ml.m8g.large``."""
    ML_M8G_XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.m8g.xlarge``."""
    ML_M8G_2XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.m8g.2xlarge``."""
    ML_M8G_4XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.m8g.4xlarge``."""
    ML_M8G_8XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.m8g.8xlarge``."""
    ML_M8G_12XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.m8g.12xlarge``."""
    ML_M8G_16XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.m8g.16xlarge``."""
    ML_M8G_24XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.m8g.24xlarge``."""
    ML_M8G_48XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.m8g.48xlarge``."""
    ML_G7_2XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.g7.2xlarge``."""
    ML_G7_4XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.g7.4xlarge``."""
    ML_G7_8XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.g7.8xlarge``."""
    ML_G7_12XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.g7.12xlarge``."""
    ML_G7_24XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.g7.24xlarge``."""
    ML_G7_48XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.g7.48xlarge``."""
    ML_C8A_16XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.c8a.16xlarge``."""
    ML_M8A_16XLARGE: ClassVar[HyperPodInstanceType]
    """``ml.m8a.16xlarge``."""

    def __init__(self, name: str) -> None:
        self._name = name

    @classmethod
    def of(cls, name: str) -> HyperPodInstanceType:
        """An instance type by its API name, e.g. ``"ml.p5.48xlarge"``.

        The name is checked when the instance group is added to a cluster (it must look
        like ``ml.<family>.<size>``); a type unknown to this library is accepted.
        """
        return cls(name)

    @property
    def name(self) -> str:
        """The API name, e.g. ``ml.p5.48xlarge``."""
        return self._name

    @property
    def accelerator_count(self) -> int | None:
        """GPUs or Trainium chips per instance; ``None`` when the library does not know."""
        return ACCELERATORS_PER_INSTANCE.get(self._name)

    @property
    def accelerator_kind(self) -> AcceleratorKind | None:
        """``"gpu"``, ``"trainium"``, or ``None`` for CPU-only types."""
        if not self.is_accelerated:
            return None
        return "trainium" if self._name.startswith("ml.trn") else "gpu"

    @property
    def is_accelerated(self) -> bool:
        """Whether the type belongs to a GPU or Trainium family (p, g, gr, trn)."""
        return bool(_ACCELERATED_FAMILY.match(self._name))

    @property
    def is_well_formed(self) -> bool:
        """Whether the name has the ``ml.<family>.<size>`` shape the API requires."""
        return bool(_INSTANCE_TYPE.match(self._name))

    def __str__(self) -> str:
        return self._name

    def __repr__(self) -> str:
        return f"HyperPodInstanceType({self._name!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, HyperPodInstanceType) and other._name == self._name

    def __hash__(self) -> int:
        return hash(self._name)


HyperPodInstanceType.ML_P4D_24XLARGE = HyperPodInstanceType("ml.p4d.24xlarge")
HyperPodInstanceType.ML_P4DE_24XLARGE = HyperPodInstanceType("ml.p4de.24xlarge")
HyperPodInstanceType.ML_P5_48XLARGE = HyperPodInstanceType("ml.p5.48xlarge")
HyperPodInstanceType.ML_P5_4XLARGE = HyperPodInstanceType("ml.p5.4xlarge")
HyperPodInstanceType.ML_P6E_GB200_36XLARGE = HyperPodInstanceType("ml.p6e-gb200.36xlarge")
HyperPodInstanceType.ML_TRN1_32XLARGE = HyperPodInstanceType("ml.trn1.32xlarge")
HyperPodInstanceType.ML_TRN1N_32XLARGE = HyperPodInstanceType("ml.trn1n.32xlarge")
HyperPodInstanceType.ML_G5_XLARGE = HyperPodInstanceType("ml.g5.xlarge")
HyperPodInstanceType.ML_G5_2XLARGE = HyperPodInstanceType("ml.g5.2xlarge")
HyperPodInstanceType.ML_G5_4XLARGE = HyperPodInstanceType("ml.g5.4xlarge")
HyperPodInstanceType.ML_G5_8XLARGE = HyperPodInstanceType("ml.g5.8xlarge")
HyperPodInstanceType.ML_G5_12XLARGE = HyperPodInstanceType("ml.g5.12xlarge")
HyperPodInstanceType.ML_G5_16XLARGE = HyperPodInstanceType("ml.g5.16xlarge")
HyperPodInstanceType.ML_G5_24XLARGE = HyperPodInstanceType("ml.g5.24xlarge")
HyperPodInstanceType.ML_G5_48XLARGE = HyperPodInstanceType("ml.g5.48xlarge")
HyperPodInstanceType.ML_C5_LARGE = HyperPodInstanceType("ml.c5.large")
HyperPodInstanceType.ML_C5_XLARGE = HyperPodInstanceType("ml.c5.xlarge")
HyperPodInstanceType.ML_C5_2XLARGE = HyperPodInstanceType("ml.c5.2xlarge")
HyperPodInstanceType.ML_C5_4XLARGE = HyperPodInstanceType("ml.c5.4xlarge")
HyperPodInstanceType.ML_C5_9XLARGE = HyperPodInstanceType("ml.c5.9xlarge")
HyperPodInstanceType.ML_C5_12XLARGE = HyperPodInstanceType("ml.c5.12xlarge")
HyperPodInstanceType.ML_C5_18XLARGE = HyperPodInstanceType("ml.c5.18xlarge")
HyperPodInstanceType.ML_C5_24XLARGE = HyperPodInstanceType("ml.c5.24xlarge")
HyperPodInstanceType.ML_C5N_LARGE = HyperPodInstanceType("ml.c5n.large")
HyperPodInstanceType.ML_C5N_2XLARGE = HyperPodInstanceType("ml.c5n.2xlarge")
HyperPodInstanceType.ML_C5N_4XLARGE = HyperPodInstanceType("ml.c5n.4xlarge")
HyperPodInstanceType.ML_C5N_9XLARGE = HyperPodInstanceType("ml.c5n.9xlarge")
HyperPodInstanceType.ML_C5N_18XLARGE = HyperPodInstanceType("ml.c5n.18xlarge")
HyperPodInstanceType.ML_M5_LARGE = HyperPodInstanceType("ml.m5.large")
HyperPodInstanceType.ML_M5_XLARGE = HyperPodInstanceType("ml.m5.xlarge")
HyperPodInstanceType.ML_M5_2XLARGE = HyperPodInstanceType("ml.m5.2xlarge")
HyperPodInstanceType.ML_M5_4XLARGE = HyperPodInstanceType("ml.m5.4xlarge")
HyperPodInstanceType.ML_M5_8XLARGE = HyperPodInstanceType("ml.m5.8xlarge")
HyperPodInstanceType.ML_M5_12XLARGE = HyperPodInstanceType("ml.m5.12xlarge")
HyperPodInstanceType.ML_M5_16XLARGE = HyperPodInstanceType("ml.m5.16xlarge")
HyperPodInstanceType.ML_M5_24XLARGE = HyperPodInstanceType("ml.m5.24xlarge")
HyperPodInstanceType.ML_T3_MEDIUM = HyperPodInstanceType("ml.t3.medium")
HyperPodInstanceType.ML_T3_LARGE = HyperPodInstanceType("ml.t3.large")
HyperPodInstanceType.ML_T3_XLARGE = HyperPodInstanceType("ml.t3.xlarge")
HyperPodInstanceType.ML_T3_2XLARGE = HyperPodInstanceType("ml.t3.2xlarge")
HyperPodInstanceType.ML_G6_XLARGE = HyperPodInstanceType("ml.g6.xlarge")
HyperPodInstanceType.ML_G6_2XLARGE = HyperPodInstanceType("ml.g6.2xlarge")
HyperPodInstanceType.ML_G6_4XLARGE = HyperPodInstanceType("ml.g6.4xlarge")
HyperPodInstanceType.ML_G6_8XLARGE = HyperPodInstanceType("ml.g6.8xlarge")
HyperPodInstanceType.ML_G6_16XLARGE = HyperPodInstanceType("ml.g6.16xlarge")
HyperPodInstanceType.ML_G6_12XLARGE = HyperPodInstanceType("ml.g6.12xlarge")
HyperPodInstanceType.ML_G6_24XLARGE = HyperPodInstanceType("ml.g6.24xlarge")
HyperPodInstanceType.ML_G6_48XLARGE = HyperPodInstanceType("ml.g6.48xlarge")
HyperPodInstanceType.ML_GR6_4XLARGE = HyperPodInstanceType("ml.gr6.4xlarge")
HyperPodInstanceType.ML_GR6_8XLARGE = HyperPodInstanceType("ml.gr6.8xlarge")
HyperPodInstanceType.ML_G6E_XLARGE = HyperPodInstanceType("ml.g6e.xlarge")
HyperPodInstanceType.ML_G6E_2XLARGE = HyperPodInstanceType("ml.g6e.2xlarge")
HyperPodInstanceType.ML_G6E_4XLARGE = HyperPodInstanceType("ml.g6e.4xlarge")
HyperPodInstanceType.ML_G6E_8XLARGE = HyperPodInstanceType("ml.g6e.8xlarge")
HyperPodInstanceType.ML_G6E_16XLARGE = HyperPodInstanceType("ml.g6e.16xlarge")
HyperPodInstanceType.ML_G6E_12XLARGE = HyperPodInstanceType("ml.g6e.12xlarge")
HyperPodInstanceType.ML_G6E_24XLARGE = HyperPodInstanceType("ml.g6e.24xlarge")
HyperPodInstanceType.ML_G6E_48XLARGE = HyperPodInstanceType("ml.g6e.48xlarge")
HyperPodInstanceType.ML_P5E_48XLARGE = HyperPodInstanceType("ml.p5e.48xlarge")
HyperPodInstanceType.ML_P5EN_48XLARGE = HyperPodInstanceType("ml.p5en.48xlarge")
HyperPodInstanceType.ML_P6_B200_48XLARGE = HyperPodInstanceType("ml.p6-b200.48xlarge")
HyperPodInstanceType.ML_TRN2_3XLARGE = HyperPodInstanceType("ml.trn2.3xlarge")
HyperPodInstanceType.ML_TRN2_48XLARGE = HyperPodInstanceType("ml.trn2.48xlarge")
HyperPodInstanceType.ML_C6I_LARGE = HyperPodInstanceType("ml.c6i.large")
HyperPodInstanceType.ML_C6I_XLARGE = HyperPodInstanceType("ml.c6i.xlarge")
HyperPodInstanceType.ML_C6I_2XLARGE = HyperPodInstanceType("ml.c6i.2xlarge")
HyperPodInstanceType.ML_C6I_4XLARGE = HyperPodInstanceType("ml.c6i.4xlarge")
HyperPodInstanceType.ML_C6I_8XLARGE = HyperPodInstanceType("ml.c6i.8xlarge")
HyperPodInstanceType.ML_C6I_12XLARGE = HyperPodInstanceType("ml.c6i.12xlarge")
HyperPodInstanceType.ML_C6I_16XLARGE = HyperPodInstanceType("ml.c6i.16xlarge")
HyperPodInstanceType.ML_C6I_24XLARGE = HyperPodInstanceType("ml.c6i.24xlarge")
HyperPodInstanceType.ML_C6I_32XLARGE = HyperPodInstanceType("ml.c6i.32xlarge")
HyperPodInstanceType.ML_M6I_LARGE = HyperPodInstanceType("ml.m6i.large")
HyperPodInstanceType.ML_M6I_XLARGE = HyperPodInstanceType("ml.m6i.xlarge")
HyperPodInstanceType.ML_M6I_2XLARGE = HyperPodInstanceType("ml.m6i.2xlarge")
HyperPodInstanceType.ML_M6I_4XLARGE = HyperPodInstanceType("ml.m6i.4xlarge")
HyperPodInstanceType.ML_M6I_8XLARGE = HyperPodInstanceType("ml.m6i.8xlarge")
HyperPodInstanceType.ML_M6I_12XLARGE = HyperPodInstanceType("ml.m6i.12xlarge")
HyperPodInstanceType.ML_M6I_16XLARGE = HyperPodInstanceType("ml.m6i.16xlarge")
HyperPodInstanceType.ML_M6I_24XLARGE = HyperPodInstanceType("ml.m6i.24xlarge")
HyperPodInstanceType.ML_M6I_32XLARGE = HyperPodInstanceType("ml.m6i.32xlarge")
HyperPodInstanceType.ML_R6I_LARGE = HyperPodInstanceType("ml.r6i.large")
HyperPodInstanceType.ML_R6I_XLARGE = HyperPodInstanceType("ml.r6i.xlarge")
HyperPodInstanceType.ML_R6I_2XLARGE = HyperPodInstanceType("ml.r6i.2xlarge")
HyperPodInstanceType.ML_R6I_4XLARGE = HyperPodInstanceType("ml.r6i.4xlarge")
HyperPodInstanceType.ML_R6I_8XLARGE = HyperPodInstanceType("ml.r6i.8xlarge")
HyperPodInstanceType.ML_R6I_12XLARGE = HyperPodInstanceType("ml.r6i.12xlarge")
HyperPodInstanceType.ML_R6I_16XLARGE = HyperPodInstanceType("ml.r6i.16xlarge")
HyperPodInstanceType.ML_R6I_24XLARGE = HyperPodInstanceType("ml.r6i.24xlarge")
HyperPodInstanceType.ML_R6I_32XLARGE = HyperPodInstanceType("ml.r6i.32xlarge")
HyperPodInstanceType.ML_I3EN_LARGE = HyperPodInstanceType("ml.i3en.large")
HyperPodInstanceType.ML_I3EN_XLARGE = HyperPodInstanceType("ml.i3en.xlarge")
HyperPodInstanceType.ML_I3EN_2XLARGE = HyperPodInstanceType("ml.i3en.2xlarge")
HyperPodInstanceType.ML_I3EN_3XLARGE = HyperPodInstanceType("ml.i3en.3xlarge")
HyperPodInstanceType.ML_I3EN_6XLARGE = HyperPodInstanceType("ml.i3en.6xlarge")
HyperPodInstanceType.ML_I3EN_12XLARGE = HyperPodInstanceType("ml.i3en.12xlarge")
HyperPodInstanceType.ML_I3EN_24XLARGE = HyperPodInstanceType("ml.i3en.24xlarge")
HyperPodInstanceType.ML_M7I_LARGE = HyperPodInstanceType("ml.m7i.large")
HyperPodInstanceType.ML_M7I_XLARGE = HyperPodInstanceType("ml.m7i.xlarge")
HyperPodInstanceType.ML_M7I_2XLARGE = HyperPodInstanceType("ml.m7i.2xlarge")
HyperPodInstanceType.ML_M7I_4XLARGE = HyperPodInstanceType("ml.m7i.4xlarge")
HyperPodInstanceType.ML_M7I_8XLARGE = HyperPodInstanceType("ml.m7i.8xlarge")
HyperPodInstanceType.ML_M7I_12XLARGE = HyperPodInstanceType("ml.m7i.12xlarge")
HyperPodInstanceType.ML_M7I_16XLARGE = HyperPodInstanceType("ml.m7i.16xlarge")
HyperPodInstanceType.ML_M7I_24XLARGE = HyperPodInstanceType("ml.m7i.24xlarge")
HyperPodInstanceType.ML_M7I_48XLARGE = HyperPodInstanceType("ml.m7i.48xlarge")
HyperPodInstanceType.ML_R7I_LARGE = HyperPodInstanceType("ml.r7i.large")
HyperPodInstanceType.ML_R7I_XLARGE = HyperPodInstanceType("ml.r7i.xlarge")
HyperPodInstanceType.ML_R7I_2XLARGE = HyperPodInstanceType("ml.r7i.2xlarge")
HyperPodInstanceType.ML_R7I_4XLARGE = HyperPodInstanceType("ml.r7i.4xlarge")
HyperPodInstanceType.ML_R7I_8XLARGE = HyperPodInstanceType("ml.r7i.8xlarge")
HyperPodInstanceType.ML_R7I_12XLARGE = HyperPodInstanceType("ml.r7i.12xlarge")
HyperPodInstanceType.ML_R7I_16XLARGE = HyperPodInstanceType("ml.r7i.16xlarge")
HyperPodInstanceType.ML_R7I_24XLARGE = HyperPodInstanceType("ml.r7i.24xlarge")
HyperPodInstanceType.ML_R7I_48XLARGE = HyperPodInstanceType("ml.r7i.48xlarge")
HyperPodInstanceType.ML_R5D_16XLARGE = HyperPodInstanceType("ml.r5d.16xlarge")
HyperPodInstanceType.ML_G7E_2XLARGE = HyperPodInstanceType("ml.g7e.2xlarge")
HyperPodInstanceType.ML_G7E_4XLARGE = HyperPodInstanceType("ml.g7e.4xlarge")
HyperPodInstanceType.ML_G7E_8XLARGE = HyperPodInstanceType("ml.g7e.8xlarge")
HyperPodInstanceType.ML_G7E_12XLARGE = HyperPodInstanceType("ml.g7e.12xlarge")
HyperPodInstanceType.ML_G7E_24XLARGE = HyperPodInstanceType("ml.g7e.24xlarge")
HyperPodInstanceType.ML_G7E_48XLARGE = HyperPodInstanceType("ml.g7e.48xlarge")
HyperPodInstanceType.ML_P6_B300_48XLARGE = HyperPodInstanceType("ml.p6-b300.48xlarge")
HyperPodInstanceType.ML_G4DN_XLARGE = HyperPodInstanceType("ml.g4dn.xlarge")
HyperPodInstanceType.ML_G4DN_2XLARGE = HyperPodInstanceType("ml.g4dn.2xlarge")
HyperPodInstanceType.ML_G4DN_4XLARGE = HyperPodInstanceType("ml.g4dn.4xlarge")
HyperPodInstanceType.ML_G4DN_8XLARGE = HyperPodInstanceType("ml.g4dn.8xlarge")
HyperPodInstanceType.ML_G4DN_12XLARGE = HyperPodInstanceType("ml.g4dn.12xlarge")
HyperPodInstanceType.ML_G4DN_16XLARGE = HyperPodInstanceType("ml.g4dn.16xlarge")
HyperPodInstanceType.ML_C6G_MEDIUM = HyperPodInstanceType("ml.c6g.medium")
HyperPodInstanceType.ML_C6G_LARGE = HyperPodInstanceType("ml.c6g.large")
HyperPodInstanceType.ML_C6G_XLARGE = HyperPodInstanceType("ml.c6g.xlarge")
HyperPodInstanceType.ML_C6G_2XLARGE = HyperPodInstanceType("ml.c6g.2xlarge")
HyperPodInstanceType.ML_C6G_4XLARGE = HyperPodInstanceType("ml.c6g.4xlarge")
HyperPodInstanceType.ML_C6G_8XLARGE = HyperPodInstanceType("ml.c6g.8xlarge")
HyperPodInstanceType.ML_C6G_12XLARGE = HyperPodInstanceType("ml.c6g.12xlarge")
HyperPodInstanceType.ML_C6G_16XLARGE = HyperPodInstanceType("ml.c6g.16xlarge")
HyperPodInstanceType.ML_C7G_MEDIUM = HyperPodInstanceType("ml.c7g.medium")
HyperPodInstanceType.ML_C7G_LARGE = HyperPodInstanceType("ml.c7g.large")
HyperPodInstanceType.ML_C7G_XLARGE = HyperPodInstanceType("ml.c7g.xlarge")
HyperPodInstanceType.ML_C7G_2XLARGE = HyperPodInstanceType("ml.c7g.2xlarge")
HyperPodInstanceType.ML_C7G_4XLARGE = HyperPodInstanceType("ml.c7g.4xlarge")
HyperPodInstanceType.ML_C7G_8XLARGE = HyperPodInstanceType("ml.c7g.8xlarge")
HyperPodInstanceType.ML_C7G_12XLARGE = HyperPodInstanceType("ml.c7g.12xlarge")
HyperPodInstanceType.ML_C7G_16XLARGE = HyperPodInstanceType("ml.c7g.16xlarge")
HyperPodInstanceType.ML_C8G_MEDIUM = HyperPodInstanceType("ml.c8g.medium")
HyperPodInstanceType.ML_C8G_LARGE = HyperPodInstanceType("ml.c8g.large")
HyperPodInstanceType.ML_C8G_XLARGE = HyperPodInstanceType("ml.c8g.xlarge")
HyperPodInstanceType.ML_C8G_2XLARGE = HyperPodInstanceType("ml.c8g.2xlarge")
HyperPodInstanceType.ML_C8G_4XLARGE = HyperPodInstanceType("ml.c8g.4xlarge")
HyperPodInstanceType.ML_C8G_8XLARGE = HyperPodInstanceType("ml.c8g.8xlarge")
HyperPodInstanceType.ML_C8G_12XLARGE = HyperPodInstanceType("ml.c8g.12xlarge")
HyperPodInstanceType.ML_C8G_16XLARGE = HyperPodInstanceType("ml.c8g.16xlarge")
HyperPodInstanceType.ML_C8G_24XLARGE = HyperPodInstanceType("ml.c8g.24xlarge")
HyperPodInstanceType.ML_C8G_48XLARGE = HyperPodInstanceType("ml.c8g.48xlarge")
HyperPodInstanceType.ML_C6A_LARGE = HyperPodInstanceType("ml.c6a.large")
HyperPodInstanceType.ML_C6A_XLARGE = HyperPodInstanceType("ml.c6a.xlarge")
HyperPodInstanceType.ML_C6A_2XLARGE = HyperPodInstanceType("ml.c6a.2xlarge")
HyperPodInstanceType.ML_C6A_4XLARGE = HyperPodInstanceType("ml.c6a.4xlarge")
HyperPodInstanceType.ML_C6A_8XLARGE = HyperPodInstanceType("ml.c6a.8xlarge")
HyperPodInstanceType.ML_C6A_12XLARGE = HyperPodInstanceType("ml.c6a.12xlarge")
HyperPodInstanceType.ML_C6A_16XLARGE = HyperPodInstanceType("ml.c6a.16xlarge")
HyperPodInstanceType.ML_C6A_24XLARGE = HyperPodInstanceType("ml.c6a.24xlarge")
HyperPodInstanceType.ML_C6A_32XLARGE = HyperPodInstanceType("ml.c6a.32xlarge")
HyperPodInstanceType.ML_C6A_48XLARGE = HyperPodInstanceType("ml.c6a.48xlarge")
HyperPodInstanceType.ML_M6A_LARGE = HyperPodInstanceType("ml.m6a.large")
HyperPodInstanceType.ML_M6A_XLARGE = HyperPodInstanceType("ml.m6a.xlarge")
HyperPodInstanceType.ML_M6A_2XLARGE = HyperPodInstanceType("ml.m6a.2xlarge")
HyperPodInstanceType.ML_M6A_4XLARGE = HyperPodInstanceType("ml.m6a.4xlarge")
HyperPodInstanceType.ML_M6A_8XLARGE = HyperPodInstanceType("ml.m6a.8xlarge")
HyperPodInstanceType.ML_M6A_12XLARGE = HyperPodInstanceType("ml.m6a.12xlarge")
HyperPodInstanceType.ML_M6A_16XLARGE = HyperPodInstanceType("ml.m6a.16xlarge")
HyperPodInstanceType.ML_M6A_24XLARGE = HyperPodInstanceType("ml.m6a.24xlarge")
HyperPodInstanceType.ML_M6A_32XLARGE = HyperPodInstanceType("ml.m6a.32xlarge")
HyperPodInstanceType.ML_M6A_48XLARGE = HyperPodInstanceType("ml.m6a.48xlarge")
HyperPodInstanceType.ML_M6G_MEDIUM = HyperPodInstanceType("ml.m6g.medium")
HyperPodInstanceType.ML_M6G_LARGE = HyperPodInstanceType("ml.m6g.large")
HyperPodInstanceType.ML_M6G_XLARGE = HyperPodInstanceType("ml.m6g.xlarge")
HyperPodInstanceType.ML_M6G_2XLARGE = HyperPodInstanceType("ml.m6g.2xlarge")
HyperPodInstanceType.ML_M6G_4XLARGE = HyperPodInstanceType("ml.m6g.4xlarge")
HyperPodInstanceType.ML_M6G_8XLARGE = HyperPodInstanceType("ml.m6g.8xlarge")
HyperPodInstanceType.ML_M6G_12XLARGE = HyperPodInstanceType("ml.m6g.12xlarge")
HyperPodInstanceType.ML_M6G_16XLARGE = HyperPodInstanceType("ml.m6g.16xlarge")
HyperPodInstanceType.ML_M7G_MEDIUM = HyperPodInstanceType("ml.m7g.medium")
HyperPodInstanceType.ML_M7G_LARGE = HyperPodInstanceType("ml.m7g.large")
HyperPodInstanceType.ML_M7G_XLARGE = HyperPodInstanceType("ml.m7g.xlarge")
HyperPodInstanceType.ML_M7G_2XLARGE = HyperPodInstanceType("ml.m7g.2xlarge")
HyperPodInstanceType.ML_M7G_4XLARGE = HyperPodInstanceType("ml.m7g.4xlarge")
HyperPodInstanceType.ML_M7G_8XLARGE = HyperPodInstanceType("ml.m7g.8xlarge")
HyperPodInstanceType.ML_M7G_12XLARGE = HyperPodInstanceType("ml.m7g.12xlarge")
HyperPodInstanceType.ML_M7G_16XLARGE = HyperPodInstanceType("ml.m7g.16xlarge")
HyperPodInstanceType.ML_M8G_MEDIUM = HyperPodInstanceType("ml.m8g.medium")
HyperPodInstanceType.ML_M8G_LARGE = HyperPodInstanceType("ml.m8g.large")
HyperPodInstanceType.ML_M8G_XLARGE = HyperPodInstanceType("ml.m8g.xlarge")
HyperPodInstanceType.ML_M8G_2XLARGE = HyperPodInstanceType("ml.m8g.2xlarge")
HyperPodInstanceType.ML_M8G_4XLARGE = HyperPodInstanceType("ml.m8g.4xlarge")
HyperPodInstanceType.ML_M8G_8XLARGE = HyperPodInstanceType("ml.m8g.8xlarge")
HyperPodInstanceType.ML_M8G_12XLARGE = HyperPodInstanceType("ml.m8g.12xlarge")
HyperPodInstanceType.ML_M8G_16XLARGE = HyperPodInstanceType("ml.m8g.16xlarge")
HyperPodInstanceType.ML_M8G_24XLARGE = HyperPodInstanceType("ml.m8g.24xlarge")
HyperPodInstanceType.ML_M8G_48XLARGE = HyperPodInstanceType("ml.m8g.48xlarge")
HyperPodInstanceType.ML_G7_2XLARGE = HyperPodInstanceType("ml.g7.2xlarge")
HyperPodInstanceType.ML_G7_4XLARGE = HyperPodInstanceType("ml.g7.4xlarge")
HyperPodInstanceType.ML_G7_8XLARGE = HyperPodInstanceType("ml.g7.8xlarge")
HyperPodInstanceType.ML_G7_12XLARGE = HyperPodInstanceType("ml.g7.12xlarge")
HyperPodInstanceType.ML_G7_24XLARGE = HyperPodInstanceType("ml.g7.24xlarge")
HyperPodInstanceType.ML_G7_48XLARGE = HyperPodInstanceType("ml.g7.48xlarge")
HyperPodInstanceType.ML_C8A_16XLARGE = HyperPodInstanceType("ml.c8a.16xlarge")
HyperPodInstanceType.ML_M8A_16XLARGE = HyperPodInstanceType("ml.m8a.16xlarge")
