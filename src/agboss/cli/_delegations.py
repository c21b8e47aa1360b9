"""``agboss delegations``: one person's questions handed to another (``grant``), listed and
revoked, from a terminal."""

from __future__ import annotations

import json

import click
from rich.markup import escape
from rich.table import Table

from agboss.app import App
from agboss.cli._common import APP, JSON, STORE, TENANT, duration, out, record_json, with_app
from agboss.records import Delegation

__all__ = ["delegations"]


@click.group()
def delegations() -> None:
    """Delegations: one person's questions answered by another (app.delegate)."""


@delegations.command("grant")
@click.argument("principal")
@click.option("--to", "delegate", required=True, help="Who answers PRINCIPAL's questions.")
@click.option("--by", "granted_by", required=True, help="Who grants it, for the record.")
@click.option("--for", "lasts", default=None, help="How long it holds (5d, 12h); else revoked.")
@click.option("--role", default=None, help="Only the questions of this role, by name.")
@click.option("--tool", default=None, help="Only the questions about this tool, by name.")
@click.option("--reason", default=None, help="Why, for the record.")
@APP
@STORE
@TENANT
@JSON
def grant(
    principal: str,
    delegate: str,
    granted_by: str,
    lasts: str | None,
    role: str | None,
    tool: str | None,
    reason: str | None,
    target: str,
    store: str | None,
    tenant: str | None,
    as_json: bool,
) -> None:
    """Hands PRINCIPAL's questions to another person: they answer them as "bo for ada"."""
    span = duration(lasts)

    async def action(app: App) -> Delegation:
        until = None if span is None else app.clock.now() + span
        return await app.delegate(
            principal,
            to=delegate,
            granted_by=granted_by,
            tenant_id=tenant,
            role=role,
            tool=tool,
            until=until,
            reason=reason,
        )

    made = with_app(target, store, action)
    if as_json:
        click.echo(json.dumps(record_json(made)))
        return
    until = "until revoked" if made.until is None else f"until {made.until:%Y-%m-%d %H:%M}"
    out().print(
        f"{made.delegation_id}: {escape(made.delegate)} answers for {escape(made.principal)} "
        f"{until}"
    )


@delegations.command("list")
@APP
@STORE
@TENANT
@click.option("--person", default=None, help="Only theirs: by, to, or granted by them.")
@click.option("--revoked", is_flag=True, help="List the revoked ones too.")
@JSON
def list_delegations(
    target: str,
    store: str | None,
    tenant: str | None,
    person: str | None,
    revoked: bool,
    as_json: bool,
) -> None:
    """Lists the delegations in the order granted: who answers for whom, which, until when."""

    async def action(app: App) -> list[Delegation]:
        return await app.delegations(tenant_id=tenant, person=person, revoked=revoked)

    found = with_app(target, store, action, reads_only=True)
    if as_json:
        for each in found:
            click.echo(json.dumps(record_json(each)))
        return
    table = Table(title=f"{len(found)} delegation(s)")
    for column in ("id", "for", "answered by", "which", "granted", "until", "revoked"):
        table.add_column(column, overflow="fold")
    for each in found:
        which = " ".join(
            part
            for part in (
                "" if each.role is None else f"role {each.role}",
                "" if each.tool is None else f"tool {each.tool}",
            )
            if part
        )
        table.add_row(
            each.delegation_id,
            escape(each.principal),
            escape(each.delegate),
            escape(which or "all"),
            escape(f"{each.granted_at:%Y-%m-%d %H:%M} by {each.granted_by}"),
            "" if each.until is None else f"{each.until:%Y-%m-%d %H:%M}",
            ""
            if each.revoked_at is None
            else escape(f"{each.revoked_at:%Y-%m-%d %H:%M} by {each.revoked_by}"),
        )
    out().print(table)


@delegations.command("revoke")
@click.argument("delegation_id")
@APP
@STORE
@TENANT
@click.option("--by", "revoked_by", required=True, help="Who revokes it, for the record.")
def revoke(
    delegation_id: str, target: str, store: str | None, tenant: str | None, revoked_by: str
) -> None:
    """Revokes a delegation: the delegate answers for the principal no more."""

    async def action(app: App) -> Delegation:
        return await app.revoke_delegation(delegation_id, revoked_by=revoked_by, tenant_id=tenant)

    revoked = with_app(target, store, action)
    click.echo(f"revoked {revoked.delegation_id} (by {revoked.revoked_by})")
