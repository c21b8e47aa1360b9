"""The pytest plugin gives users the test kit as fixtures."""

from __future__ import annotations

import pytest

from agboss.testing import TestClock, TestEnv
from tests.apps.office import OfficeApplication


@pytest.mark.agboss(OfficeApplication, instances=2)
async def test_agboss_env_runs_the_marked_application(agboss_env: TestEnv) -> None:
    assert len(agboss_env.apps) == 2
    assert agboss_env.app.assembly.spec.name == "office-application"


def test_test_clock_is_a_fresh_test_clock(test_clock: TestClock) -> None:
    assert isinstance(test_clock, TestClock)
