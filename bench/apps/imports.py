"""What importing the library costs: ``import aws_cdk`` and an ``App`` with a ``Stack`` (what
every CDK app does anyway: the first checked jsii call loads jsii's type checker), and with
``--library`` every public name of ``hyperpod_constructs`` besides (``getattr`` on each name
of ``__all__``, which loads the module behind it). Nothing is synthesized; the jsii kernel is
stopped and reaped before exit, so its CPU counts."""

from __future__ import annotations

import _harness

_harness.start()

import json  # noqa: E402
import sys  # noqa: E402

from aws_cdk import App, Stack  # noqa: E402

# Before the library's import, so that what any app's first jsii calls load (jsii's type
# checker, aws-cdk-lib's type hints) is not charged to the library's modules.
Stack(App(), "Imports")

if "--library" in sys.argv[1:]:
    import hyperpod_constructs

    for name in hyperpod_constructs.__all__:
        getattr(hyperpod_constructs, name)

if __name__ == "__main__":
    modules = sum(1 for module in sys.modules if module.split(".")[0] == _harness.LIBRARY)
    _harness._stop_kernel()
    sys.stdout.write(json.dumps({"library_modules": modules}) + "\n")
