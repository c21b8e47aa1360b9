"""``agboss pauses claim``, ``release`` and ``reassign``: a person takes a waiting question
on, gives it back, or hands it to another role or person, from a terminal (who may is who may
answer, as for ``agboss resume``)."""

from __future__ import annotations

import json

import click
from rich.markup import escape

from agboss.app import App
from agboss.cli._common import APP, JSON, STORE, TENANT, out, with_app

__all__ = ["claim", "reassign", "release"]

_OWNER = click.option("--owner", default=None, help="The thread's owner, for its own question.")
_ANSWERED_BY = click.option(
    "--answered-by", default=None, help="Who claims, for a channel's question."
)


@click.command()
@click.argument("pause_id")
@APP
@STORE
@TENANT
@_OWNER
@_ANSWERED_BY
@JSON
def claim(
    pause_id: str,
    target: str,
    store: str | None,
    tenant: str | None,
    owner: str | None,
    answered_by: str | None,
    as_json: bool,
) -> None:
    """Claims a waiting question by its id: you handle it, others see who does."""

    async def action(app: App) -> dict[str, str]:
        made = await app.claim(pause_id, tenant_id=tenant, owner_id=owner, answered_by=answered_by)
        return {
            "pause_ref": made.pause_ref,
            "claimed_by": made.claimed_by,
            "claimed_until": made.claimed_until.isoformat(),
        }

    made = with_app(target, store, action)
    if as_json:
        click.echo(json.dumps(made))
        return
    until = made["claimed_until"][:16].replace("T", " ")
    out().print(f"{escape(made['claimed_by'])} handles it until {until} (or until released)")


@click.command()
@click.argument("pause_id")
@APP
@STORE
@TENANT
@_OWNER
@_ANSWERED_BY
def release(
    pause_id: str,
    target: str,
    store: str | None,
    tenant: str | None,
    owner: str | None,
    answered_by: str | None,
) -> None:
    """Releases your claim on a waiting question, for anyone to take on."""

    async def action(app: App) -> bool:
        return await app.release(
            pause_id, tenant_id=tenant, owner_id=owner, answered_by=answered_by
        )

    released = with_app(target, store, action)
    out().print("released" if released else "you held no claim on it: nothing changed")


@click.command()
@click.argument("pause_id")
@click.option("--reason", required=True, help="Why it is handed on (recorded).")
@click.option("--role", default=None, help="The role to hand it to, by name.")
@click.option("--to", "person", default=None, help="The person to hand it to.")
@APP
@STORE
@TENANT
@_OWNER
@click.option("--answered-by", default=None, help="Who hands it on, for a channel's question.")
@JSON
def reassign(
    pause_id: str,
    reason: str,
    role: str | None,
    person: str | None,
    target: str,
    store: str | None,
    tenant: str | None,
    owner: str | None,
    answered_by: str | None,
    as_json: bool,
) -> None:
    """Hands a waiting question to another role (--role), a person (--to), or both: it is
    asked again under a new id, and the old id answers nothing."""

    async def action(app: App) -> dict[str, str | None]:
        made = await app.reassign(
            pause_id,
            reason=reason,
            role=role,
            to=person,
            tenant_id=tenant,
            owner_id=owner,
            answered_by=answered_by,
        )
        return {
            "pause_ref": made.pause_ref,
            "previous_ref": made.previous_ref,
            "role": made.role,
            "to": made.to,
            "claimed_until": None if made.claimed_until is None else made.claimed_until.isoformat(),
            "reassigned_by": made.reassigned_by,
            "status": made.status.value,
        }

    made = with_app(target, store, action)
    if as_json:
        click.echo(json.dumps(made))
        return
    whom = made["role"] if made["to"] is None else f"{made['to']} ({made['role']})"
    out().print(
        f"handed to {escape(whom or '')}: asked again as {made['pause_ref']}; "
        f"{made['previous_ref']} answers nothing any more"
    )
