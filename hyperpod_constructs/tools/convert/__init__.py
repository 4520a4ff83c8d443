"""``python -m hyperpod_constructs convert``: CreateCluster requests as CDK apps.

See :func:`convert_request` and ``docs/guide.md`` (Migrating an existing cluster).
"""

from .translate import UNSUPPORTED, ConversionError, Options, convert_request

__all__ = ["UNSUPPORTED", "ConversionError", "Options", "convert_request"]
