"""``agboss audit``: the decision log — verified from the store alone, exported masked for an
auditor, cut by retention."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import TextIO

import click
from rich.markup import escape

from agboss.app import App
from agboss.audit import Anchor, ExportFormat, Verification, verify_decisions
from agboss.cli._common import APP, JSON, STORE, TENANT, check_exists, out, run, with_app
from agboss.context import DEFAULT_TENANT_ID
from agboss.store import store_from

__all__ = ["audit"]


@click.group()
def audit() -> None:
    """The decision log: every decision and what stands for one, chained by hash."""


def _moment(text: str | None, flag: str) -> datetime | None:
    """An ISO 8601 date or time option; one without a zone is UTC."""
    if text is None:
        return None
    try:
        moment = datetime.fromisoformat(text.strip())
    except ValueError:
        raise click.BadParameter(
            f"{text[:40]!r} is not an ISO 8601 date or time (2026-01-31, 2026-01-31T09:00)",
            param_hint=flag,
        ) from None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def _anchor(text: str | None) -> Anchor | None:
    if text is None:
        return None
    try:
        return Anchor.parse(text)
    except ValueError as error:
        raise click.BadParameter(str(error), param_hint="--anchor") from None


@audit.command("verify")
@STORE
@TENANT
@click.option("--all", "every", is_flag=True, help="Every tenant that has a log.")
@click.option(
    "--anchor",
    default=None,
    help="<seq>:<digest> an earlier verification printed: the log must still hold it.",
)
@JSON
def verify(
    store: str | None, tenant: str | None, every: bool, anchor: str | None, as_json: bool
) -> None:
    """Walks each tenant's chain and reports the first entry edited, removed or reordered;
    exits 1 when one is found. Needs the store alone, not the application."""
    if every and (tenant is not None or anchor is not None):
        raise click.UsageError("--all checks every tenant: leave out --tenant and --anchor")
    recorded = _anchor(anchor)

    async def work() -> list[Verification]:
        check_exists(store)
        opened = store_from(store)
        await opened.open(migrate=False)
        try:
            tenants = (
                await opened.records.decision_tenants() if every else [tenant or DEFAULT_TENANT_ID]
            )
            return [await verify_decisions(opened, name, anchor=recorded) for name in tenants]
        finally:
            await opened.close()

    found = run(work)
    for result in found:
        if as_json:
            click.echo(json.dumps(_verification_json(result)))
        else:
            out().print(_said(result))
    if not all(result.ok for result in found):
        raise SystemExit(1)


def _said(result: Verification) -> str:
    tenant = escape(result.tenant_id)
    if result.broken is not None:
        broken = result.broken
        return (
            f"[red]{tenant}: the chain breaks at entry {broken.seq} "
            f"({broken.tampering.value})[/red]: {escape(broken.detail)}"
        )
    cut = f", cut by retention after entry {result.cut_seq}" if result.cut_seq else ""
    anchor = "" if result.anchor is None else f"; anchor {result.anchor}"
    return f"[green]{tenant}: {result.checked} entries hold{cut}[/green]{anchor}"


def _verification_json(result: Verification) -> dict[str, object]:
    broken = result.broken
    return {
        "tenant_id": result.tenant_id,
        "ok": result.ok,
        "checked": result.checked,
        "cut_seq": result.cut_seq,
        "anchor": None if result.anchor is None else str(result.anchor),
        "broken": None
        if broken is None
        else {"seq": broken.seq, "tampering": broken.tampering.value, "detail": broken.detail},
    }


@audit.command("export")
@APP
@STORE
@TENANT
@click.option("--since", default=None, help="Only entries decided at or after (ISO 8601, UTC).")
@click.option(
    "--format",
    "form",
    type=click.Choice([form.value for form in ExportFormat]),
    default=ExportFormat.JSONL.value,
    show_default=True,
)
@click.option("--out", "path", default=None, help="Write to this file instead of stdout.")
def export(
    target: str,
    store: str | None,
    tenant: str | None,
    since: str | None,
    form: str,
    path: str | None,
) -> None:
    """Writes the tenant's decision log for an auditor, masked by the PII rules."""
    moment = _moment(since, "--since")

    async def action(app: App) -> int:
        with _output(path) as stream:
            return await app.export_decisions(
                stream, tenant_id=tenant, since=moment, form=ExportFormat(form)
            )

    count = with_app(target, store, action, reads_only=True)
    if path is not None:
        click.echo(f"{count} entries written to {path}")


@contextmanager
def _output(path: str | None) -> Iterator[TextIO]:
    if path is None:
        yield sys.stdout
        return
    with Path(path).open("w", encoding="utf-8", newline="") as stream:
        yield stream


@audit.command("cut")
@APP
@STORE
@TENANT
@click.option("--before", required=True, help="Remove entries decided before (ISO 8601, UTC).")
def cut(target: str, store: str | None, tenant: str | None, before: str) -> None:
    """Retention: removes the tenant's entries decided before a date, from the start of its
    chain, recording where it was cut so that the rest stays verifiable."""
    moment = _moment(before, "--before")
    assert moment is not None

    async def action(app: App) -> int:
        return await app.cut_decisions(moment, tenant_id=tenant)

    count = with_app(target, store, action)
    click.echo(f"{count} entries removed; the chain's cut is recorded")
