"""Bounded time and failure isolation: a send has a time limit, a caller that goes away lets go
of its tree, a resume does not wait for a holder without end, a poisoned tree does not stop the
sweep, and takeovers are logged."""

from __future__ import annotations

import asyncio
import logging
import math
import time
from collections.abc import AsyncIterator
from datetime import timedelta
from pathlib import Path

import pytest

from agboss import (
    AgentFailedError,
    App,
    DtoValidationError,
    ExecutionFailedError,
    ExecutionStatus,
    FunctionProvider,
    LeaseBusyError,
    PauseAnswer,
    PauseRecord,
    PauseResolution,
    PauseStatus,
    ToolCallApprovalDecisionDto,
)
from agboss.store.writes import AcquireLease, ResolvePause, write_one
from agboss.testing import TestClock
from tests.apps.liveness_app import (
    LivenessRecorder,
    PaymentApplication,
    PaymentDto,
    model,
)
from tests.apps.liveness_app import PaymentWorkflow as Payments
from tests.apps.recorded import recording
from tests.stores import STORE_KINDS, store_url


@pytest.fixture(params=STORE_KINDS)
async def url(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[str]:
    async with store_url(request.param, tmp_path) as made:
        yield made


@pytest.fixture
def recorded() -> LivenessRecorder:
    """What the payment application records in a test (its instances opened by the test)."""
    return LivenessRecorder()


async def _app(url: str, recorded: LivenessRecorder, **options: object) -> App:
    return await App.create(
        PaymentApplication,
        store=url,
        providers=[FunctionProvider(model)],
        dependencies=recording(recorded),
        **options,  # type: ignore[arg-type]
    )


async def test_a_send_that_hangs_is_cut_off_at_its_tools_timeout_and_the_tree_fails(
    url: str,
    recorded: LivenessRecorder,
) -> None:
    recorded.send_seconds = 30
    app = await _app(url, recorded)
    try:
        started = time.monotonic()
        with pytest.raises(AgentFailedError) as raised:
            await app.execute(Payments, PaymentDto(amount=5), owner_id="u")
        assert time.monotonic() - started < 5
        assert "timeout" in str(raised.value)
        assert await app.store.executions.find_interrupted(None, 10) == []  # failed, released
    finally:
        await app.close()


async def test_a_caller_that_goes_away_does_not_wait_for_a_send_and_lets_go_of_the_tree(
    url: str,
    recorded: LivenessRecorder,
) -> None:
    recorded.send_seconds = 0.25  # under the tool's timeout: a slow channel, not a broken one
    app = await _app(url, recorded)
    try:
        started = time.monotonic()
        with pytest.raises(TimeoutError):
            async with asyncio.timeout(0.05):
                await app.execute(Payments, PaymentDto(amount=5), owner_id="u", thread_id="t")
        assert time.monotonic() - started < 0.2
        [root] = await app.store.executions.find_roots("default", "t")
        assert root.status is ExecutionStatus.RUNNING  # the sweep picks it up
        recorded.send_seconds = 0.0
        [recovered] = await app.recover()  # the lease was let go: no wait for it to expire
        assert recovered.status is ExecutionStatus.PAUSED
        assert len(recovered.pending) == 1
    finally:
        await app.close()


async def test_a_resume_waits_for_a_holder_only_until_its_deadline_and_keeps_the_decision(
    url: str,
    recorded: LivenessRecorder,
) -> None:
    app = await _app(url, recorded, resume_timeout=timedelta(milliseconds=200))
    try:
        paused = await app.execute(Payments, PaymentDto(amount=5), owner_id="u")
        [pending] = paused.pending
        await app.store.write(
            [AcquireLease(paused.execution_id, "another-instance", timedelta(minutes=5))]
        )
        started = time.monotonic()
        with pytest.raises(LeaseBusyError) as raised:
            await app.resume(str(pending.pause_id), decision={"approved": True}, owner_id="u")
        assert 0.2 <= time.monotonic() - started < 2
        assert raised.value.code == "run.busy"
        pause = await app.store.pauses.find_by_tenant_id_and_pause_id(
            "default", str(pending.pause_id)
        )
        assert pause is not None
        assert pause.status is PauseStatus.RESOLVED  # recorded: the holder or the sweep takes it
        assert recorded.runs == []
    finally:
        await app.close()


async def test_a_non_finite_override_is_rejected_and_the_pause_stays_pending(
    url: str, recorded: LivenessRecorder
) -> None:
    app = await _app(url, recorded)
    try:
        paused = await app.execute(Payments, PaymentDto(amount=5), owner_id="u")
        [pending] = paused.pending
        for bad in (math.nan, math.inf, -math.inf):
            with pytest.raises(DtoValidationError) as raised:
                await app.resume(
                    str(pending.pause_id),
                    decision={"approved": True, "override_arguments": {"amount": bad}},
                    owner_id="u",
                )
            assert "override_arguments.amount" in str(raised.value)
        again = await app.get(paused.execution_id)
        assert [p.pause_id for p in again.pending] == [pending.pause_id]
    finally:
        await app.close()


async def test_a_poisoned_tree_is_failed_and_logged_once_and_the_sweep_goes_on(
    url: str, caplog: pytest.LogCaptureFixture, recorded: LivenessRecorder
) -> None:
    app = await _app(url, recorded)
    try:
        poisoned = await app.execute(Payments, PaymentDto(amount=1), owner_id="u")
        healthy = await app.execute(Payments, PaymentDto(amount=2), owner_id="u")
        # An answer no validation let through (as agboss 0.1.0 stored a NaN: as null).
        bad = ToolCallApprovalDecisionDto.model_construct(
            approved=True, reason=None, override_arguments={"amount": None}
        )
        for paused, decision in (
            (poisoned, bad),
            (healthy, ToolCallApprovalDecisionDto(approved=True)),
        ):
            [pending] = paused.pending
            await app.store.write(
                [
                    ResolvePause(
                        await _stored(app, str(pending.pause_id)),
                        PauseStatus.RESOLVED,
                        PauseResolution.REPLIED,
                        PauseAnswer(decision=decision, responder="u"),
                        app.clock.now(),
                    )
                ]
            )
        with caplog.at_level(logging.WARNING, logger="agboss"):
            outputs = await app.recover()
        assert [o.status for o in outputs] == [ExecutionStatus.COMPLETED]
        assert outputs[0].execution_id == healthy.execution_id
        with pytest.raises(ExecutionFailedError) as raised:
            await app.get(poisoned.execution_id)
        assert "unexpected error" in str(raised.value)
        failed = [r for r in caplog.records if "recovered-failed" in r.getMessage()]
        assert len(failed) == 1
        assert await app.recover() == []  # marked failed: never retried
    finally:
        await app.close()


async def test_a_takeover_and_a_recovery_are_logged_at_info(
    url: str, caplog: pytest.LogCaptureFixture, recorded: LivenessRecorder
) -> None:
    app = await _app(url, recorded)
    try:
        paused = await app.execute(Payments, PaymentDto(amount=5), owner_id="u")
        acquired = await write_one(
            app.store,
            AcquireLease(paused.execution_id, "dead-instance", timedelta(milliseconds=50)),
        )
        assert acquired is not None
        [pending] = paused.pending
        await app.store.write(
            [
                ResolvePause(
                    await _stored(app, str(pending.pause_id)),
                    PauseStatus.RESOLVED,
                    PauseResolution.REPLIED,
                    PauseAnswer(decision=ToolCallApprovalDecisionDto(approved=True)),
                    app.clock.now(),
                )
            ]
        )
        await asyncio.sleep(0.1)
        with caplog.at_level(logging.INFO, logger="agboss"):
            [done] = await app.recover()
        assert done.status is ExecutionStatus.COMPLETED
        messages = [r.getMessage() for r in caplog.records if r.levelno == logging.INFO]
        assert any("run.takeover" in m and "dead-instance" in m for m in messages)
        assert any("run.recovering" in m and paused.execution_id in m for m in messages)
    finally:
        await app.close()


async def _stored(app: App, pause_id: str) -> PauseRecord:
    """A pause as the store has it (what `ResolvePause` is given)."""
    found = await app.store.pauses.find_by_tenant_id_and_pause_id("default", pause_id)
    assert found is not None
    return found


async def test_a_withdraw_past_the_lease_is_not_started_again_by_the_sweep_and_is_cut_off(
    url: str,
    recorded: LivenessRecorder,
) -> None:
    clock = TestClock()
    # The pay tool's timeout (0.3 s) outlasts the lease: the withdraw runs past it.
    app = await _app(url, recorded, clock=clock, lease_ttl=timedelta(milliseconds=150))
    try:
        paused = await app.execute(Payments, PaymentDto(amount=5), owner_id="u", thread_id="t")
        assert paused.status is ExecutionStatus.PAUSED
        await clock.advance(timedelta(seconds=29.8))  # the sweep comes due mid-withdraw
        recorded.withdraw_hangs = True
        started = asyncio.Event()
        recorded.withdraw_started.append(started)
        cancelling = asyncio.ensure_future(app.cancel("t"))
        await asyncio.wait_for(started.wait(), 10)
        await clock.advance(timedelta(seconds=1))
        assert (await asyncio.wait_for(cancelling, 10)) is not None
        assert len(recorded.withdraws) == 1  # its holder kept the lease: the sweep did not start it
        assert await app.store.executions.find_interrupted(clock.now(), 10) == []
    finally:
        await app.close()
