"""`App`: an assembled application bound to a store, model providers and a clock."""

from agboss.app._app import App

__all__ = ["App"]
