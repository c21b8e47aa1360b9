"""How a step that failed is tried again (``retry_policy=`` on ``@application``, ``@agent`` and
``@tool``): the value the decorators take; the engine's step machine applies it
(`agboss.engine.steps`).

A model call is retried by default on what a later attempt may fix — a timeout, a connection
that failed, a provider's 408 / 409 / 429 (after its ``Retry-After``) or 5xx; a tool only when
it declares a policy, on the exception types its ``retry_on`` names. Temporal's names, where
they fit.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta

from agboss.errors import ConfigurationError

__all__ = ["DEFAULT_MODEL_RETRY", "RetryPolicy"]


def _refuse(what: str, hint: str) -> ConfigurationError:
    return ConfigurationError(f"RetryPolicy({what})", hint=hint)


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """How many times a failed step is attempted, and how long it waits in between.

    The wait before attempt ``n + 1`` is ``initial_interval * backoff ** (n - 1)``, at most
    ``max_interval`` (by default a hundred times ``initial_interval``, as temporal's) — or
    longer, when a model provider asked for longer (``Retry-After``). A wait
    shorter than a third of the lease sleeps in the pass (the lease kept); a longer one rests the
    tree (`ExecutionStatus.WAITING`, no lease held) until it is due.

    Attributes:
        max_attempts: Attempts in all, the first included (1: none again).
        initial_interval: The wait after the first failed attempt.
        backoff: What each wait is multiplied by for the next (1.0: always the same).
        max_interval: The longest wait the backoff reaches (``None``: a hundred times
            ``initial_interval``).
        retry_on: Exception types that are tried again (a raised exception matches by class).
            A tool's policy must name them; a model call's adds them to the transient errors
            it is retried on anyway.
    """

    max_attempts: int = 3
    initial_interval: timedelta = timedelta(seconds=1)
    backoff: float = 2.0
    max_interval: timedelta | None = None
    retry_on: tuple[type[Exception], ...] = ()

    def __post_init__(self) -> None:
        attempts = self.max_attempts
        if not isinstance(attempts, int) or isinstance(attempts, bool) or attempts < 1:
            raise _refuse(
                f"max_attempts={attempts!r})",
                "give the attempts in all as a whole number of 1 or more (1: no retry)",
            )
        for name in ("initial_interval", "max_interval"):
            value = getattr(self, name)
            if value is None and name == "max_interval":
                continue
            if not isinstance(value, timedelta) or value < timedelta(0):
                raise _refuse(f"{name}={value!r})", f"give {name}=timedelta(seconds=...)")
        if self.max_interval is not None and self.max_interval < self.initial_interval:
            raise _refuse(
                f"max_interval={self.max_interval!r})",
                "max_interval is the longest wait: give it at least initial_interval",
            )
        backoff = self.backoff
        if not isinstance(backoff, int | float) or isinstance(backoff, bool) or backoff < 1:
            raise _refuse(f"backoff={backoff!r})", "give backoff=1.0 or more (2.0 doubles)")
        retry_on = self.retry_on
        if isinstance(retry_on, type):
            retry_on = (retry_on,)
        if not isinstance(retry_on, Sequence) or not all(
            isinstance(kind, type) and issubclass(kind, Exception) for kind in retry_on
        ):
            raise _refuse(
                f"retry_on={self.retry_on!r})",
                "name exception classes: retry_on=(TimeoutError, PaymentGatewayBusy)",
            )
        object.__setattr__(self, "retry_on", tuple(retry_on))

    @classmethod
    def none(cls) -> RetryPolicy:
        """One attempt: a failure fails the step at once (what a tool has by default)."""
        return cls(max_attempts=1)

    def interval(self, attempt: int, asked: timedelta | None = None) -> timedelta:
        """The wait after failed attempt ``attempt`` (1-based): the backoff's, or what the
        provider ``asked`` when that is longer."""
        longest = self.max_interval or self.initial_interval * 100
        wait = min(self.initial_interval * (self.backoff ** (attempt - 1)), longest)
        return wait if asked is None else max(wait, asked)

    def retries(self, error: BaseException) -> bool:
        """Whether ``error`` is one of the types this policy names."""
        return isinstance(error, self.retry_on)


DEFAULT_MODEL_RETRY = RetryPolicy(
    max_attempts=4,
    initial_interval=timedelta(seconds=1),
    backoff=2.0,
    max_interval=timedelta(minutes=1),
)
"""A model call's policy unless the agent or the application declares one: four attempts, one,
two and four seconds apart (or as long as the provider asks)."""
