"""The aws_cdk plumbing the model and the constructs share (values layer, docs/layout.md).

Whether a value is a CDK token (``tokens``), values and dependencies decided at synth
(``lazy``, ``dependable``), cdk-nag acknowledgments (``nag``), whether statements added to a
role reach it (``roles``) and which synthesizer refused a file asset (``synthesizer``). Nothing
here imports the model, the rules or the constructs.
"""
