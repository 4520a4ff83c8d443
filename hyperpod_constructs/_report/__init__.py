"""The report of a failing synth (constructs layer, docs/layout.md).

What each cluster's validation reported (``records``, written by the cluster) and the short
report :mod:`hyperpod_constructs.reporting` prints from it (``text``).
"""
