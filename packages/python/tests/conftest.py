"""The test session's engine (a real Flint engine with a Node worker, started once) and async tests.

Async test functions run on a fresh event loop each, with a time limit. No plugin is needed: Debian's
python3-pytest is enough.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).parent
TEST_TIMEOUT = float(os.environ.get("FLINT_PY_TEST_TIMEOUT", "30"))

pytest.importorskip("websockets", reason="the websockets package is not installed (apt install python3-websockets)")


class EngineHost:
    """The engine process: its URLs, and a restart that keeps the ports."""

    def __init__(self) -> None:
        self.proc = subprocess.Popen(
            ["node", str(HERE / "engine_host.mjs")],
            cwd=HERE,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        first = self._line(60)
        if "bridge" not in first:
            raise RuntimeError(f"the engine did not start: {first}")
        self.bridge: str = first["bridge"]
        self.http: str = first["http"]
        self._lock = threading.Lock()

    def _line(self, timeout: float) -> dict[str, Any]:
        result: list[str] = []
        reader = threading.Thread(target=lambda: result.append(self.proc.stdout.readline() if self.proc.stdout else ""))
        reader.start()
        reader.join(timeout)
        if not result or not result[0]:
            raise RuntimeError(f"no answer from the engine host within {timeout} s (exit code {self.proc.poll()})")
        parsed: dict[str, Any] = json.loads(result[0])
        return parsed

    def restart(self) -> None:
        """Stops the engine and starts it again on the same ports (blocking; call it in a thread)."""
        with self._lock:
            assert self.proc.stdin is not None
            self.proc.stdin.write("restart\n")
            self.proc.stdin.flush()
            answer = self._line(30)
            assert answer.get("restarted") is True, answer

    def stats(self) -> dict[str, Any]:
        """The engine's ``engine.stats()`` (blocking; call it in a thread)."""
        with self._lock:
            assert self.proc.stdin is not None
            self.proc.stdin.write("stats\n")
            self.proc.stdin.flush()
            stats: dict[str, Any] = self._line(10)["stats"]
            return stats

    def stop(self) -> None:
        if self.proc.poll() is None and self.proc.stdin is not None:
            try:
                self.proc.stdin.write("stop\n")
                self.proc.stdin.close()
                self.proc.wait(10)
            except (OSError, subprocess.TimeoutExpired):
                self.proc.kill()


@pytest.fixture(scope="session")
def engine() -> Iterator[EngineHost]:
    host = EngineHost()
    try:
        yield host
    finally:
        host.stop()


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem: pytest.Function) -> bool | None:
    """Runs ``async def`` tests on a fresh event loop, failing them after TEST_TIMEOUT seconds."""
    fn = pyfuncitem.obj
    if not inspect.iscoroutinefunction(fn):
        return None
    names = pyfuncitem._fixtureinfo.argnames
    kwargs = {name: pyfuncitem.funcargs[name] for name in names}

    async def run() -> None:
        await asyncio.wait_for(fn(**kwargs), TEST_TIMEOUT)

    asyncio.run(run())
    return True


def pytest_report_header() -> list[str]:
    import websockets

    return [f"flint python tests: Python {sys.version.split()[0]}, websockets {websockets.__version__}"]
