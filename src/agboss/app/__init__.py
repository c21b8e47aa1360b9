"""`App`: an assembled application bound to a store, model providers and a clock."""

from agboss.app._app import App
from agboss.app._deploy_check import check_deploy
from agboss.app._inspecting import inspecting

__all__ = ["App", "check_deploy", "inspecting"]
