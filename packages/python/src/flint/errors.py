"""Errors with the bridge protocol's stable codes.

Every failure a caller sees carries a ``code`` (``function_not_found``, ``invocation_timeout``,
``invalid_payload``, a handler's own ``out_of_stock`` …). A handler raises :class:`FlintError` with its
own code and the caller's :class:`FlintInvocationError` has that code.
"""

from __future__ import annotations

import re
import traceback
from typing import Any

__all__ = [
    "FORBIDDEN",
    "ROUTING_CODES",
    "FlintError",
    "FlintForbiddenError",
    "FlintInvocationError",
    "TriggerRegistrationError",
]

#: The code of a refusal by the access policy of the listener the worker is connected to.
FORBIDDEN = "FORBIDDEN"

#: Codes about the routing of a call (no provider, time-out, worker gone …). When a handler fails
#: because a call it made failed with one of them, the handler's failure is ``invocation_failed`` with
#: the nested error as its ``cause``: the code describes the nested call, not the handler's.
ROUTING_CODES = frozenset(
    {
        "function_not_found",
        "function_not_invokable",
        "invocation_timeout",
        "invocation_stopped",
        "too_many_invocations",
        "worker_overloaded",
        "engine_shutting_down",
        "worker_shutting_down",
        "not_connected",
    }
)

#: A code a handler may fail with: lower snake case, like the catalogue's.
_HANDLER_CODE = re.compile(r"^[a-z][a-z0-9_]*$")


class FlintError(Exception):
    """An error with a stable ``code``; raise it from a handler to answer with that code."""

    def __init__(self, code: str, message: str, *, stacktrace: str | None = None, cause: FlintError | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.stacktrace = stacktrace
        if cause is not None:
            self.__cause__ = cause

    def __str__(self) -> str:
        return f"{self.code}: {self.message}"

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.code!r}, {self.message!r})"

    @property
    def cause(self) -> FlintError | None:
        """The nested failure, when this one was caused by a call the handler made."""
        return self.__cause__ if isinstance(self.__cause__, FlintError) else None

    def to_body(self) -> dict[str, Any]:
        """The wire form: ``{code, message, stacktrace?, cause?}``."""
        body: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.stacktrace is not None:
            body["stacktrace"] = self.stacktrace
        cause = self.cause
        if cause is not None:
            body["cause"] = cause.to_body()
        return body

    @classmethod
    def from_body(cls, body: Any) -> FlintError:
        """The error an ErrorBody describes (with its ``cause`` chain)."""
        if not isinstance(body, dict) or not isinstance(body.get("code"), str):
            return cls("internal_error", body if isinstance(body, str) else repr(body))
        cause = body.get("cause")
        return cls(
            body["code"],
            str(body.get("message", body["code"])),
            stacktrace=body.get("stacktrace") if isinstance(body.get("stacktrace"), str) else None,
            cause=FlintError.from_body(cause) if isinstance(cause, dict) and isinstance(cause.get("code"), str) else None,
        )


class FlintInvocationError(FlintError):
    """A failed call (``await worker.trigger(...)``): the engine's or the handler's ``code``."""

    def __init__(
        self,
        code: str,
        message: str,
        function_id: str | None = None,
        *,
        stacktrace: str | None = None,
        cause: FlintError | None = None,
    ) -> None:
        super().__init__(code, message, stacktrace=stacktrace, cause=cause)
        self.function_id = function_id

    @classmethod
    def from_wire(cls, body: Any, function_id: str | None) -> FlintInvocationError:
        """The error of an ``invocationresult`` whose ``error`` is ``body``."""
        if isinstance(body, dict) and isinstance(body.get("code"), str):
            message = str(body.get("message", body["code"]))
            if body["code"] == FORBIDDEN:
                return FlintForbiddenError(message, function_id)
            raw_cause = body.get("cause")
            cause = FlintError.from_body(raw_cause) if isinstance(raw_cause, dict) and isinstance(raw_cause.get("code"), str) else None
            stack = body.get("stacktrace")
            return cls(body["code"], message, function_id, stacktrace=stack if isinstance(stack, str) else None, cause=cause)
        return cls("internal_error", body if isinstance(body, str) else repr(body), function_id)


class FlintForbiddenError(FlintInvocationError):
    """The access policy of the engine's listener does not allow the call (code ``FORBIDDEN``)."""

    def __init__(self, message: str, function_id: str | None = None) -> None:
        super().__init__(FORBIDDEN, message, function_id)


class TriggerRegistrationError(FlintError):
    """The engine (or the worker providing the trigger type) refused a trigger."""

    def __init__(self, code: str, message: str, trigger_id: str, trigger_type: str) -> None:
        super().__init__(code, message)
        self.trigger_id = trigger_id
        self.trigger_type = trigger_type


def handler_failure(err: BaseException, function_id: str) -> dict[str, Any]:
    """What a handler's exception becomes on the wire.

    A nested call that failed with a routing code becomes ``invocation_failed`` with that failure as its
    ``cause``; a :class:`FlintError` (or any exception with a snake-case ``code`` attribute) keeps its
    code; anything else is ``invocation_failed`` with the Python traceback.
    """
    stack = "".join(traceback.format_exception(err))
    if isinstance(err, FlintInvocationError) and err.code in ROUTING_CODES:
        called = f"its call to {err.function_id}" if err.function_id else "a call it made"
        cause: dict[str, Any] = {"code": err.code, "message": err.message}
        if err.cause is not None:
            cause["cause"] = err.cause.to_body()
        return {
            "code": "invocation_failed",
            "message": f"{function_id} failed: {called} failed with {err.code}: {err.message}",
            "cause": cause,
            "stacktrace": stack,
        }
    if isinstance(err, FlintError):
        body = err.to_body()
        body.setdefault("stacktrace", stack)
        return body
    own = getattr(err, "code", None)
    code = own if isinstance(own, str) and _HANDLER_CODE.match(own) else "invocation_failed"
    text = str(err)
    message = f"{type(err).__name__}: {text}" if text else type(err).__name__
    return {"code": code, "message": message, "stacktrace": stack}
