"""SQLite: a store whose file (or folder) is deleted or replaced under a running application
refuses to write, instead of writing into the unlinked file and losing it all at the next
start (issue 37, item 7)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from agboss import ExecutionStatus, StoreUnavailableError, WorkflowStartTextDto
from agboss.testing import TestEnv
from tests.apps.desk import DeskRecorder, OfficeAgent, OfficeApplication, OfficeWorkflow
from tests.test_round_trips import ASK, DONE

REQUEST = WorkflowStartTextDto(text="Book the taxi")


pytestmark = pytest.mark.application.with_args(OfficeApplication)


@pytest.fixture
def kind() -> str:
    return "sqlite"  # a file and its folder, deleted or replaced


@pytest.fixture
def env_store(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path}/data/agboss.db"


@pytest.fixture(autouse=True)
def scripted(env: TestEnv) -> None:
    env.mock_llm(OfficeAgent).then_return(ASK, DONE, ASK, DONE)


async def _paused(env: TestEnv) -> str:
    result = await env.app.execute(OfficeWorkflow, REQUEST, owner_id="user-1")
    assert result.status is ExecutionStatus.PAUSED
    pause_id = result.pending[0].pause_id
    assert pause_id is not None
    return pause_id


async def test_a_deleted_folder_refuses_every_write(
    env: TestEnv, tmp_path: Path, recorded: DeskRecorder
) -> None:
    pause_id = await _paused(env)
    shutil.rmtree(tmp_path / "data")
    with pytest.raises(StoreUnavailableError, match="deleted or replaced"):
        await env.app.resume(pause_id, decision={"approved": True}, owner_id="user-1")
    with pytest.raises(StoreUnavailableError, match="deleted or replaced"):
        await env.app.execute(OfficeWorkflow, REQUEST, owner_id="user-1")
    assert recorded.runs == []


async def test_a_replaced_file_refuses_every_write(env: TestEnv, tmp_path: Path) -> None:
    pause_id = await _paused(env)
    file = tmp_path / "data" / "agboss.db"
    shutil.copy(file, tmp_path / "copy.db")
    file.unlink()
    shutil.copy(tmp_path / "copy.db", file)  # the same name, another file
    with pytest.raises(StoreUnavailableError) as refused:
        await env.app.resume(pause_id, decision={"approved": True}, owner_id="user-1")
    assert "restart" in refused.value.hint
