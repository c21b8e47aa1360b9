"""`test_with`: an application on a temporary store and a test clock, with scripted models."""

from __future__ import annotations

import tempfile
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from agboss.app import App
from agboss.assembly import Provide
from agboss.components import AgentSpec, ComponentSpec, ReplyInterpreterSpec, spec_of
from agboss.enums import DecidedBy
from agboss.errors import TestSetupError
from agboss.models import ModelProvider
from agboss.store import store_from
from agboss.testing._clock import TestClock
from agboss.testing._llm import LlmScript, ScriptedProvider
from agboss.testing._mocks import ComponentMock

__all__ = ["TestEnv", "test_with"]


class TestEnv:
    """What `test_with` gives a test: the app instances, the clock, scripts and mocks.

    Attributes:
        app: The first instance.
        apps: Every instance; they share one store.
        clock: The test clock every instance runs on.
    """

    __test__ = False

    def __init__(
        self,
        application: type[Any],
        *,
        instances: int,
        store: str | Path,
        clock: TestClock,
        providers: Sequence[ModelProvider],
        decision_models: Sequence[str] = (),
        channels: Mapping[type[Any], type[Any]] | None = None,
        dependencies: Sequence[Provide] = (),
    ) -> None:
        self.application = application
        self._channels = channels
        self._dependencies = tuple(dependencies)
        self.clock = clock
        self._instances = instances
        self._store_path = store
        self._scripted = ScriptedProvider(decision_models=decision_models)
        self._providers = (*providers, self._scripted)
        self._mocks: dict[type[Any], ComponentMock] = {}
        self.apps: list[App] = []

    @property
    def app(self) -> App:
        """The first instance."""
        return self.apps[0]

    async def start(self) -> None:
        """Opens every instance (done by `test_with`)."""
        self.apps = [await self._open() for _ in range(self._instances)]

    async def _open(self) -> App:
        app = await App.create(
            self.application,
            store=store_from(self._store_path),
            providers=self._providers,
            clock=self.clock,
            channels=self._channels,
            dependencies=self._dependencies,
        )
        for component, mock in self._mocks.items():
            app.assembly.container.override(component, mock.wrap)
        return app

    async def close(self) -> None:
        """Closes every instance."""
        for app in self.apps:
            await app.close()

    async def restart(self) -> None:
        """Closes every instance and opens them again on the same store, as a restart would.

        Scripts and mocks stay.
        """
        await self.close()
        await self.start()

    def mock_llm(self, component: type[Any]) -> LlmScript:
        """The scripted model of an agent or a model reply interpreter.

        Raises:
            TestSetupError: The component calls no model (a code interpreter, or not one).
        """
        spec = spec_of(component)
        if isinstance(spec, ReplyInterpreterSpec) and spec.decided_by is DecidedBy.CODE:
            raise TestSetupError(
                f"mock_llm({spec.name}): a DecidedBy.CODE interpreter calls no model",
                hint=f"script it with env.mock_of({component.__qualname__}).interpret",
            )
        if not isinstance(spec, AgentSpec | ReplyInterpreterSpec):
            raise TestSetupError(
                f"mock_llm({getattr(component, '__qualname__', component)!r}): only an @agent "
                "or a DecidedBy.MODEL @reply_interpreter calls a model",
            )
        script = self._scripted.scripts.get(spec.name)
        if script is None:
            model = spec.model or ""
            script = self._scripted.scripts[spec.name] = LlmScript(
                spec.name, on_decision=lambda: self._scripted.serve_as_decision_model(model)
            )
        return script

    def mock_of(self, component: type[Any]) -> ComponentMock:
        """Replaces a component's instances with a recording mock that runs the real method.

        A channel role resolves to the application's implementation of it.

        Raises:
            TestSetupError: The component is not part of the application.
        """
        target = self._implementation(component)
        mock = self._mocks.get(target)
        if mock is None:
            mock = self._mocks[target] = ComponentMock(target)
            for app in self.apps:
                app.assembly.container.override(target, mock.wrap)
        return mock

    def _implementation(self, component: type[Any]) -> type[Any]:
        assembly = self.app.assembly
        for tool_channel in assembly.tool_channels.values():
            if tool_channel.named is component:
                return tool_channel.implementation
        spec: ComponentSpec | None = assembly.components.get(component)
        if spec is None:
            raise TestSetupError(
                f"mock_of({getattr(component, '__qualname__', component)!r}): it is not a "
                "component of this application",
                hint="mock a tool, channel or interpreter the application reaches",
            )
        return component


@asynccontextmanager
async def test_with(
    application: type[Any],
    *,
    instances: int = 1,
    store: str | Path | None = None,
    clock: TestClock | None = None,
    providers: Sequence[ModelProvider] = (),
    decision_models: Sequence[str] = (),
    channels: Mapping[type[Any], type[Any]] | None = None,
    dependencies: Sequence[Provide] = (),
) -> AsyncIterator[TestEnv]:
    """An application for a test: a temporary SQLite store, a test clock, scripted models.

    Args:
        application: The ``@application`` class.
        instances: How many `App` instances share the store.
        store: A SQLite file or store URL; a temporary file by default.
        clock: The test clock; a new one by default.
        providers: Real providers tried before the scripted one.
        decision_models: Glob patterns of the model names the scripted provider serves as
            decision models (scripted with `decide_with`).
        channels: The channel that answers a role, by role (`App.create`'s ``channels``):
            a test's own implementation swapped in for the application's.
        dependencies: `provide(...)` registrations replacing the application's of their type
            in every instance (`App.create`'s ``dependencies``): a test's fakes, or what it
            records.

    Yields:
        The `TestEnv`.
    """
    with tempfile.TemporaryDirectory(prefix="agboss-test-") as folder:
        env = TestEnv(
            application,
            instances=instances,
            store=store if store is not None else Path(folder) / "agboss.db",
            clock=clock or TestClock(),
            providers=providers,
            decision_models=decision_models,
            channels=channels,
            dependencies=dependencies,
        )
        await env.start()
        try:
            yield env
        finally:
            await env.close()


test_with.__test__ = False  # type: ignore[attr-defined]
