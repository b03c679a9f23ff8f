"""Shared test configuration: the emulated archive fixtures (and pytester for plugin tests)."""

pytest_plugins = ["archivefs.testing.pytest_plugin", "pytester"]
