"""`App.create`'s arguments, checked before the application is assembled: each a
`ConfigurationError` that says what to pass."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from datetime import timedelta

from agboss.assembly._container import Provide
from agboss.assembly._definitions import Assembly
from agboss.clock import Clock
from agboss.components import DevelopmentChannel
from agboss.errors import ConfigurationError
from agboss.models import MODEL_PROVIDER_MEMBERS

__all__ = [
    "PRODUCTION",
    "check_arguments",
    "check_dependencies",
    "check_environment",
    "environment_of",
]


def check_arguments(
    providers: object,
    clock: object,
    migrate: object,
    recovers: object,
    channels: object,
    lease_ttl: object,
    resume_timeout: object,
) -> None:
    """Raises a `ConfigurationError` for the first argument of `App.create` that is wrong."""
    _check_setup(providers, clock, migrate, recovers)
    _check_choices(channels)
    for name, value in (("lease_ttl", lease_ttl), ("resume_timeout", resume_timeout)):
        if not isinstance(value, timedelta) or value <= timedelta(0):
            raise ConfigurationError(
                f"App.create({name}={value!r}) must be a positive timedelta",
                hint=f"pass {name}=timedelta(seconds=...), or leave it out for the default",
            )


_PROVIDERS_HINT = (
    "pass providers=[OpenAIProvider(...)] (agboss.models.openai) or [FunctionProvider(...)], "
    "or a class "
    "of yours with every member of ModelProvider: serves, chat_model(name), "
    "decision_model(name) and aclose()"
)


def _check_providers(providers: object) -> None:
    if isinstance(providers, str | bytes) or not isinstance(providers, Iterable):
        raise ConfigurationError(
            f"App.create(providers={providers!r}) must be a list of model providers",
            hint=_PROVIDERS_HINT,
        )
    for provider in providers:
        missing = [name for name in MODEL_PROVIDER_MEMBERS if not hasattr(provider, name)]
        if missing:
            raise ConfigurationError(
                f"App.create(providers=[...]): {type(provider).__name__} is not a model "
                f"provider: it has no {', '.join(missing)}",
                hint=_PROVIDERS_HINT,
            )


def _check_setup(providers: object, clock: object, migrate: object, recovers: object) -> None:
    _check_providers(providers)
    if clock is not None and not isinstance(clock, Clock):
        raise ConfigurationError(
            f"App.create(clock={clock!r}) is not a Clock",
            hint="leave clock out for the system clock; tests take the test kit's clock",
        )
    if not isinstance(migrate, bool):
        raise ConfigurationError(
            f"App.create(migrate={migrate!r}) must be True or False",
            hint="pass migrate=False to refuse an old schema instead of migrating it",
        )
    if not isinstance(recovers, bool):
        raise ConfigurationError(
            f"App.create(recovers={recovers!r}) must be True or False",
            hint="pass recovers=False in a process without the application's models",
        )


def check_dependencies(dependencies: object) -> None:
    """Raises a `ConfigurationError` unless ``dependencies`` lists `provide(...)` registrations."""
    if isinstance(dependencies, str | bytes) or not (
        isinstance(dependencies, Iterable)
        and all(isinstance(item, Provide) for item in dependencies)
    ):
        raise ConfigurationError(
            f"App.create(dependencies={dependencies!r}) must list provide(...) registrations",
            hint="pass dependencies=[provide(PaymentGateway, instance=FakeGateway())]: each "
            "replaces the application's registration of its type in this instance",
        )


def _check_choices(channels: object) -> None:
    if channels is None:
        return
    if not isinstance(channels, Mapping) or not all(
        isinstance(role, type) and isinstance(picked, type) for role, picked in channels.items()
    ):
        raise ConfigurationError(
            f"App.create(channels={channels!r}) must map channel roles to channel classes",
            hint="pass channels={RefundApprovalChannel: SlackRefundApprovalChannel}: the role a "
            "tool names, and the @channel class that answers it in this instance",
        )


PRODUCTION = "production"
"""The environment the development channel refuses to run in."""


def environment_of(environment: object) -> str | None:
    """The environment an instance runs in: ``environment=``, else ``AGBOSS_ENVIRONMENT``,
    else unsaid (``None``).

    Raises:
        ConfigurationError: ``environment`` is not a string.
    """
    if environment is None:
        return os.environ.get("AGBOSS_ENVIRONMENT") or None
    if not isinstance(environment, str):
        raise ConfigurationError(
            f"App.create(environment={environment!r}) must be a string",
            hint='pass environment="production" (or "staging", "development"), or leave it out '
            "for AGBOSS_ENVIRONMENT",
        )
    return environment


def check_environment(assembly: Assembly, environment: str | None) -> None:
    """Refuses the development channel where the instance runs in production: it shows each
    question's id, which is the right to answer it.

    Raises:
        ConfigurationError: A role or a tool of the application is answered by a
            `DevelopmentChannel` in production.
    """
    if environment != PRODUCTION:
        return
    showing = sorted(
        {
            channel.name
            for tool_channel in assembly.tool_channels.values()
            for channel in (tool_channel, *tool_channel.escalations, *tool_channel.handoffs)
            if issubclass(channel.implementation, DevelopmentChannel)
        }
    )
    if showing:
        raise ConfigurationError(
            f"the development channel answers {', '.join(showing)}, and this instance runs in "
            "production: it would show each question's id, the right to answer it",
            hint="choose the role's real channel for production (App.create(channels=...)); "
            "keep DevelopmentChannel to development",
        )
