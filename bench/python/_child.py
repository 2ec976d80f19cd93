"""What bench/python's children share: the ready line, and stopping on SIGTERM or when the bench goes away."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
import threading
from typing import Any


def ready(**info: Any) -> None:
    """Prints the JSON ready line bench/support/python.mjs waits for (clk_tck: to read /proc/<pid>/stat)."""
    clk_tck = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
    print(json.dumps({"ready": True, "pid": os.getpid(), "clk_tck": clk_tck, **info}), flush=True)


def stop_event() -> asyncio.Event:
    """Set on SIGTERM/SIGINT or when stdin closes (the bench process is gone)."""
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)

    def watch_stdin() -> None:
        sys.stdin.read()
        loop.call_soon_threadsafe(stop.set)

    threading.Thread(target=watch_stdin, daemon=True).start()
    return stop
