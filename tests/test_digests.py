"""An approval bound to what the approver saw (issue 56, point 1): each question carries a
digest of exactly what it asks — the tool, its definition's fingerprint, the arguments as asked
— shown wherever the question is shown; the decision records the digest it answered (and an
override the digest of the arguments that will run); and the call runs only if the call about
to run has the digest that was decided, checked at the moment it runs."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from agboss import (
    ExecutionStatus,
    PauseResolution,
    PauseStatus,
    QuestionChangedError,
    ToolCallApprovalDecisionDto,
)
from agboss.records import PauseAnswer, call_digest
from agboss.records import pause_ref as _pause_ref
from agboss.store.writes import ResolvePause
from agboss.testing import TestClock, TestEnv, test_with
from tests.apps.desk import DeskRecorder, OfficeAgent, OfficeApplication
from tests.apps.recorded import recording
from tests.stores import STORE_KINDS, edit_rows, store_url
from tests.test_builds_side_by_side import _owners, _paused
from tests.test_pauses import BOTH, DONE

EXPENSE = "book-expense-tool"


async def _asked(env: TestEnv) -> tuple[str, str]:
    """A tree paused on its two questions: the owner's question's id and its root's."""
    env.mock_llm(OfficeAgent).then_return(BOTH, DONE)
    began = await _paused(env)
    return _owners(began).pause_id or "", began.execution_id


@pytest.mark.parametrize("kind", STORE_KINDS)
async def test_a_question_carries_the_digest_of_what_it_asks_wherever_it_is_shown(
    kind: str, tmp_path: Path
) -> None:
    async with store_url(kind, tmp_path) as url, test_with(OfficeApplication, store=url) as env:
        pause_id, _ = await _asked(env)
        described = (await env.app.describe_pause(pause_id)).pause.ask
        definition = env.app.assembly.tool_definition(EXPENSE)
        assert definition is not None
        # The tool, its definition and the arguments as asked, keyed by the question's id.
        assert described.digest == call_digest(
            pause_id, EXPENSE, definition, {"purpose": "taxi", "amount": 12.5}
        )
        assert described.digest != call_digest(
            pause_id, EXPENSE, definition, {"purpose": "taxi", "amount": 12.6}
        )
        inbox = (await env.app.pending(owner_id="user-1")).entries
        [waiting] = [entry for entry in inbox if entry.pause.pause_ref == _pause_ref(pause_id)]
        assert waiting.pause.ask.digest == described.digest
        receipt = await env.app.answer(
            pause_id,
            decision={"approved": True, "digest": described.digest[:12]},  # as a page shows it
            owner_id="user-1",
        )
        # The decision records the digest it answered, whole.
        assert receipt.decision.digest == described.digest
        assert receipt.decision.override_digest is None


@pytest.mark.parametrize("kind", STORE_KINDS)
async def test_an_answer_naming_another_question_is_refused_and_the_pause_keeps_waiting(
    kind: str, tmp_path: Path
) -> None:
    async with store_url(kind, tmp_path) as url, test_with(OfficeApplication, store=url) as env:
        pause_id, _ = await _asked(env)
        with pytest.raises(QuestionChangedError) as refused:
            await env.app.resume(
                pause_id, decision={"approved": True, "digest": "0" * 64}, owner_id="user-1"
            )
        assert refused.value.code == "pause.question-changed"
        found = await env.app.describe_pause(pause_id)
        assert found.status is PauseStatus.PENDING


@pytest.mark.parametrize("tampered", [False, True])
@pytest.mark.parametrize("kind", STORE_KINDS)
async def test_arguments_changed_between_the_decision_and_the_run_are_refused(
    kind: str, tampered: bool, tmp_path: Path
) -> None:
    ran = DeskRecorder()
    clock = TestClock(datetime.now(UTC))
    async with store_url(kind, tmp_path) as url:
        async with test_with(
            OfficeApplication, store=url, clock=clock, dependencies=recording(ran)
        ) as env:
            pause_id, root = await _asked(env)
            store = env.app.store
            pause = await store.pauses.find_by_tenant_id_and_pause_id("default", pause_id)
            assert pause is not None
            # An owner's decision, recorded with the digest of the arguments it lets run by
            # an instance that leaves the tree to the sweep.
            override = {"purpose": "taxi", "amount": 20.0}
            definition = env.app.assembly.tool_definition(EXPENSE)
            decision = ToolCallApprovalDecisionDto(
                approved=True,
                override_arguments=override,
                digest=pause.ask.digest,
                override_digest=call_digest(pause_id, EXPENSE, definition, override),
            )
            answer = PauseAnswer(decision=decision, responder="user-1")
            await store.write(
                [
                    ResolvePause(
                        pause, PauseStatus.RESOLVED, PauseResolution.REPLIED, answer, clock.now()
                    )
                ]
            )
            if tampered:  # a database user raises the amount the owner approved
                edited = await edit_rows(
                    url,
                    "UPDATE pauses SET answer_json = replace(answer_json, '20.0', '2000.0') "
                    "WHERE pause_id = ?",
                    pause_id,
                )
                assert edited == 1
            await env.app.recover()
            moved = await env.app.get(root, record=True)
        assert moved.status is ExecutionStatus.PAUSED  # on the desk's question
        if not tampered:
            assert ran.runs == ["book-expense taxi 20.0"]
            return
        assert ran.runs == []
        assert moved.record is not None
        [step] = [s for s in moved.record.steps if s.tool_call and s.tool_call.tool == EXPENSE]
        assert step.error is not None
        assert "is not the call that was decided" in step.error
