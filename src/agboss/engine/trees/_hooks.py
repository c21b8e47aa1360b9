"""The application's hooks: ``on_execution_pause`` and ``on_execution_resume``.

An ``@application`` class may define either (plain or ``async def``); its instance is made once
per `App` by the container, with its ``deps``. A hook that raises is logged
(``application.hook-failed``) and changes nothing: the execution's state is already durable.
"""

from __future__ import annotations

from typing import Any

from agboss.engine.instance import Runtime
from agboss.engine.trees._frame import maybe_await
from agboss.records import ExecutionPauseEvent, ExecutionResumeEvent

__all__ = ["ApplicationHooks"]


class ApplicationHooks:
    """Calls the application class's hooks, if it defines them."""

    def __init__(self, runtime: Runtime) -> None:
        self._runtime = runtime
        self._instance: Any = None

    def _application(self) -> Any:
        if self._instance is None:
            assembly = self._runtime.assembly
            self._instance = assembly.container.create(
                assembly.application, assembly.spec.deps, None
            )
        return self._instance

    async def _call(self, name: str, event: object) -> None:
        hook = getattr(self._runtime.assembly.application, name, None)
        if hook is None:
            return
        try:
            await maybe_await(getattr(self._application(), name)(event))
        except Exception:
            self._runtime.logger.exception(
                "application.hook-failed: %s raised",
                name,
                extra={"event": "application.hook-failed"},
            )

    async def on_pause(self, event: ExecutionPauseEvent) -> None:
        """The execution rests: nothing else can move until an answer comes."""
        await self._call("on_execution_pause", event)

    async def on_resume(self, event: ExecutionResumeEvent) -> None:
        """A pause's answer was recorded."""
        await self._call("on_execution_resume", event)
