"""The package version, in one place (the build reads it from here)."""

__version__ = "0.2.0"
