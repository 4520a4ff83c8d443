"""The command-line tools' floor: ``python -m hyperpod_constructs summary|watch|convert|plan|
preflight`` and what only they read (docs/layout.md, "The tools' floor").

- ``hyperpod_constructs.tools.summary``: the clusters of a synthesized ``cdk.out``, summarized;
- ``hyperpod_constructs.tools.convert``: CreateCluster requests as CDK apps;
- ``hyperpod_constructs.tools.watch``: a live view of a deployment's gated instance groups;
- ``hyperpod_constructs.tools.plan``: what an update does to a running cluster;
- ``hyperpod_constructs.tools.preflight``: whether each gated minimum can be met, before a deploy.

The constructs never import anything here (tests/test_layers.py), and a CDK app never loads
it. Importing this package imports nothing else: each tool loads on its own. The old paths
(``hyperpod_constructs.summary``, ...) are deprecated aliases (``hyperpod_constructs._core.moved``).
"""
