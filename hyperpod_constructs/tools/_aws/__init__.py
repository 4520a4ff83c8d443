"""What the command-line tools read from outside (entry points layer, docs/layout.md).

The one reader of a file (``input``: bounded, regular files only, strict JSON), AWS's API
model (``model``, generated from botocore) with the check of a request or an answer against
it (``shapes``), and the one AWS session of the tools (``session``: profile, region, role and
the deadline of every call). Standard library only at import (``session`` loads boto3 when a
session opens).
"""
