"""What every HTTP route of agboss stands on (`agboss.web`'s and `agboss.slack`'s): errors as
problem bodies (RFC 9457), a request's body read with care, and the router's application.
Internal: the public names are `agboss.web`'s.
"""

try:
    import starlette  # noqa: F401 - only to say which extra is missing
except ModuleNotFoundError as missing:
    raise ModuleNotFoundError(
        "agboss.web needs the web extra (starlette): pip install 'agboss[web]'",
        name=missing.name,
    ) from missing

from agboss.http._apps import app_function, opened_app
from agboss.http._json import nests_deeper, read_body, read_json
from agboss.http._problems import (
    AppNotOpenError,
    MethodNotAllowedError,
    NotAuthenticatedError,
    NotFoundError,
    RequestTooLargeError,
    UnreadableRequestError,
    log_failure,
    problem,
    status_of,
)

__all__ = [
    "AppNotOpenError",
    "MethodNotAllowedError",
    "NotAuthenticatedError",
    "NotFoundError",
    "RequestTooLargeError",
    "UnreadableRequestError",
    "app_function",
    "log_failure",
    "nests_deeper",
    "opened_app",
    "problem",
    "read_body",
    "read_json",
    "status_of",
]
