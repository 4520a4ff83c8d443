"""``python -m hyperpod_constructs preflight``: before a deploy, can each gated group's minimum be
met? Quotas, the account's other clusters and training plans, read from the account.

Functional core, imperative shell:

- ``demand``: what an app asks for, per gated cluster: each group's instance types, count,
  minimum and training plan, from a template (pure) or a ``cdk.out`` folder.
- ``facts``: what the account answered (quotas, other clusters' use, plans) or why it could not
  be read (pure values).
- ``quotas``: which Service Quotas entries apply, found by their names (pure).
- ``verdict``: per gated group, met / short / unknown, with the numbers (pure).
- ``render``: the verdicts as text or JSON.
- ``aws``: the read-only AWS calls (boto3), turned into facts.
- ``permissions``: the IAM actions those calls need.
- ``watching``: the same checks for ``watch --capacity``.
- ``cli``: the subcommand.

Importing this package imports neither ``boto3`` nor anything of ``aws_cdk``. Its public names:
the IAM actions the command calls (to grant them, e.g. to a CDK Pipelines step), the JSON
document's version and the exit code of a minimum not met.
"""

from .permissions import PREFLIGHT_ACTIONS, preflight_policy
from .render import EXIT_NOT_MET, JSON_SCHEMA_VERSION

__all__ = ["EXIT_NOT_MET", "JSON_SCHEMA_VERSION", "PREFLIGHT_ACTIONS", "preflight_policy"]
