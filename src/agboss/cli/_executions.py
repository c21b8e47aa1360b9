"""``agboss executions``: the execution trees in the store an operator acts on — those that
failed, and those no running build serves."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import click
from rich.markup import escape
from rich.table import Table

from agboss.app import App
from agboss.cli._common import APP, JSON, STORE, TENANT, duration, out, with_app
from agboss.enums import ExecutionStatus
from agboss.pauses import ExecutionSummary, FailedExecution, StrandedExecution

__all__ = ["execution_json", "executions", "stranded_json"]


@click.group()
def executions() -> None:
    """The execution trees in the store."""


@executions.command("list")
@APP
@STORE
@TENANT
@click.option(
    "--status",
    type=click.Choice([status.value for status in ExecutionStatus]),
    default=None,
    help="Only trees of this status.",
)
@click.option("--owner", default=None, help="Only this owner's threads.")
@click.option("--workflow", default=None, help="Only this workflow's trees.")
@click.option("--since", default=None, help="Only those changed within (30m, 4h, 2d).")
@click.option("--limit", default=50, show_default=True, help="How many to list (1 to 500).")
@JSON
def list_executions(
    target: str,
    store: str | None,
    tenant: str | None,
    status: str | None,
    owner: str | None,
    workflow: str | None,
    since: str | None,
    limit: int,
    as_json: bool,
) -> None:
    """Lists execution trees, newest change first, with what each waits on."""
    within = duration(since)

    async def action(app: App) -> list[ExecutionSummary]:
        page = await app.executions(
            status=status,
            owner_id=owner,
            workflow=workflow,
            since=None if within is None else app.clock.now() - within,
            tenant_id=tenant,
            limit=limit,
        )
        return page.entries

    entries = with_app(target, store, action, reads_only=True)
    if as_json:
        for entry in entries:
            click.echo(json.dumps(execution_json(entry)))
        return
    table = Table(title=f"{len(entries)} execution(s)")
    table.add_column("execution id", min_width=35, overflow="fold")
    for column in ("status", "changed", "owner", "workflow", "waits on"):
        table.add_column(column, overflow="fold")
    for entry in entries:
        table.add_row(
            escape(entry.execution_id),
            entry.status.value,
            entry.changed_at.strftime("%Y-%m-%d %H:%M"),
            escape(entry.owner_id),
            escape(entry.workflow),
            escape(_waits_on(entry)),
        )
    out().print(table)


def _waits_on(entry: ExecutionSummary) -> str:
    """What a tree waits on, as the table says it."""
    if entry.waiting_on:
        return ", ".join(f"{pause.ask.tool} ({pause.channel})" for pause in entry.waiting_on)
    if entry.wakes_at is not None:
        return f"until {entry.wakes_at.strftime('%Y-%m-%d %H:%M')}"
    return "—"


def execution_json(entry: ExecutionSummary) -> dict[str, Any]:
    """A tree as ``--json`` prints it."""
    return {
        "execution_id": entry.execution_id,
        "thread_id": entry.thread_id,
        "owner_id": entry.owner_id,
        "workflow": entry.workflow,
        "workflow_version": entry.workflow_version,
        "status": entry.status.value,
        "began_at": entry.began_at.isoformat(),
        "changed_at": entry.changed_at.isoformat(),
        "request": entry.request,
        "waiting_on": [
            {
                "pause_ref": pause.pause_ref,
                "pause_id": pause.pause_id,
                "tool": pause.ask.tool,
                "channel": pause.channel,
                "arguments": pause.ask.arguments,
            }
            for pause in entry.waiting_on
        ],
        "wakes_at": None if entry.wakes_at is None else entry.wakes_at.isoformat(),
    }


@executions.command("failed")
@APP
@STORE
@TENANT
@click.option("--owner", default=None, help="Only this owner's threads.")
@click.option("--limit", default=50, show_default=True, help="How many to list (1 to 500).")
@JSON
def list_failed(
    target: str, store: str | None, tenant: str | None, owner: str | None, limit: int, as_json: bool
) -> None:
    """Lists failed execution trees, newest first, with what they failed with."""

    async def action(app: App) -> list[FailedExecution]:
        page = await app.failed(tenant_id=tenant, owner_id=owner, limit=limit)
        return page.entries

    entries = with_app(target, store, action, reads_only=True)
    if as_json:
        for entry in entries:
            click.echo(json.dumps(_failed_json(entry)))
        return
    table = Table(title=f"{len(entries)} failed execution(s)")
    table.add_column("execution id", min_width=35, overflow="fold")
    for column in ("failed", "owner", "workflow", "code", "what happened"):
        table.add_column(column, overflow="fold")
    for entry in entries:
        table.add_row(  # what a model or a person wrote is shown as it is, not as markup
            escape(entry.execution_id),
            entry.failed_at.strftime("%Y-%m-%d %H:%M"),
            escape(entry.owner_id),
            escape(entry.workflow),
            escape(entry.code),
            escape(entry.message),
        )
    out().print(table)


def _failed_json(entry: FailedExecution) -> dict[str, Any]:
    return {**dataclasses.asdict(entry), "failed_at": entry.failed_at.isoformat()}


@executions.command("stranded")
@APP
@STORE
@TENANT
@click.option("--limit", default=50, show_default=True, help="How many to list (1 to 500).")
@JSON
def list_stranded(
    target: str, store: str | None, tenant: str | None, limit: int, as_json: bool
) -> None:
    """Lists waiting execution trees whose version no running instance serves, oldest
    first: what waits for a build that serves it (docs/deploying.md)."""

    async def action(app: App) -> list[StrandedExecution]:
        return (await app.stranded(tenant_id=tenant, limit=limit)).entries

    entries = with_app(target, store, action, reads_only=True)
    if as_json:
        for entry in entries:
            click.echo(json.dumps(stranded_json(entry)))
        return
    table = Table(title=f"{len(entries)} stranded execution(s)")
    table.add_column("execution id", min_width=35, overflow="fold")
    for column in ("began", "owner", "workflow", "version", "status"):
        table.add_column(column, overflow="fold")
    for entry in entries:
        table.add_row(
            escape(entry.execution_id),
            entry.began_at.strftime("%Y-%m-%d %H:%M"),
            escape(entry.owner_id),
            escape(entry.workflow),
            escape(entry.workflow_version),
            entry.status.value,
        )
    out().print(table)


def stranded_json(entry: StrandedExecution) -> dict[str, Any]:
    """A stranded tree as ``--json`` prints it (a deploy check's trees too)."""
    return {
        **dataclasses.asdict(entry),
        "status": entry.status.value,
        "began_at": entry.began_at.isoformat(),
    }
