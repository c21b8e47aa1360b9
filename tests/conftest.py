"""Shared test setup: the office components live in tests/office.py."""
