"""``agboss.protocols.a2a``: a workflow served as an A2A agent — its card, its tasks, a pause
as the task's ``input-required`` state.

    from agboss.protocols.a2a import a2a_app

    api.mount("/agents/refunds", a2a_app(app, RefundWorkflow, authenticate=authenticate,
                                          url="https://example.com/agents/refunds/"))

Needs the ``a2a`` extra: ``pip install 'agboss[a2a]'``.
"""

try:
    import a2a  # noqa: F401 - only to say which extra is missing
    import starlette  # noqa: F401
except ModuleNotFoundError as missing:
    raise ModuleNotFoundError(
        "agboss.protocols.a2a needs the a2a extra (a2a-sdk[http-server]): "
        "pip install 'agboss[a2a]'",
        name=missing.name,
    ) from missing

from agboss.protocols.a2a._server import INPUT_EXTENSION, a2a_app, agent_card

__all__ = ["INPUT_EXTENSION", "a2a_app", "agent_card"]
