"""A router's application: the `App` itself, or the host's function that returns it once it
is open (read once per request)."""

from __future__ import annotations

from collections.abc import Callable

from agboss.app import App
from agboss.errors import ConfigurationError
from agboss.http._problems import AppNotOpenError

__all__ = ["app_function", "opened_app"]


def app_function(app: App | Callable[[], App | None], router: str) -> Callable[[], App | None]:
    """A router's application as a function of nothing: the `App` itself, or the host's
    function that returns it (``None`` until it is open).

    Raises:
        ConfigurationError: ``app`` is neither.
    """
    if isinstance(app, App):
        return lambda: app
    if callable(app):
        return app
    raise ConfigurationError(
        f"{router} takes an App, not {type(app).__name__}",
        hint="pass the App that App.create returned, or a function that returns it",
    )


def opened_app(app_of: Callable[[], App | None], router: str) -> App:
    """The application as the router's host holds it now (read once per request).

    Raises:
        AppNotOpenError: It is not open (yet, or any more).
        ConfigurationError: The host's function returned something else than an `App`.
    """
    found = app_of()
    if found is None:
        raise AppNotOpenError()
    if not isinstance(found, App):
        raise ConfigurationError(
            f"{router}'s app function returned {type(found).__name__}, not an App",
            hint="return the App that App.create returned, or None until it is open",
        )
    return found
