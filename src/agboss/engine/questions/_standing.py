"""Standing decisions: a tool's calls approved ahead of time (`App.allow`), revoked
(`App.revoke`), listed (`App.standing`).

A decision names a tool, or a channel role (every tool that asks it), and a scope: one
thread, one owner's threads, or the tenant. The engine reads the ones that stand before it
sends a question (`agboss.engine.questions`): a call one covers is decided at once, and its
audit entry names the decision as the responder.
"""

from __future__ import annotations

import logging
from datetime import datetime
from typing import Any

from agboss.components import ChannelRoleSpec, ToolSpec
from agboss.context import DEFAULT_TENANT_ID
from agboss.engine.instance import Runtime
from agboss.enums import StandingScope
from agboss.errors import DtoValidationError, UnknownStandingDecisionError
from agboss.inputs import InputLimits, check_id
from agboss.observability import log_event
from agboss.records import StandingDecision, new_decision_id
from agboss.store.writes import GrantStanding, RevokeStanding

__all__ = ["Grant", "check_reason", "check_until", "grant", "list_standing", "revoke"]


class Grant:
    """What `App.allow` was given, checked: what it covers and where."""

    def __init__(
        self,
        runtime: Runtime,
        target: object,
        *,
        scope: object,
        granted_by: object,
        thread_id: object,
        owner_id: object,
        tenant_id: object,
        until: object,
        reason: object,
    ) -> None:
        limits = runtime.assembly.spec.limits
        self.tool, self.role = _target(runtime, target)
        self.scope = _scope(scope)
        self.thread_id, self.owner_id = _where(self.scope, thread_id, owner_id, limits)
        self.tenant_id = (
            DEFAULT_TENANT_ID if tenant_id is None else check_id(tenant_id, "tenant_id", limits)
        )
        self.granted_by = check_id(granted_by, "granted_by", limits)
        self.until = check_until(until, runtime.clock.now())
        self.reason = None if reason is None else check_reason(reason, limits, _WHY_STANDING)


async def grant(runtime: Runtime, given: Grant) -> StandingDecision:
    """Stores a standing decision; see `App.allow`."""
    decision = StandingDecision(
        decision_id=new_decision_id(),
        tenant_id=given.tenant_id,
        tool=given.tool,
        role=given.role,
        scope=given.scope,
        thread_id=given.thread_id,
        owner_id=given.owner_id,
        granted_by=given.granted_by,
        reason=given.reason,
        granted_at=runtime.clock.now(),
        until=given.until,
    )
    await runtime.store.write([GrantStanding(decision)])
    log_event(
        runtime.logger,
        logging.INFO,
        "standing.granted",
        "%(decision_id)s approves %(target)s in %(scope)s, granted by %(granted_by)s",
        decision_id=decision.decision_id,
        tenant_id=decision.tenant_id,
        target=decision.tool or decision.role,
        scope=decision.scope.value,
        granted_by=decision.granted_by,
    )
    return decision


async def revoke(
    runtime: Runtime,
    decision_id: str,
    *,
    revoked_by: str,
    tenant_id: str | None,
    owner_id: str | None,
) -> StandingDecision:
    """Revokes a standing decision; see `App.revoke`."""
    tenant = tenant_id or DEFAULT_TENANT_ID
    if owner_id is not None:  # a person revoking their own: another's is not shown to exist
        found = await runtime.store.standing.find(tenant, decision_id)
        if found is None or not await _theirs(runtime, found, owner_id):
            raise UnknownStandingDecisionError()
    results = await runtime.store.write(
        [write := RevokeStanding(tenant, decision_id, revoked_by, runtime.clock.now())]
    )
    revoked = results[write]
    if revoked is None:  # unknown, or revoked before: a repeat is not an error
        found = await runtime.store.standing.find(tenant, decision_id)
        if found is None:
            raise UnknownStandingDecisionError()
        return found
    log_event(
        runtime.logger,
        logging.INFO,
        "standing.revoked",
        "%(decision_id)s revoked by %(revoked_by)s",
        decision_id=decision_id,
        tenant_id=tenant,
        revoked_by=revoked_by,
    )
    return revoked


async def list_standing(
    runtime: Runtime, *, tenant_id: str | None, owner_id: str | None, revoked: bool
) -> list[StandingDecision]:
    """The tenant's standing decisions; see `App.standing`."""
    found = await runtime.store.standing.list(tenant_id or DEFAULT_TENANT_ID, revoked=revoked)
    if owner_id is None:
        return found
    return [decision for decision in found if await _theirs(runtime, decision, owner_id)]


async def _theirs(runtime: Runtime, decision: StandingDecision, owner_id: str) -> bool:
    """Whether a decision is an owner's to see and revoke: they granted it, or it covers only
    their own threads (their owner's scope, or a thread of theirs)."""
    if decision.granted_by == owner_id:
        return True
    if decision.scope is StandingScope.OWNER:
        return decision.owner_id == owner_id
    if decision.scope is StandingScope.THREAD and decision.thread_id is not None:
        thread = await runtime.store.executions.find_thread(decision.tenant_id, decision.thread_id)
        return thread is not None and thread.owner_id == owner_id
    return False


def _target(runtime: Runtime, target: object) -> tuple[str | None, str | None]:
    """The tool, or the role, a decision covers, by name: one of the application's."""
    assembly = runtime.assembly
    spec = assembly.components.get(target) if isinstance(target, type) else None
    shown = getattr(target, "__qualname__", repr(target))
    if isinstance(spec, ToolSpec) and target in assembly.tool_channels:
        _not_a_quorum(assembly.tool_channels[target].role, shown)
        return spec.name, None
    asked = {channel.named for channel in assembly.tool_channels.values()}
    if isinstance(spec, ChannelRoleSpec) and target in asked:
        _not_a_quorum(spec, shown)
        return None, spec.name
    raise DtoValidationError(
        f"app.allow({shown}): it is not a tool that asks a channel, nor a channel role a tool "
        "of this application asks",
        hint="pass the @tool class whose calls need an approval (channel=...), or the "
        "@channel_role class its tools name",
    )


def _not_a_quorum(role: ChannelRoleSpec | None, shown: str) -> None:
    """A role whose questions take several approvals is not decided ahead of time by one."""
    if role is not None and role.quorum is not None:
        raise DtoValidationError(
            f"app.allow({shown}): the questions of {role.name} take several approvals "
            "(approvals=), which one standing decision does not stand in for",
            hint="let its voters vote; a standing decision approves calls one person may",
        )


def _scope(scope: object) -> StandingScope:
    if isinstance(scope, StandingScope):
        return scope
    raise DtoValidationError(
        f"scope must be a StandingScope, not {scope!r}",
        hint="pass scope=StandingScope.THREAD (with thread_id=), StandingScope.OWNER (with "
        "owner_id=) or StandingScope.TENANT",
    )


def _where(
    scope: StandingScope, thread_id: object, owner_id: object, limits: InputLimits
) -> tuple[str | None, str | None]:
    """The thread or the owner a scope names, exactly the one it needs."""
    needs = {StandingScope.THREAD: "thread_id", StandingScope.OWNER: "owner_id"}.get(scope)
    given = {"thread_id": thread_id, "owner_id": owner_id}
    extra = [name for name, value in given.items() if value is not None and name != needs]
    if extra or (needs is not None and given[needs] is None):
        wanted = f"{needs}= and nothing else" if needs else "neither thread_id= nor owner_id="
        raise DtoValidationError(
            f"scope={scope.name} takes {wanted}",
            hint="THREAD covers one thread (thread_id=), OWNER every thread of one owner "
            "(owner_id=), TENANT every thread of the tenant",
        )
    if needs == "thread_id":
        return check_id(thread_id, "thread_id", limits), None
    if needs == "owner_id":
        return None, check_id(owner_id, "owner_id", limits)
    return None, None


def check_until(until: object, now: datetime) -> datetime | None:
    """When a grant (a standing decision, a delegation) ends by itself: a timezone-aware
    moment in the future, or ``None`` (until revoked); raises otherwise."""
    if until is None:
        return None
    if not isinstance(until, datetime) or until.tzinfo is None or until <= now:
        raise DtoValidationError(
            f"until={until!r} must be a timezone-aware datetime in the future",
            hint="pass until=datetime.now(UTC) + timedelta(...), or leave it out: until revoked",
        )
    return until


def check_reason(reason: Any, limits: InputLimits, hint: str) -> str:
    """A grant's reason: a string within the limits; raises otherwise (``hint``: what to
    say)."""
    if not isinstance(reason, str) or len(reason) > limits.reason_length:
        raise DtoValidationError(
            f"reason must be a string of at most {limits.reason_length} characters", hint=hint
        )
    return reason


_WHY_STANDING = "say briefly why the calls are approved ahead of time"
