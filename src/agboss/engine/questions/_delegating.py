"""Delegations: one person's questions answered by another (`App.delegate`), revoked
(`App.revoke_delegation`), listed (`App.delegations`), and read when an answer comes from
someone the question is not theirs (`delegated_by`).

A delegation names whose questions (the principal), who answers them (the delegate), and
optionally one role or one tool; it holds until its date, or until revoked. It hands the
delegate only what the principal could answer themselves — the checks of an answer run on
the delegate too — and a quorum counts a person's seat once.
"""

from __future__ import annotations

import logging

from agboss.components import ChannelRoleSpec, ChannelSpec, ToolSpec
from agboss.context import DEFAULT_TENANT_ID
from agboss.engine.instance import Runtime
from agboss.engine.questions._standing import check_reason, check_until
from agboss.errors import DtoValidationError, UnknownDelegationError
from agboss.inputs import check_id
from agboss.observability import log_event
from agboss.records import Delegation, PauseRecord, new_delegation_id
from agboss.store.writes import GrantDelegation, RevokeDelegation

__all__ = [
    "DelegationGrant",
    "delegate",
    "delegated_by",
    "list_delegations",
    "revoke_delegation",
]


class DelegationGrant:
    """What `App.delegate` was given, checked: whose questions, to whom, which, until when."""

    def __init__(
        self,
        runtime: Runtime,
        principal: object,
        *,
        to: object,
        granted_by: object,
        tenant_id: object,
        role: object,
        tool: object,
        until: object,
        reason: object,
    ) -> None:
        limits = runtime.assembly.spec.limits
        self.principal = check_id(principal, "principal", limits)
        self.delegate = check_id(to, "to", limits)
        if self.delegate == self.principal:
            raise DtoValidationError(
                f"{self.principal} cannot delegate their questions to themselves",
                hint="name another person with to=",
            )
        self.granted_by = check_id(granted_by, "granted_by", limits)
        self.tenant_id = (
            DEFAULT_TENANT_ID if tenant_id is None else check_id(tenant_id, "tenant_id", limits)
        )
        self.role = None if role is None else _role(runtime, role)
        self.tool = None if tool is None else _tool(runtime, tool)
        self.until = check_until(until, runtime.clock.now())
        self.reason = None if reason is None else check_reason(reason, limits, _WHY)


async def delegate(runtime: Runtime, given: DelegationGrant) -> Delegation:
    """Stores a delegation; see `App.delegate`."""
    delegation = Delegation(
        delegation_id=new_delegation_id(),
        tenant_id=given.tenant_id,
        principal=given.principal,
        delegate=given.delegate,
        role=given.role,
        tool=given.tool,
        granted_by=given.granted_by,
        reason=given.reason,
        granted_at=runtime.clock.now(),
        until=given.until,
    )
    await runtime.store.write([GrantDelegation(delegation)])
    log_event(
        runtime.logger,
        logging.INFO,
        "delegation.granted",
        "%(delegation_id)s: %(delegate)s answers for %(principal)s, granted by %(granted_by)s",
        delegation_id=delegation.delegation_id,
        tenant_id=delegation.tenant_id,
        delegate=delegation.delegate,
        principal=delegation.principal,
        granted_by=delegation.granted_by,
    )
    return delegation


async def revoke_delegation(
    runtime: Runtime,
    delegation_id: str,
    *,
    revoked_by: str,
    tenant_id: str | None,
    person: str | None,
) -> Delegation:
    """Revokes a delegation; see `App.revoke_delegation`."""
    tenant = tenant_id or DEFAULT_TENANT_ID
    if person is not None:  # a person revoking one of theirs: another's is not shown to exist
        found = await runtime.store.delegations.find(tenant, delegation_id)
        if found is None or not _theirs(found, person):
            raise UnknownDelegationError()
    write = RevokeDelegation(tenant, delegation_id, revoked_by, runtime.clock.now())
    revoked = (await runtime.store.write([write]))[write]
    if revoked is None:  # unknown, or revoked before: a repeat is not an error
        found = await runtime.store.delegations.find(tenant, delegation_id)
        if found is None:
            raise UnknownDelegationError()
        return found
    log_event(
        runtime.logger,
        logging.INFO,
        "delegation.revoked",
        "%(delegation_id)s revoked by %(revoked_by)s",
        delegation_id=delegation_id,
        tenant_id=tenant,
        revoked_by=revoked_by,
    )
    return revoked


async def list_delegations(
    runtime: Runtime, *, tenant_id: str | None, person: str | None, revoked: bool
) -> list[Delegation]:
    """The tenant's delegations; see `App.delegations`."""
    found = await runtime.store.delegations.list(tenant_id or DEFAULT_TENANT_ID, revoked=revoked)
    return found if person is None else [each for each in found if _theirs(each, person)]


async def delegated_by(
    runtime: Runtime, pause: PauseRecord, delegate: str, principals: tuple[str, ...]
) -> str | None:
    """The first of ``principals`` whose delegation to ``delegate`` hands them ``pause`` now:
    its role and its tool in scope, not ended, not revoked; ``None`` when none does."""
    if not principals:
        return None
    now = runtime.clock.now()
    held = await runtime.store.delegations.held_by(pause.tenant_id, delegate, now)
    covering = {
        each.principal
        for each in held
        if each.covers(role=pause.channel, tool=pause.ask.tool, now=now)
    }
    return next((principal for principal in principals if principal in covering), None)


def _theirs(delegation: Delegation, person: str) -> bool:
    """Whether a delegation is a person's to see and revoke: theirs, to them, or granted by
    them."""
    return person in (delegation.principal, delegation.delegate, delegation.granted_by)


def _role(runtime: Runtime, role: object) -> str:
    """A role's (or a channel's) name, one a tool of the application asks."""
    asked = {
        channel.name: channel
        for tool_channel in runtime.assembly.tool_channels.values()
        for channel in (tool_channel, *tool_channel.escalations, *tool_channel.handoffs)
    }
    if isinstance(role, str) and role in asked:
        return role
    spec = runtime.assembly.components.get(role) if isinstance(role, type) else None
    if isinstance(spec, ChannelRoleSpec | ChannelSpec) and spec.name in asked:
        return spec.name
    shown = getattr(role, "__qualname__", repr(role))
    raise DtoValidationError(
        f"role={shown} is not a role (or channel) a tool of this application asks",
        hint="pass the @channel_role class, or its name; leave it out for every role",
    )


def _tool(runtime: Runtime, tool: object) -> str:
    """A tool's name, one of the application's that asks a channel."""
    assembly = runtime.assembly
    names = {
        spec.name
        for cls, spec in assembly.components.items()
        if isinstance(spec, ToolSpec) and cls in assembly.tool_channels
    }
    if isinstance(tool, str) and tool in names:
        return tool
    spec = assembly.components.get(tool) if isinstance(tool, type) else None
    if isinstance(spec, ToolSpec) and spec.name in names:
        return spec.name
    shown = getattr(tool, "__qualname__", repr(tool))
    raise DtoValidationError(
        f"tool={shown} is not a tool of this application that asks a channel",
        hint="pass the @tool class whose calls are asked about, or its name; leave it out "
        "for every tool",
    )


_WHY = "say briefly why, for whoever reads the audit trail"
