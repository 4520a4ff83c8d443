"""Apps written as a user writes them, type-checked by mypy --strict (pyproject's ``files``)
and synthesized by the tests."""
