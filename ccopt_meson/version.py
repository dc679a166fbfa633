"""The package version (one place; pyproject.toml and meson.build agree, a test checks)."""

__version__ = "0.1.0"
