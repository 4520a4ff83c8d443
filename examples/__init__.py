"""Example apps: each module defines one stack; ``app.py`` synthesizes them all."""
