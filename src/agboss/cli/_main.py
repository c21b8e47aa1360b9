"""The ``agboss`` commands (click for the arguments, rich for tables and colours)."""

from __future__ import annotations

import json
from typing import Any

import click
from rich.markup import escape
from rich.table import Table

from agboss.app import App
from agboss.cli._audit import audit
from agboss.cli._claims import claim, reassign, release
from agboss.cli._common import APP, JSON, STORE, TENANT, duration, out, record_json, run, with_app
from agboss.cli._delegations import delegations
from agboss.cli._deploys import deploy_check
from agboss.cli._executions import executions
from agboss.pauses import InboxEntry
from agboss.records import PendingPause, StandingDecision
from agboss.store import store_from

__all__ = ["cli", "main"]


def _pause_json(pause: PendingPause) -> dict[str, Any]:
    return {
        "pause_id": pause.pause_id,
        "answered_by": pause.answered_by.value,
        "agent": pause.agent,
        "channel": pause.channel,
        "item_index": pause.item_index,
        "child_execution_id": pause.child_execution_id,
        "kind": pause.ask.kind.value,
        "tool": pause.ask.tool,
        "arguments": pause.ask.arguments,
        "votes": None if pause.votes is None else pause.votes.model_dump(mode="json"),
    }


def _entry_json(entry: InboxEntry) -> dict[str, Any]:
    return {
        **_pause_json(entry.pause),
        "execution_id": entry.execution_id,
        "thread_id": entry.thread_id,
        "owner_id": entry.owner_id,
        "asked_at": entry.asked_at.isoformat(),
        "expires_at": None if entry.expires_at is None else entry.expires_at.isoformat(),
        "next_step": None if entry.next_step is None else entry.next_step.kind,
        "next_step_at": None if entry.next_step_at is None else entry.next_step_at.isoformat(),
        "claimed_by": entry.claimed_by,
        "claimed_until": None if entry.claimed_until is None else entry.claimed_until.isoformat(),
    }


@click.group()
def cli() -> None:
    """agboss: the pauses and executions of an application's store, from a terminal."""


@cli.command()
@STORE
def migrate(store: str | None) -> None:
    """Brings the store's schema to this agboss's version (safe with instances running)."""

    async def work() -> int:
        opened = store_from(store)
        await opened.open(migrate=True)
        try:
            return await opened.schema_version()
        finally:
            await opened.close()

    version = run(work)
    click.echo(f"the store is at schema version {version}")


@cli.group()
def pauses() -> None:
    """The pauses waiting in the store."""


@pauses.command("list")
@APP
@STORE
@TENANT
@click.option("--owner", default=None, help="Only this owner's threads.")
@click.option(
    "--voter",
    default=None,
    help="Only those naming this person a voter, on anyone's thread (with --owner: and those).",
)
@click.option("--channel", default=None, help="Only this channel (a role's or a channel's name).")
@click.option("--older-than", default=None, help="Only those asked longer ago (30m, 4h, 2d).")
@click.option(
    "--expiring-within", default=None, help="Only those whose deadline comes within (30m, 4h)."
)
@click.option("--limit", default=50, show_default=True, help="How many to list (1 to 500).")
@JSON
def list_pauses(
    target: str,
    store: str | None,
    tenant: str | None,
    owner: str | None,
    voter: str | None,
    channel: str | None,
    older_than: str | None,
    expiring_within: str | None,
    limit: int,
    as_json: bool,
) -> None:
    """Lists waiting pauses, oldest first (a channel pause's id is never shown)."""
    age = duration(older_than)
    within = duration(expiring_within)

    async def action(app: App) -> list[InboxEntry]:
        now = app.clock.now()
        page = await app.pending(
            tenant_id=tenant,
            owner_id=owner,
            voter=voter,
            channel=channel,
            asked_before=None if age is None else now - age,
            expiring_before=None if within is None else now + within,
            limit=limit,
        )
        return page.entries

    entries = with_app(target, store, action, reads_only=True)
    if as_json:
        for entry in entries:
            click.echo(json.dumps(_entry_json(entry)))
        return
    table = Table(title=f"{len(entries)} waiting pause(s)")
    # An id is never cut (a prefix answers nothing): its column folds, never shrinks.
    table.add_column("pause id", min_width=32, overflow="fold")
    columns = ("asked", "expires", "next", "claimed by", "owner", "agent", "channel", "kind")
    for column in (*columns, "tool call"):
        table.add_column(column, overflow="fold")
    for entry in entries:
        pause = entry.pause
        arguments = ", ".join(f"{k}={v!r}" for k, v in pause.ask.arguments.items())
        table.add_row(  # what the model or a person wrote is shown as it is, not as markup
            escape(pause.pause_id) if pause.pause_id else "[dim](its channel's)[/dim]",
            entry.asked_at.strftime("%Y-%m-%d %H:%M"),
            "—" if entry.expires_at is None else entry.expires_at.strftime("%Y-%m-%d %H:%M"),
            _next_step(entry),
            "—" if entry.claimed_by is None else escape(entry.claimed_by),
            escape(entry.owner_id),
            escape(pause.agent),
            escape(pause.channel),
            pause.ask.kind.value,
            escape(f"{pause.ask.tool}({arguments})"),
        )
    out().print(table)


def _next_step(entry: InboxEntry) -> str:
    """Its ladder's next step, as the table shows it: ``remind 2026-12-05 14:00``."""
    if entry.next_step is None or entry.next_step_at is None:
        return "—"
    return f"{entry.next_step.kind} {entry.next_step_at.strftime('%Y-%m-%d %H:%M')}"


@pauses.command("show")
@click.argument("pause_id")
@APP
@STORE
@TENANT
@JSON
def show_pause(
    pause_id: str, target: str, store: str | None, tenant: str | None, as_json: bool
) -> None:
    """Shows one pause by its id: its question, who may answer, where it stands."""

    async def action(app: App) -> dict[str, Any]:
        found = await app.describe_pause(pause_id, tenant_id=tenant)
        decision = found.decision
        return {
            "status": found.status.value,
            "resolution": None if found.resolution is None else found.resolution.value,
            "answered_by": found.pause.answered_by.value,
            "agent": found.pause.agent,
            "channel": found.pause.channel,
            "execution_id": found.execution_id,
            "asked_at": found.asked_at.isoformat(),
            "kind": found.pause.ask.kind.value,
            "tool": found.pause.ask.tool,
            "arguments": found.pause.ask.arguments,
            "digest": found.pause.ask.digest,
            "responder": found.responder,
            "resolved_at": None if found.resolved_at is None else found.resolved_at.isoformat(),
            "decision": None if decision is None else decision.model_dump(exclude_none=True),
            "reply": found.reply,
            "claimed_by": found.claimed_by,
            "claimed_until": None
            if found.claimed_until is None
            else found.claimed_until.isoformat(),
        }

    shown = with_app(target, store, action, reads_only=True)
    if as_json:
        click.echo(json.dumps(shown))
        return
    table = Table(show_header=False, title=escape(f"pause {pause_id}"))
    table.add_column(overflow="fold")
    table.add_column(overflow="fold")
    for key, value in shown.items():
        text = json.dumps(value) if isinstance(value, dict) else str(value)
        table.add_row(key, escape(text))
    out().print(table)


@cli.command()
@click.argument("pause_id")
@APP
@STORE
@TENANT
@click.option("--approve", is_flag=True, help="Approve the call.")
@click.option("--reject", is_flag=True, help="Reject the call.")
@click.option("--reason", default=None, help="Why (a rejection's reason is read by the model).")
@click.option("--reply", default=None, help="Answer in words, read by the role's interpreter.")
@click.option("--owner", default=None, help="The thread's owner, for a thread-owner pause.")
@click.option("--answered-by", default=None, help="Who answered, for a channel pause.")
@JSON
def resume(
    pause_id: str,
    target: str,
    store: str | None,
    tenant: str | None,
    approve: bool,
    reject: bool,
    reason: str | None,
    reply: str | None,
    owner: str | None,
    answered_by: str | None,
    as_json: bool,
) -> None:
    """Answers a pause by its id; the application's instances move the tree."""
    answers = (("--approve", approve), ("--reject", reject), ("--reply", reply is not None))
    given = [flag for flag, on in answers if on]
    if len(given) != 1:
        said = " and ".join(given) + " contradict each other: " if given else ""
        raise click.UsageError(f"{said}give one of --approve, --reject or --reply")

    async def action(app: App) -> dict[str, Any]:
        decision = None
        if approve or reject:
            decision = {"approved": approve, "reason": reason}
        receipt = await app.answer(
            pause_id,
            decision=decision,
            reply=reply,
            tenant_id=tenant,
            owner_id=owner,
            answered_by=answered_by,
            move=False,
        )
        return {
            "execution_id": receipt.execution_id,
            "thread_id": receipt.thread_id,
            "approved": receipt.decision.approved,
            "reason": receipt.decision.reason,
            "override_arguments": receipt.decision.override_arguments,
            "responder": receipt.responder,
            "repeated": receipt.repeated,
            "votes": None if receipt.votes is None else receipt.votes.model_dump(mode="json"),
            "decided": receipt.decided,
        }

    done = with_app(target, store, action)
    if as_json:
        click.echo(json.dumps(done))
        return
    verdict_text = "[green]approved[/green]" if done["approved"] else "[red]rejected[/red]"
    decided = ""
    if done["override_arguments"]:
        decided += " with " + ", ".join(
            f"{key}={value!r}" for key, value in done["override_arguments"].items()
        )
    if done["reason"]:
        decided += f" ({done['reason']})"
    who = f"{verdict_text} by {escape(str(done['responder']))}{escape(decided)}"
    if done["repeated"]:
        out().print(f"already {who}: nothing new recorded")
        return
    if not done["decided"]:  # a vote: the question waits for the other voters
        votes = done["votes"]
        approvals = sum(1 for vote in votes["votes"] if vote["approved"])
        out().print(
            f"{who}: a vote, recorded. {approvals} of the {votes['needed']} approvals it needs; "
            "the question waits for the other voters."
        )
        return
    out().print(
        f"{who}: recorded. A running instance of the application carries execution "
        f"{done['execution_id']} on: at once if it hears of it (any instance on PostgreSQL), "
        "else within 30 seconds, or when it next starts."
    )


@cli.command()
@click.argument("thread_id")
@APP
@STORE
@TENANT
@click.option("--owner", default=None, help="The thread's owner (a user cancelling their own).")
def cancel(
    thread_id: str, target: str, store: str | None, tenant: str | None, owner: str | None
) -> None:
    """Cancels a conversation: its executions, and their pauses (each channel told)."""

    async def action(app: App) -> str | None:
        result = await app.cancel(thread_id, tenant_id=tenant, owner_id=owner)
        return None if result is None else result.execution_id

    cancelled = with_app(target, store, action)
    click.echo("nothing was left to cancel" if cancelled is None else f"cancelled {cancelled}")


@cli.command()
@click.argument("execution_id")
@APP
@STORE
@TENANT
@click.option("--by", "retried_by", default=None, help="Who retries it, for the record.")
@click.option(
    "--call-ran",
    "call_result",
    default=None,
    help="A call cut off mid-call (tool.interrupted) took effect, and did this (the model "
    "reads it).",
)
@click.option(
    "--call-not-run",
    is_flag=True,
    default=False,
    help="A call cut off mid-call did not take effect: it runs once more, with the same key.",
)
@JSON
def retry(
    execution_id: str,
    target: str,
    store: str | None,
    tenant: str | None,
    retried_by: str | None,
    call_result: str | None,
    call_not_run: bool,
    as_json: bool,
) -> None:
    """Runs a failed execution tree again from its journal (after a fix, or an outage); for a
    call cut off under OnInterrupted.FAIL, once you checked it, say how it went (--by, and
    --call-ran or --call-not-run)."""
    if call_result is not None and call_not_run:
        raise click.UsageError("--call-ran and --call-not-run say opposite things: give one")
    call_ran = True if call_result is not None else False if call_not_run else None

    async def action(app: App) -> dict[str, Any]:
        output = await app.retry(
            execution_id,
            tenant_id=tenant,
            retried_by=retried_by,
            call_ran=call_ran,
            call_result=call_result,
        )
        return {
            "execution_id": output.execution_id,
            "status": output.status.value,
            "pending": [_pause_json(pause) for pause in output.pending],
        }

    done = with_app(target, store, action, models=True)
    if as_json:
        click.echo(json.dumps(done))
        return
    waiting = len(done["pending"])
    more = f", {waiting} question(s) waiting" if waiting else ""
    out().print(f"retried {escape(done['execution_id'])}: {done['status']}{more}")


cli.add_command(executions)
cli.add_command(audit)
pauses.add_command(claim)
pauses.add_command(release)
pauses.add_command(reassign)
cli.add_command(deploy_check)
cli.add_command(delegations)


@cli.group()
def standing() -> None:
    """Standing decisions: tools' calls approved ahead of time (app.allow)."""


@standing.command("list")
@APP
@STORE
@TENANT
@click.option("--revoked", is_flag=True, help="List the revoked ones too.")
@JSON
def list_standing(
    target: str, store: str | None, tenant: str | None, revoked: bool, as_json: bool
) -> None:
    """Lists the standing decisions, oldest first, with what they approve and where."""

    async def action(app: App) -> list[StandingDecision]:
        return await app.standing(tenant_id=tenant, revoked=revoked)

    decisions = with_app(target, store, action, reads_only=True)
    if as_json:
        for decision in decisions:
            click.echo(json.dumps(record_json(decision)))
        return
    table = Table(title=f"{len(decisions)} standing decision(s)")
    for column in ("id", "approves", "where", "granted", "until", "revoked"):
        table.add_column(column, overflow="fold")
    for decision in decisions:
        table.add_row(
            decision.decision_id,
            escape(decision.tool or f"role {decision.role}"),
            escape(_scope_of(decision)),
            escape(f"{decision.granted_at:%Y-%m-%d %H:%M} by {decision.granted_by}"),
            "" if decision.until is None else f"{decision.until:%Y-%m-%d %H:%M}",
            ""
            if decision.revoked_at is None
            else escape(f"{decision.revoked_at:%Y-%m-%d %H:%M} by {decision.revoked_by}"),
        )
    out().print(table)


@standing.command("revoke")
@click.argument("decision_id")
@APP
@STORE
@TENANT
@click.option("--by", "revoked_by", required=True, help="Who revokes it, for the record.")
def revoke_standing(
    decision_id: str, target: str, store: str | None, tenant: str | None, revoked_by: str
) -> None:
    """Revokes a standing decision: the calls it approved are asked again."""

    async def action(app: App) -> StandingDecision:
        return await app.revoke(decision_id, revoked_by=revoked_by, tenant_id=tenant)

    revoked = with_app(target, store, action)
    click.echo(f"revoked {revoked.decision_id} (by {revoked.revoked_by})")


def _scope_of(decision: StandingDecision) -> str:
    where = decision.thread_id or decision.owner_id
    return decision.scope.value + ("" if where is None else f" {where}")


@cli.command()
@APP
@STORE
def recover(target: str, store: str | None) -> None:
    """Moves now the trees whose instance died mid-pass, and answers nobody moved."""

    async def action(app: App) -> int:
        return len(await app.recover())

    moved = with_app(target, store, action, models=True)
    click.echo(f"moved {moved} execution(s)")


def main() -> None:
    """The ``agboss`` entry point."""
    cli()
