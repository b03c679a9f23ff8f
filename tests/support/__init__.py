"""Helpers the tests share: imported by test modules and conftest.py, never from a test module."""
