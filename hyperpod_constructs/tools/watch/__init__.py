"""``python -m hyperpod_constructs watch``: a live view of a deployment's gated instance groups.

While the MinCount gate waits (up to 3 hours and more), ``cdk deploy`` shows one line. ``watch``
shows, per gated group, its status, ``CurrentCount / MinCount / TargetCount`` as a bar, the time
left in HyperPod's 3-hour window and the newest cluster events, plus the gate's own state; it
ends by itself (exit 0 ready, 1 failed or rolled back, 2 bad input or AWS unreachable).

Functional core, imperative shell:

- ``target``: which cluster, groups and wait condition to watch, from a template (pure) and
  from a ``cdk.out`` folder (reads files, stdlib only).
- ``model``: one refresh, ``Observation`` -> ``Refresh`` (pure).
- ``jsonl`` and ``screen``: a refresh as a JSON object or as a ``rich`` renderable.
- ``aws``: the read-only AWS calls (boto3), turned into an observation.
- ``cli``: the subcommand and its loop.

Importing this package (or ``cli``) imports neither ``boto3`` nor ``rich``: they load when
the command runs, and a missing one is a one-line error.
"""
