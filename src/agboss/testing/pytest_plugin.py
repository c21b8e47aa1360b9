"""The pytest plugin agboss installs: the test kit as fixtures.

- ``test_clock``: a fresh `TestClock`.
- ``agboss_env``: a `TestEnv` for the application named by the test's marker,
  ``@pytest.mark.agboss(MyApplication, instances=2)`` (an async fixture: it needs an asyncio
  plugin such as pytest-asyncio).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from agboss.errors import TestSetupError
from agboss.testing._clock import TestClock
from agboss.testing._env import TestEnv, test_with


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "agboss(application, **options): the application agboss_env runs"
    )


@pytest.fixture
def test_clock() -> TestClock:
    """A fresh test clock."""
    return TestClock()


try:
    import pytest_asyncio
except ImportError:  # pragma: no cover - agboss_env needs an asyncio plugin
    pass
else:

    @pytest_asyncio.fixture
    async def agboss_env(request: pytest.FixtureRequest) -> AsyncIterator[TestEnv]:
        """A `TestEnv` for the application of ``@pytest.mark.agboss(Application, ...)``."""
        marker = request.node.get_closest_marker("agboss")
        if marker is None or not marker.args:
            raise TestSetupError(
                "agboss_env needs the application: mark the test "
                "@pytest.mark.agboss(MyApplication)",
            )
        options: dict[str, Any] = dict(marker.kwargs)
        async with test_with(marker.args[0], **options) as env:
            yield env
