"""The bottom layer (docs/layout.md): what a check reports and the checks of plain values.

:class:`Finding` and :class:`Severity` (``finding``), a rule's metadata and its binding to the
check that reports it (``rule``), the argument predicates and type checks (``arguments``), the
type check of an entry point that raises at once (``expect``), HyperPod's limits (``limits``),
the Slurm layout HyperPod accepts (``layout``), the pages the rules cite (``sources``), the
one sanitizer of text from outside (``sanitize``) and the deprecated aliases of the modules
that moved (``moved``). Nothing here
imports the model (instance groups, lifecycle scripts, storage), the rules or the constructs;
``arguments`` asks :mod:`hyperpod_constructs._cdk.tokens` whether a value is a CDK token. Their
public names are exported by :mod:`hyperpod_constructs.validation`.
"""
