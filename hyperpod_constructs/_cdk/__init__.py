"""The aws_cdk plumbing the model and the constructs share (values layer, docs/layout.md).

Whether a value is a CDK token (``tokens``), values and dependencies decided at synth
(``lazy``, ``dependable``), cdk-nag acknowledgments (``nag``), whether statements added to a
role reach it (``roles``), which synthesizer refused a file asset (``synthesizer``) and
aws-cdk-lib's submodules loaded where they are first used (``modules``). Nothing
here imports the model, the rules or the constructs.
"""
