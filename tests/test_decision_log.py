"""A decision log no one can rewrite without it showing (issue 56, points 2, 3 and 5): every
decision, and every outcome that stands for one, appended to the tenant's log in the commit that
records it, chained by hash; ``verify`` finds the first entry edited, removed or reordered;
the export gives it to an auditor masked, and reads back; two instances keep one chain."""

from __future__ import annotations

import asyncio
import io
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from click.testing import CliRunner

from agboss import ExecutionStatus
from agboss.audit import ExportFormat, Tampering, read_export
from agboss.cli._main import cli
from agboss.enums import Decider, Outcome
from agboss.records import chain_digest, pause_ref
from agboss.testing import TestClock, TestEnv, call_tools, decide_with, test_with, tool_call
from tests.apps.desk import OfficeAgent, OfficeApplication
from tests.apps.pii_app import (
    IBAN,
    CustomerDto,
    PiiApplication,
    RefundAgent,
    RefundReplyInterpreter,
    RefundTool,
    RefundWorkflow,
)
from tests.stores import STORE_KINDS, edit_rows, store_url
from tests.test_builds_side_by_side import _answer_channels, _owners, _paused
from tests.test_pauses import BOTH, DONE

APP = "tests.apps.desk:OfficeApplication"


async def _decided(env: TestEnv, trees: int) -> list[str]:
    """``trees`` trees each asked two questions, the owner's answered then the desk's: two
    entries a tree. Their roots."""
    env.mock_llm(OfficeAgent).then_return(*[BOTH, DONE] * trees)
    roots = []
    for _ in range(trees):
        began = await _paused(env)
        owners = _owners(began).pause_id
        assert owners is not None
        await env.app.resume(owners, decision={"approved": True}, owner_id="user-1")
        done = await _answer_channels(env, await env.app.get(began.execution_id))
        assert done.status is ExecutionStatus.COMPLETED
        roots.append(began.execution_id)
    return roots


@asynccontextmanager
async def _two_days(url: str, apart: timedelta) -> AsyncIterator[TestEnv]:
    """An application whose log holds two trees' decisions (four entries) on two days: the
    first tree's on 2026-03-01, the second's ``apart`` later."""
    clock = TestClock(datetime(2026, 3, 1, tzinfo=UTC))
    async with test_with(OfficeApplication, store=url, clock=clock) as env:
        await _decided(env, 1)
        await clock.jump(apart)
        await _decided(env, 1)
        yield env


@pytest.mark.parametrize("kind", STORE_KINDS)
async def test_each_decision_is_logged_with_who_what_when_and_through_which_role(
    kind: str, tmp_path: Path
) -> None:
    async with store_url(kind, tmp_path) as url, test_with(OfficeApplication, store=url) as env:
        [root] = await _decided(env, 1)
        entries = [shown.entry for shown in (await env.app.decisions()).entries]
        assert [(e.outcome, e.decided_by, e.who, e.role) for e in entries] == [
            (Outcome.APPROVED, Decider.PERSON, "user-1", "expense-approval-channel"),
            (Outcome.APPROVED, Decider.PERSON, "desk", "deposit-approval-channel"),
        ]
        owners = entries[0]
        assert owners.root_execution_id == root
        assert (owners.tool, owners.arguments) == (
            "book-expense-tool",
            {"purpose": "taxi", "amount": 12.5},
        )
        assert owners.digest is not None
        assert owners.decision is not None
        assert owners.decision.digest == owners.digest  # the call it decided
        assert owners.asked_at <= owners.decided_at
        assert (await env.app.verify_decisions()).ok


@pytest.mark.parametrize("kind", STORE_KINDS)
async def test_questions_a_cancelled_thread_closes_are_logged_as_closed_by_its_owner(
    kind: str, tmp_path: Path
) -> None:
    async with store_url(kind, tmp_path) as url, test_with(OfficeApplication, store=url) as env:
        env.mock_llm(OfficeAgent).then_return(BOTH)
        began = await _paused(env)
        thread = (await env.app.get(began.execution_id)).thread_id
        await env.app.cancel(thread, owner_id="user-1")
        entries = [shown.entry for shown in (await env.app.decisions()).entries]
        assert {(e.outcome, e.decided_by, e.who) for e in entries} == {
            (Outcome.CANCELLED, Decider.PERSON, "user-1")
        }
        assert sorted(e.pause_ref for e in entries) == sorted(p.pause_ref for p in began.pending)


@pytest.mark.parametrize("kind", STORE_KINDS)
async def test_a_reply_read_by_a_decision_model_is_logged_with_its_probabilities_and_masked(
    kind: str, tmp_path: Path
) -> None:
    async with store_url(kind, tmp_path) as url, test_with(PiiApplication, store=url) as env:
        env.mock_llm(RefundAgent).then_return(
            call_tools(tool_call(RefundTool, order_id="o-7", iban="<IBAN_1>")),
            DONE,
        )
        env.mock_llm(RefundReplyInterpreter).then_return(decide_with(approved=0.93))
        paused = await env.app.execute(
            RefundWorkflow, CustomerDto(order_id="o-7", iban=IBAN, note=""), owner_id="u"
        )
        [pending] = paused.pending
        assert pending.pause_id is not None
        await env.app.resume(pending.pause_id, reply="yes, go ahead", owner_id="u")
        [shown] = (await env.app.decisions()).entries
        entry = shown.entry
        assert (entry.outcome, entry.decided_by, entry.who) == (
            Outcome.APPROVED,
            Decider.MODEL,
            "u",
        )
        assert entry.reply == "yes, go ahead"
        assert entry.reading is not None
        assert (entry.reading.model, entry.reading.probabilities) == (
            "test/interpreter",
            {"approved": 0.93},
        )
        # Shown masked, as every record that leaves the server; stored as it was decided.
        assert entry.arguments["iban"] == "****3000"
        assert shown.masked
        exported = io.StringIO()
        await env.app.export_decisions(exported)
        assert IBAN not in exported.getvalue()
        [stored] = await env.app.store.records.decision_log("default")
        assert stored.entry.arguments["iban"] == IBAN
        assert stored.digest == shown.digest


def _tamper(kind: str) -> list[tuple[str, tuple[object, ...]]]:
    """The statements that tamper with entry 2 (of 4) as ``kind`` says."""
    where = "WHERE tenant_id = 'default' AND seq = ?"
    if kind == "edited":
        edit = (
            "UPDATE decision_log SET entry_json = "
            """replace(entry_json, '"approved":true', '"approved":false') """
        )
        return [(edit + where, (2,))]
    if kind == "removed":
        return [(f"DELETE FROM decision_log {where}", (2,))]
    if kind == "reordered":
        return [
            (f"UPDATE decision_log SET seq = 100 {where}", (2,)),
            (f"UPDATE decision_log SET seq = 2 {where}", (3,)),
            (f"UPDATE decision_log SET seq = 3 {where}", (100,)),
        ]
    assert kind == "truncated"
    return [(f"DELETE FROM decision_log {where.replace('seq = ?', 'seq >= ?')}", (3,))]


EXPECTED = {
    "edited": (2, Tampering.EDITED),
    "removed": (2, Tampering.REMOVED),
    "reordered": (2, Tampering.REORDERED),
    "truncated": (3, Tampering.REMOVED),
}


@pytest.mark.parametrize("tampering", sorted(EXPECTED))
@pytest.mark.parametrize("kind", STORE_KINDS)
async def test_an_entry_edited_removed_or_swapped_in_the_database_is_found_by_verify(
    kind: str, tampering: str, tmp_path: Path
) -> None:
    async with store_url(kind, tmp_path) as url:
        async with test_with(OfficeApplication, store=url) as env:
            await _decided(env, 2)
            before = await env.app.verify_decisions()
            assert (before.ok, before.checked) == (True, 4)
            for statement, params in _tamper(tampering):
                assert await edit_rows(url, statement, *params) == 1 or tampering == "truncated"
            found = await env.app.verify_decisions()
        assert found.broken is not None
        assert (found.broken.seq, found.broken.tampering) == EXPECTED[tampering]
        # The command says so too, from the store alone, and exits non-zero.
        command = ["audit", "verify", "--store", url, "--json"]
        said = await asyncio.to_thread(CliRunner().invoke, cli, command)  # a loop of its own
        assert said.exit_code == 1, said.output
        report = json.loads(said.output)
        assert (report["ok"], report["broken"]["seq"]) == (False, EXPECTED[tampering][0])


@pytest.mark.parametrize("kind", STORE_KINDS)
async def test_an_entry_rewritten_with_its_digest_recomputed_is_found_by_what_follows_it(
    kind: str, tmp_path: Path
) -> None:
    async with store_url(kind, tmp_path) as url, test_with(OfficeApplication, store=url) as env:
        await _decided(env, 2)
        anchor = (await env.app.verify_decisions()).anchor
        assert anchor is not None
        assert anchor.seq == 4
        [second] = [e for e in await env.app.store.records.decision_log("default") if e.seq == 2]
        forged = second.entry_json.replace('"approved":true', '"approved":false')
        assert forged != second.entry_json
        digest = chain_digest(second.previous, forged)
        await edit_rows(
            url,
            "UPDATE decision_log SET entry_json = ?, digest = ? WHERE tenant_id = ? AND seq = ?",
            forged,
            digest,
            "default",
            2,
        )
        found = await env.app.verify_decisions()
        assert found.broken is not None
        assert (found.broken.seq, found.broken.tampering) == (2, Tampering.EDITED)
        # Rewritten whole from entry 2 on, head included: only an anchor kept elsewhere shows it.
        for entry in await env.app.store.records.decision_log("default", after=2):
            digest = chain_digest(digest, entry.entry_json)
            await edit_rows(
                url,
                "UPDATE decision_log SET previous = (SELECT digest FROM decision_log "
                "WHERE tenant_id = ? AND seq = ?), digest = ? WHERE tenant_id = ? AND seq = ?",
                "default",
                entry.seq - 1,
                digest,
                "default",
                entry.seq,
            )
        await edit_rows(url, "UPDATE decision_chains SET head = ?", digest)
        assert (await env.app.verify_decisions()).ok
        caught = await env.app.verify_decisions(anchor=str(anchor))
        assert caught.broken is not None
        assert (caught.broken.seq, caught.broken.tampering) == (4, Tampering.EDITED)


@pytest.mark.parametrize("kind", STORE_KINDS)
async def test_two_instances_deciding_at_once_keep_one_chain(kind: str, tmp_path: Path) -> None:
    async with (
        store_url(kind, tmp_path) as url,
        test_with(OfficeApplication, store=url) as first,
        test_with(OfficeApplication, store=url) as second,
    ):
        first.mock_llm(OfficeAgent).then_return(*[BOTH] * 6)
        began = [await _paused(first) for _ in range(6)]
        owners = [_owners(output).pause_id or "" for output in began]
        answers = [
            (first if index % 2 else second).app.answer(
                pause_id, decision={"approved": index % 3 != 0}, owner_id="user-1"
            )
            for index, pause_id in enumerate(owners)
        ]
        await asyncio.gather(*answers)
        verified = await second.app.verify_decisions()
        assert (verified.ok, verified.checked) == (True, 6)
        logged = (await first.app.decisions()).entries
        assert sorted(e.entry.pause_ref for e in logged) == sorted(map(pause_ref, owners))


@pytest.mark.parametrize("form", list(ExportFormat))
@pytest.mark.parametrize("kind", STORE_KINDS)
async def test_the_export_reads_back_as_the_log_shows_it(
    kind: str, form: ExportFormat, tmp_path: Path
) -> None:
    async with store_url(kind, tmp_path) as url, _two_days(url, timedelta(days=2)) as env:
        shown = (await env.app.decisions()).entries
        written = io.StringIO()
        assert await env.app.export_decisions(written, form=form) == 4
        assert list(read_export(io.StringIO(written.getvalue()), form)) == shown
        since = io.StringIO()
        count = await env.app.export_decisions(
            since, since=datetime(2026, 3, 2, tzinfo=UTC), form=form
        )
        assert count == 2
        assert [e.seq for e in read_export(io.StringIO(since.getvalue()), form)] == [3, 4]


@pytest.mark.parametrize("kind", STORE_KINDS)
async def test_a_cut_removes_the_oldest_entries_and_the_rest_stays_verifiable(
    kind: str, tmp_path: Path
) -> None:
    async with store_url(kind, tmp_path) as url, _two_days(url, timedelta(days=30)) as env:
        assert await env.app.cut_decisions(datetime(2026, 3, 15, tzinfo=UTC)) == 2
        verified = await env.app.verify_decisions()
        assert (verified.ok, verified.checked, verified.cut_seq) == (True, 2, 2)
        assert [e.seq for e in (await env.app.decisions()).entries] == [3, 4]
        assert verified.anchor is not None
        assert verified.anchor.seq == 4


@pytest.mark.parametrize("kind", STORE_KINDS)
async def test_the_command_line_exports_and_cuts_the_log(kind: str, tmp_path: Path) -> None:
    async with store_url(kind, tmp_path) as url:
        async with _two_days(url, timedelta(days=30)) as env:
            shown = (await env.app.decisions()).entries
        runner = CliRunner()
        written = tmp_path / "decisions.csv"
        common = ["--app", APP, "--store", url]
        exported = await asyncio.to_thread(
            runner.invoke,
            cli,
            ["audit", "export", *common, "--format", "csv", "--out", str(written)],
        )
        assert exported.exit_code == 0, exported.output
        assert "4 entries written" in exported.output
        with written.open(encoding="utf-8", newline="") as lines:
            assert list(read_export(lines, ExportFormat.CSV)) == shown
        cut = await asyncio.to_thread(
            runner.invoke, cli, ["audit", "cut", *common, "--before", "2026-03-15"]
        )
        assert cut.exit_code == 0, cut.output
        assert "2 entries removed" in cut.output
        verified = await asyncio.to_thread(runner.invoke, cli, ["audit", "verify", "--store", url])
        assert verified.exit_code == 0, verified.output
        assert "2 entries hold, cut by retention after entry 2" in verified.output
        bad = await asyncio.to_thread(
            runner.invoke, cli, ["audit", "verify", "--store", url, "--anchor", "nine"]
        )
        assert bad.exit_code == 2
        assert "is not an anchor" in bad.output
