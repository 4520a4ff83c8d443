"""What the command-line tools read from outside (entry points layer, docs/layout.md).

The one reader of a file (``input``: bounded, regular files only, strict JSON) and AWS's API
model (``model``, generated from botocore) with the check of a request or an answer against
it (``shapes``). Standard library only.
"""
