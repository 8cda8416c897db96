"""The package version (one place; the root package and run provenance read it)."""

__version__ = "0.1.0"
