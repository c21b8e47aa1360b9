"""The store contract: what every `agboss.store.Store` does, one behaviour per test.

A store implementation proves itself by subclassing `StoreContract` in its own tests and giving
it a ``store`` fixture (an opened, empty store)::

    import pytest
    from agboss.testing.store_contract import StoreContract

    class TestMyStore(StoreContract):
        @pytest.fixture
        async def store(self, tmp_path):
            store = MyStore(tmp_path / "db")
            await store.open()
            yield store
            await store.close()

It needs pytest and pytest-asyncio (``asyncio_mode = "auto"``). It covers every repository
method and every write of `agboss.store.writes`, with the application's clock (``now`` given)
and, for leases, the store's own (``now=None``).
"""

from agboss.testing.store_contract._suite import StoreContract

__all__ = ["StoreContract"]
