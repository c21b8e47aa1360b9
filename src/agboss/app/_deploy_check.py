"""The deploy check (issue 55, point 5): before traffic moves to a build, every waiting tree
it could not continue — its version neither run nor continued, its own version defined
otherwise, or a version it continues whose trees wait on what it lacks — listed with why.
`check_deploy` for a pipeline, ``agboss deploy-check`` from a terminal (docs/deploying.md)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from agboss.app._app import App
from agboss.app._inspecting import inspecting
from agboss.assembly import Provide
from agboss.models import RefusingProvider
from agboss.records import DeployCheck
from agboss.store.protocol import Store

__all__ = ["check_deploy"]


async def check_deploy(
    application: type[Any],
    *,
    store: str | Path | Store | None = None,
    channels: Mapping[type[Any], type[Any]] | None = None,
    dependencies: Sequence[Provide] = (),
    limit: int = 1000,
) -> DeployCheck:
    """Every waiting tree in ``store`` that this build of ``application`` could not continue,
    and why: what a deploy would strand, known before it happens.

    The build is opened to be looked at: it moves nothing and says nothing in the store. Its
    models are never called, so none is needed.

    Args:
        application: The next build's ``@application`` class.
        store: The production store, as `App.create` takes it. Its schema must be this
            agboss's (``agboss migrate`` first: safe with the old build running).
        channels: As `App.create` takes them.
        dependencies: As `App.create` takes them.
        limit: The most trees to list, 1 to 10,000 (``check.complete`` says if all were).

    Returns:
        The check: ``check.passed`` when nothing would be stranded.

    Raises:
        AssemblyError: The application itself is broken (as `App.create` says).
        StoreError: The store cannot be opened, or its schema is older.
    """
    with inspecting():
        app = await App.create(
            application,
            store=store,
            providers=[RefusingProvider("a deploy check calls no model")],
            migrate=False,
            channels=channels,
            dependencies=dependencies,
        )
    async with app:
        return await app.deploy_check(limit=limit)
