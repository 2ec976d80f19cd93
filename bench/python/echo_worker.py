"""bench/invoke's Python echo worker: the flint SDK (PYTHONPATH=packages/python/src) registers
``bench::echo-python``, which returns its payload. argv[1]: the engine's bridge URL.
Prints {"ready":true,…} once connected and registered; shuts down gracefully on SIGTERM or stdin EOF.
"""

from __future__ import annotations

import asyncio
import sys

import flint
from _child import ready, stop_event

FUNCTION_ID = "bench::echo-python"


async def echo(data):  # no annotations: the payload as it arrives, no request/response formats
    return data


async def main() -> None:
    stop = stop_event()
    worker = await flint.connect(sys.argv[1], name="bench-python-echo-worker")
    worker.register_function(FUNCTION_ID, echo, description="echoes its input (bench, Python)")
    ready(sdk=flint.__version__)
    await stop.wait()
    await worker.shutdown()


asyncio.run(main())
