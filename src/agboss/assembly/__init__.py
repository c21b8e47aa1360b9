"""Assembly: the checks `App.create` runs over a whole application, and the DI container."""

from agboss.assembly._assemble import Assembly, ToolChannel, WorkflowDefinition, assemble
from agboss.assembly._container import Container, Provide, Scope, provide

__all__ = [
    "Assembly",
    "Container",
    "Provide",
    "Scope",
    "ToolChannel",
    "WorkflowDefinition",
    "assemble",
    "provide",
]
