"""What the tools read of a CloudFormation stack (private; the tools' floor, docs/layout.md):
the templates of a cloud assembly (``files``: its manifests, nested assemblies and nested
stacks' template files, each read bounded and strict), each stack's identity and, once
deployed, its parameter values (``stacks``), the nested stacks a template declares and where
their templates are (``nested``), a template's text as JSON or YAML (``templates``: a
baseline file, a deployed stack's template), and the resource types the tools look for
(``types``).
``summary``, ``watch``, ``preflight`` and ``plan`` read an assembly through it alone.
Standard library only.
"""
