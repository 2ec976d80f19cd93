"""Flint's Python worker SDK: functions, triggers and calls over the engine's bridge, with asyncio.

    import flint

    async def main():
        worker = await flint.connect(name="orders")

        @worker.function("orders::total")
        async def total(order: Order) -> Total: ...

        await worker.serve_forever()
"""

from ._connection import ReconnectOptions
from ._context import Caller, InvocationContext, current_invocation
from ._convert import NotSerializable, PayloadMismatch
from ._schema import json_schema
from .channels import Channel, ChannelReader, ChannelWriter
from .errors import (
    FORBIDDEN,
    FlintError,
    FlintForbiddenError,
    FlintInvocationError,
    TriggerRegistrationError,
)
from .http import ApiResponse, HttpRequest, HttpResponse, format_sse, http
from .log_handler import LogHandler
from .queue import QueueClient
from .state import StateClient, StateEvent
from .triggers import TriggerAction, TriggerConfig, TriggerRef, TriggerStatus, TriggerTypeHandler, TriggerTypeRef
from .worker import AUTO, DEFAULT_URL, SDK_VERSION, FunctionRef, HttpInvocation, Worker, connect

__version__ = SDK_VERSION

__all__ = [
    "AUTO",
    "DEFAULT_URL",
    "FORBIDDEN",
    "SDK_VERSION",
    "ApiResponse",
    "Caller",
    "Channel",
    "ChannelReader",
    "ChannelWriter",
    "FlintError",
    "FlintForbiddenError",
    "FlintInvocationError",
    "FunctionRef",
    "HttpInvocation",
    "HttpRequest",
    "HttpResponse",
    "InvocationContext",
    "LogHandler",
    "NotSerializable",
    "PayloadMismatch",
    "QueueClient",
    "ReconnectOptions",
    "StateClient",
    "StateEvent",
    "TriggerAction",
    "TriggerConfig",
    "TriggerRef",
    "TriggerRegistrationError",
    "TriggerStatus",
    "TriggerTypeHandler",
    "TriggerTypeRef",
    "Worker",
    "__version__",
    "connect",
    "current_invocation",
    "format_sse",
    "http",
    "json_schema",
]
