"""Something to depend on whose resources are decided at synth."""

from __future__ import annotations

from collections.abc import Callable

from constructs import Construct, Dependable, IConstruct


class DependencyRoots(Dependable):
    """Dependency roots computed when dependencies are read (at synth), not when taken."""

    def __init__(self, roots: Callable[[], list[IConstruct]]) -> None:
        super().__init__()
        self._roots = roots

    @property
    def dependency_roots(self) -> list[IConstruct]:
        return self._roots()


class LazyDependable(Construct):
    """Something to depend on whose resources are decided at synth (see
    :attr:`HyperPodSlurmCluster.ready`). It defines no resource of its own."""

    def __init__(self, scope: Construct, id: str, *, roots: Callable[[], list[IConstruct]]) -> None:
        super().__init__(scope, id)
        Dependable.implement(self, DependencyRoots(roots))
