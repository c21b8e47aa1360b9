"""``agboss pauses claim`` and ``release``: a person takes a waiting question on, or gives it
back, from a terminal (who may is who may answer, as for ``agboss resume``)."""

from __future__ import annotations

import json

import click
from rich.markup import escape

from agboss.app import App
from agboss.cli._common import APP, JSON, STORE, TENANT, out, with_app

__all__ = ["claim", "release"]

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
