"""Scenarios written once and run on every provider they apply to (tests/support/providers.py)."""
