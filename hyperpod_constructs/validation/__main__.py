"""``python -m hyperpod_constructs.validation [--write]``: check (or regenerate) the rule table
of docs/validation.md from the registry."""

import sys

from .registry import main

raise SystemExit(main(sys.argv))
