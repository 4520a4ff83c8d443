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
- ``cli``: the subcommand.

Importing this package imports neither ``boto3`` nor anything of ``aws_cdk``.
"""
