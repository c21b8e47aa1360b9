"""``agboss``: the command line over an application's store.

    agboss migrate --store URL
    agboss pauses list --app module:Application [--tenant T] [--owner O] [--channel C]
                       [--older-than 4h] [--limit 50] [--json]
    agboss pauses show PAUSE_ID --app module:Application [--tenant T] [--json]
    agboss resume PAUSE_ID --app module:Application (--approve | --reject | --reply TEXT)
                  [--reason TEXT] (--owner O | --answered-by WHO) [--tenant T] [--json]
    agboss cancel THREAD_ID --app module:Application [--tenant T] [--owner O]
    agboss recover --app module:Application

The store comes from ``--store`` or ``AGBOSS_STORE`` (the embedded SQLite file by default).
``--app`` names the ``@application`` class, or a function that returns an `App` (to give it
its model providers). ``resume`` records the answer and leaves the tree to the application's
instances (their sweep moves it within 30 seconds); ``recover`` moves trees itself, so it needs
the application's models: ``AGBOSS_MODEL_BASE_URL`` or an ``--app`` function.

Needs the ``cli`` extra: ``pip install 'agboss[cli]'``.
"""

from agboss.cli.main import main

__all__ = ["main"]
