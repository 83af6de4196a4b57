"""Contributor tooling: ``python -m scanner.dev docs`` writes the generated documentation, and
``python -m scanner.dev new-rule AZAI-NNN slug`` starts a rule."""
