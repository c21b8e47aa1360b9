"""The store contract (`agboss.testing.store_contract`) on every store agboss ships."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from agboss.store import Store
from agboss.testing.store_contract import StoreContract
from tests.stores import STORE_KINDS, made_store


class TestShippedStores(StoreContract):
    @pytest.fixture(params=STORE_KINDS)
    async def store(self, request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Store]:
        async with made_store(request.param, tmp_path) as made:
            await made.open()
            try:
                yield made
            finally:
                await made.close()
