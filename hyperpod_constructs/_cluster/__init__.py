"""The cluster construct's private helpers (constructs layer)."""
