"""`mock_of`: a component's instances replaced by a recording mock that runs the real method.

Every instance the container makes of the component is wrapped in a proxy whose methods are
shared `unittest.mock.MagicMock` objects: they record every call across every frame, and until
a test scripts them (``return_value``, ``side_effect``) they call the real instance's method.
"""

from __future__ import annotations

import contextvars
import inspect
from typing import Any
from unittest.mock import DEFAULT, MagicMock

__all__ = ["HANDLER_METHODS", "ComponentMock"]

HANDLER_METHODS = ("run", "send", "withdraw", "remind", "interpret")
"""The methods the framework calls on components: these are mocked."""

_current: contextvars.ContextVar[Any] = contextvars.ContextVar("agboss_mocked_instance")


def _scripted(mock: MagicMock) -> bool:
    # MagicMock keeps DEFAULT here until a test sets return_value; reading the public
    # attribute instead would create a child mock and hide the difference.
    return mock._mock_return_value is not DEFAULT


class ComponentMock:
    """The mock of one component: one `MagicMock` per handler method, shared by its instances.

    Attributes are the methods: ``env.mock_of(Channel).send.call_args``,
    ``env.mock_of(Tool).run.return_value = ...``.
    """

    def __init__(self, component: type[Any]) -> None:
        self.component = component
        self._methods: dict[str, MagicMock] = {}
        for name in HANDLER_METHODS:
            if callable(getattr(component, name, None)):
                self._methods[name] = self._method_mock(name)

    def _method_mock(self, name: str) -> MagicMock:
        mock = MagicMock(name=f"{self.component.__qualname__}.{name}")

        def run_real(*args: Any, **kwargs: Any) -> Any:
            if _scripted(mock):
                return DEFAULT
            instance = _current.get(None)
            if instance is None:
                return DEFAULT
            return getattr(instance, name)(*args, **kwargs)

        mock.side_effect = run_real
        return mock

    def __getattr__(self, name: str) -> MagicMock:
        methods = self.__dict__.get("_methods", {})
        if name in methods:
            method: MagicMock = methods[name]
            return method
        raise AttributeError(f"{self.component.__qualname__} has no mocked method {name!r}")

    def wrap(self, instance: Any) -> Any:
        """The proxy the framework gets instead of ``instance``."""
        return _Proxy(self._methods, instance)

    def reset(self) -> None:
        """Forgets the recorded calls and any scripting."""
        for name in self._methods:
            self._methods[name] = self._method_mock(name)


class _Proxy:
    def __init__(self, methods: dict[str, MagicMock], instance: Any) -> None:
        self._methods = methods
        self._instance = instance

    def __getattr__(self, name: str) -> Any:
        mock = self._methods.get(name)
        if mock is None:
            return getattr(self._instance, name)
        instance = self._instance

        def call(*args: Any, **kwargs: Any) -> Any:
            token = _current.set(instance)
            try:
                return mock(*args, **kwargs)
            finally:
                _current.reset(token)

        if inspect.iscoroutinefunction(getattr(instance, name)):

            async def call_async(*args: Any, **kwargs: Any) -> Any:
                result = call(*args, **kwargs)
                return await result if inspect.isawaitable(result) else result

            return call_async
        return call
