"""What every ``agboss`` command stands on: the options they share, opening the application
on its store, running a command's work and saying its errors as a user fixes them."""

from __future__ import annotations

import asyncio
import dataclasses
import importlib
import inspect
import os
import re
import sys
from collections.abc import Awaitable, Callable
from datetime import datetime, timedelta
from typing import Any, TypeVar

import click
from rich.console import Console
from rich.markup import escape

from agboss.app import App
from agboss.components import ApplicationSpec, spec_of
from agboss.errors import AgbossError, StoreUnavailableError
from agboss.models import ModelProvider, RefusingProvider
from agboss.store import store_from
from agboss.store.sqlite import SqliteStore

__all__ = [
    "APP",
    "JSON",
    "STORE",
    "TENANT",
    "check_exists",
    "duration",
    "load_target",
    "out",
    "record_json",
    "run",
    "with_app",
]

T = TypeVar("T")

STORE = click.option(
    "--store",
    envvar="AGBOSS_STORE",
    default=None,
    help="The store URL (sqlite:///file.db, postgresql://…); AGBOSS_STORE, else the default.",
)
APP = click.option(
    "--app",
    "target",
    envvar="AGBOSS_APP",
    required=True,
    help="module:Application (an @application class) or module:function returning an App.",
)
TENANT = click.option("--tenant", default=None, help="The tenant; the default tenant if left out.")
JSON = click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")


_NO_MODELS = RefusingProvider(
    "the agboss command line has no model providers for this command",
    hint="set AGBOSS_MODEL_BASE_URL, or pass --app module:function returning an App",
)
"""What commands that only read or record an answer assemble the application with: every
model name served, every call refused."""


_UNBOUNDED = 1_000_000
"""The width given to output that goes to a file or a pipe: every column whole."""


def out() -> Console:
    """Standard output: a terminal's width on a terminal; off one (a pipe, a file, a log),
    no width at all, so that a table cuts or drops no column."""
    return Console() if sys.stdout.isatty() else Console(width=_UNBOUNDED)


def load_target(target: str) -> object:
    """What ``--app module:attribute`` names: an ``@application`` class or a function."""
    module_name, _, attribute = target.partition(":")
    if not module_name or not attribute:
        raise click.BadParameter(f"{target!r} is not module:attribute", param_hint="--app")
    sys.path.insert(0, os.getcwd())  # the application's modules, as `python -m` finds them
    try:
        module = importlib.import_module(module_name)
    except ImportError as error:
        raise click.BadParameter(
            f"cannot import {module_name}: {error}", param_hint="--app"
        ) from error
    found = getattr(module, attribute, None)
    if found is None:
        raise click.BadParameter(f"{module_name} has no {attribute}", param_hint="--app")
    return found


def _provider_from_env() -> ModelProvider | None:
    """The provider ``AGBOSS_MODEL_BASE_URL`` configures, if it is set."""
    if not os.environ.get("AGBOSS_MODEL_BASE_URL"):
        return None
    try:
        from agboss.models.openai import OpenAIProvider
    except ImportError as missing:
        raise click.UsageError(
            "AGBOSS_MODEL_BASE_URL is set, but the openai SDK is not installed: "
            "pip install 'agboss[openai]'"
        ) from missing
    return OpenAIProvider.from_env()


async def _open(
    target: str, store: str | None, *, needs_models: bool, reads_only: bool = False
) -> App:
    found = load_target(target)
    if isinstance(found, type) and spec_of(found, ApplicationSpec) is not None:
        if reads_only:
            check_exists(store)
        real = _provider_from_env()
        if real is None and needs_models:
            raise click.UsageError(
                "this command runs the application's passes, which call its models: set "
                "AGBOSS_MODEL_BASE_URL, or pass --app module:function returning an App"
            )
        providers: list[ModelProvider] = [real] if real is not None else [_NO_MODELS]
        # A command moves only what it is asked to (`recover` calls app.recover itself): no
        # sweep in the background, no tree another instance says is due.
        return await App.create(found, store=store, providers=providers, recovers=False)
    if callable(found):
        made = found()
        if inspect.isawaitable(made):
            made = await made
        if isinstance(made, App):
            return made
    raise click.BadParameter(
        f"{target} is neither an @application class nor a function returning an App",
        param_hint="--app",
    )


def check_exists(store: str | None) -> None:
    """A command that only reads never makes a store: a SQLite file that is not there (a
    mistyped URL) is an error, not an empty store made on the way.

    Raises:
        StoreUnavailableError: The SQLite file does not exist.
    """
    made = store_from(store)
    if isinstance(made, SqliteStore) and not made.path.exists():
        raise StoreUnavailableError(
            f"there is no SQLite store at {made.path}: a command that only reads makes none",
            hint="check --store (or AGBOSS_STORE); `agboss migrate --store …` makes a new one",
        )


_FLAGS = (
    ("app.standing() (or `agboss standing list`)", "`agboss standing list`"),
    ("page through more with after=page.next", "list fewer at a time with --limit (1 to 500)"),
    ("owner_id=", "--owner "),
    ("answered_by=", "--answered-by "),
    ("tenant_id=", "--tenant "),
    ("reply=", "--reply "),
    ("decision=", "--approve / --reject "),
)
"""The Python arguments hints name, as this command's flags."""


def _as_flags(hint: str) -> str:
    for argument, flag in _FLAGS:
        hint = hint.replace(argument, flag)
    return hint


def run(work: Callable[[], Awaitable[T]]) -> T:
    try:
        return asyncio.run(work())  # type: ignore[arg-type]
    except AgbossError as error:
        Console(stderr=True).print(f"[red]{error.code}[/red] {escape(error.message)}")
        if error.hint:
            Console(stderr=True).print(f"  hint: {escape(_as_flags(error.hint))}")
        raise SystemExit(1) from None


def with_app(
    target: str,
    store: str | None,
    action: Callable[[App], Awaitable[T]],
    *,
    models: bool = False,
    reads_only: bool = False,
) -> T:
    async def work() -> T:
        app = await _open(target, store, needs_models=models, reads_only=reads_only)
        async with app:
            return await action(app)

    return run(work)


_DURATION = re.compile(r"^([0-9]{1,9})([smhd])$")
_LONGEST = timedelta(days=100 * 365)
"""A duration past this reaches before any pause or after any deadline: refused as a typo."""


def duration(text: str | None) -> timedelta | None:
    """A duration option (``30m``, ``4h``, ``2d``).

    Raises:
        click.BadParameter: It is not one, or longer than a hundred years (a usage error,
            never a traceback).
    """
    if text is None:
        return None
    found = _DURATION.match(text.strip())
    if found is None:
        raise click.BadParameter(f"{text[:40]!r} is not a duration like 30m, 4h or 2d")
    amount, unit = int(found.group(1)), found.group(2)
    duration = timedelta(
        **{{"s": "seconds", "m": "minutes", "h": "hours", "d": "days"}[unit]: amount}
    )
    if duration > _LONGEST:
        raise click.BadParameter(f"{text!r} is longer than a hundred years")
    return duration


def record_json(record: Any) -> dict[str, Any]:
    """A record dataclass (a standing decision, a delegation) as ``--json`` prints it: its
    fields, moments in ISO 8601."""
    return {
        name: value.isoformat() if isinstance(value, datetime) else value
        for name, value in dataclasses.asdict(record).items()
    }
