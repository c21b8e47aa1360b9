"""``agboss``: the command line over an application's store.

    agboss migrate --store URL
    agboss pauses list --app module:Application [--tenant T] [--owner O] [--voter V] [--channel C]
                       [--older-than 4h] [--expiring-within 4h]
                       [--limit 50] [--json]
    agboss pauses show PAUSE_ID --app module:Application [--tenant T] [--json]
    agboss resume PAUSE_ID --app module:Application (--approve | --reject | --reply TEXT)
                  [--reason TEXT] (--owner O | --answered-by WHO) [--tenant T] [--json]
    agboss cancel THREAD_ID --app module:Application [--tenant T] [--owner O]
    agboss recover --app module:Application

The store comes from ``--store`` or ``AGBOSS_STORE`` (the embedded SQLite file by default).
``--app`` names the ``@application`` class, or a function that returns an `App` (to give it
its model providers). ``resume`` records the answer and leaves the tree to the application's
instances (one that hears of it moves it at once, else their sweep within 30 seconds); the
command line itself moves no tree it did not begin. ``recover`` moves trees itself, so it needs
the application's models: ``AGBOSS_MODEL_BASE_URL`` or an ``--app`` function.

Needs the ``cli`` extra: ``pip install 'agboss[cli]'``.
"""

import sys
from collections.abc import Callable

__all__ = ["main"]


def _missing(error: ModuleNotFoundError) -> Callable[[], None]:
    def main() -> None:
        sys.exit(
            f"agboss: the command line needs the cli extra ({error.name} is missing): "
            "pip install 'agboss[cli]'"
        )

    return main


try:
    from agboss.cli._main import main
except ModuleNotFoundError as missing:  # the console script exists without its extra
    if missing.name not in ("click", "rich"):
        raise
    main = _missing(missing)
