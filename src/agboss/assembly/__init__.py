"""Assembly: the checks `App.create` runs over a whole application, and the DI container."""

from agboss.assembly._arguments import (
    check_arguments,
    check_dependencies,
    check_environment,
    environment_of,
)
from agboss.assembly._assemble import Assembly, ToolChannel, WorkflowDefinition, assemble
from agboss.assembly._container import Container, Provide, Scope, provide
from agboss.assembly._mcp import McpTool, open_declared

__all__ = [
    "Assembly",
    "Container",
    "McpTool",
    "Provide",
    "Scope",
    "ToolChannel",
    "WorkflowDefinition",
    "assemble",
    "check_arguments",
    "check_dependencies",
    "check_environment",
    "environment_of",
    "open_declared",
    "provide",
]
