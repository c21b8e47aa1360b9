"""``agboss deploy-check``: before traffic moves to a build, every waiting tree it could not
continue, and why; exits 1 if there is any (docs/deploying.md)."""

from __future__ import annotations

import dataclasses
import inspect
import json
from collections import Counter
from typing import Any

import click
from rich.markup import escape
from rich.table import Table

from agboss.app import App, check_deploy, inspecting
from agboss.cli._common import APP, JSON, STORE, load_target, out, run
from agboss.cli._executions import stranded_json
from agboss.components import ApplicationSpec, spec_of
from agboss.records import DeployCheck

__all__ = ["deploy_check"]


async def _checked(target: str, store: str | None, limit: int) -> DeployCheck:
    found = load_target(target)
    if isinstance(found, type) and spec_of(found, ApplicationSpec) is not None:
        return await check_deploy(found, store=store, limit=limit)
    if callable(found):
        with inspecting():  # the function's App.create opens the build to be looked at
            made = found()
            if inspect.isawaitable(made):
                made = await made
        if isinstance(made, App):
            async with made:
                return await made.deploy_check(limit=limit)
    raise click.BadParameter(
        f"{target} is neither an @application class nor a function returning an App",
        param_hint="--app",
    )


@click.command("deploy-check")
@APP
@STORE
@click.option(
    "--limit", default=1000, show_default=True, help="How many trees to list (1 to 10,000)."
)
@JSON
def deploy_check(target: str, store: str | None, limit: int, as_json: bool) -> None:
    """Lists every waiting tree the build --app names could not continue, and why; exits 1
    if there is any. Run it before traffic moves: the build moves nothing."""
    checked = run(lambda: _checked(target, store, limit))
    if as_json:
        click.echo(json.dumps(_json(checked)))
    else:
        _print(checked)
    if not checked.passed:
        raise SystemExit(1)


def _json(checked: DeployCheck) -> dict[str, Any]:
    return {
        "application": checked.application,
        "passed": checked.passed,
        "complete": checked.complete,
        "versions": [dataclasses.asdict(each) for each in checked.versions],
        "trees": [stranded_json(tree) for tree in checked.trees],
    }


def _print(checked: DeployCheck) -> None:
    if checked.passed:
        out().print(f"{escape(checked.application)}: this build continues every waiting tree")
        return
    counted = Counter((tree.workflow, tree.workflow_version) for tree in checked.trees)
    versions = Table(
        title=f"{escape(checked.application)}: {len(checked.trees)}"
        f"{'' if checked.complete else '+'} waiting tree(s) this build cannot continue"
    )
    for column in ("workflow", "version", "trees", "why", "what to do"):
        versions.add_column(column, overflow="fold")
    for each in checked.versions:
        versions.add_row(
            escape(each.workflow),
            escape(each.version),
            str(counted[(each.workflow, each.version)]),
            each.rule,
            escape(each.message),
        )
    trees = Table(title="the trees")
    trees.add_column("execution id", min_width=35, overflow="fold")
    for column in ("tenant", "workflow", "version", "status", "began"):
        trees.add_column(column, overflow="fold")
    for tree in checked.trees:
        trees.add_row(
            escape(tree.execution_id),
            escape(tree.tenant_id),
            escape(tree.workflow),
            escape(tree.workflow_version),
            tree.status.value,
            tree.began_at.strftime("%Y-%m-%d %H:%M"),
        )
    out().print(versions)
    out().print(trees)
