"""The readiness gate's construct and its resources (constructs layer, docs/layout.md).

:class:`MinCountGate` (``construct``), its functions' code and settings (``resources``), its
CloudWatch metrics (``metrics``) and the aspect that holds topic subscriptions until the gate
opens (``subscriptions``). The gate's values (its options, its state machine's definition and
the decision) are in :mod:`hyperpod_constructs.gate`; its Lambda code in ``_runtime``.
"""
