"""What the store tests share: a fresh PostgreSQL schema, dropped after the test."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator

import pytest

from tests.stores import drop_schema


@pytest.fixture
async def schema() -> AsyncIterator[str]:
    """The name of a PostgreSQL schema of the test's own (the store creates it), dropped
    after the test."""
    name = f"test_{uuid.uuid4().hex[:12]}"
    try:
        yield name
    finally:
        await drop_schema(name)
