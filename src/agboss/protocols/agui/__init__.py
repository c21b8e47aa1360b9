"""``agboss.protocols.agui``: a workflow served to AG-UI clients, over server-sent events.

    from agboss.protocols.agui import agui_router

    api.mount("/agent", agui_router(app, ChatWorkflow, authenticate=authenticate))

Needs the ``agui`` extra: ``pip install 'agboss[agui]'``.
"""

try:
    import ag_ui  # noqa: F401 - only to say which extra is missing
    import starlette  # noqa: F401
except ModuleNotFoundError as missing:
    raise ModuleNotFoundError(
        "agboss.protocols.agui needs the agui extra (ag-ui-protocol, starlette): "
        "pip install 'agboss[agui]'",
        name=missing.name,
    ) from missing

from agboss.protocols.agui._events import Translation, interrupt_of
from agboss.protocols.agui._router import StartOf, agui_router

__all__ = ["StartOf", "Translation", "agui_router", "interrupt_of"]
