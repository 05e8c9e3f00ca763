"""A synchronous hook on a loaded machine: time the OS gives other processes is not the hook's.

Each test runs in its own interpreter, pinned to one CPU (Linux), so pausing or crowding it
touches nothing else; warnings are errors there, so a ``SlowHookWarning`` fails the script.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.skipif(
    not hasattr(os, "sched_setaffinity") or not hasattr(signal, "SIGSTOP"),
    reason="pins a CPU and stops a process (Linux)",
)


def run_script(source: str, **env: str) -> subprocess.CompletedProcess[str]:
    full = {k: v for k, v in os.environ.items() if not k.startswith("AGENTKIT_")}
    full.update(env)
    return subprocess.run(
        [sys.executable, "-W", "error::RuntimeWarning", "-c", textwrap.dedent(source)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=full,
        timeout=60,
        check=False,
    )


def test_a_hook_paused_by_the_os_is_not_reported() -> None:
    """The process is stopped 0.2 s inside the hook, as a crowded CPU would leave it waiting."""
    proc = run_script(
        """
        import asyncio, os, signal, subprocess
        from agentkit_core import Hooks, Message
        from agentkit_core.testing import make_test_ctx

        def paused(message):
            subprocess.Popen(["sh", "-c", f"sleep 0.2; kill -CONT {os.getpid()}"])
            os.kill(os.getpid(), signal.SIGSTOP)

        hooks = Hooks.of("paused", output_guard=paused, slow=0.1)
        ctx = make_test_ctx()
        asyncio.run(hooks.run_output_guard(ctx, Message.assistant("a")))
        assert ctx.trace.find("hook") == [], ctx.trace.find("hook")
        print("quiet")
        """
    )
    assert proc.returncode == 0 and proc.stdout == "quiet\n", proc.stderr


def test_the_web_plugins_hooks_are_not_reported_on_a_crowded_cpu() -> None:
    """Its first calls (imports, the default guardrail built) share one CPU with six loops."""
    proc = run_script(
        """
        import asyncio, os, subprocess, sys, time
        from agentkit_core import Hooks, PluginManager, ToolCall, ToolResult
        from agentkit_core.testing import make_test_ctx

        cpu = min(os.sched_getaffinity(0))
        os.sched_setaffinity(0, {cpu})
        hooks = Hooks.from_plugins(PluginManager())  # AGENTKIT_LOAD_PLUGINS=web
        burn = (
            f"import os,time\\nos.sched_setaffinity(0,{{{cpu}}})\\n"
            "t=time.time()\\nwhile time.time()-t<8: pass"
        )
        loops = [subprocess.Popen([sys.executable, "-c", burn]) for _ in range(6)]
        try:
            time.sleep(0.5)  # they have started and share the CPU
            ctx = make_test_ctx()
            call = ToolCall("c1", "fetch", '{"url": "https://example.com/a"}')
            asyncio.run(hooks.run_before_tool_call(ctx, call))
            asyncio.run(hooks.run_after_tool_call(ctx, call, ToolResult("page " * 2000)))
        finally:
            for loop in loops:
                loop.kill()
        assert ctx.trace.find("hook") == [], ctx.trace.find("hook")
        print("quiet")
        """,
        AGENTKIT_LOAD_PLUGINS="web",
    )
    assert proc.returncode == 0 and proc.stdout == "quiet\n", proc.stderr


def test_a_hook_left_runnable_on_a_crowded_cpu_is_not_taken_for_one_that_waits() -> None:
    """Under 5 x slow of CPU time but held past it by the wall clock, without ever waiting."""
    proc = run_script(
        """
        import asyncio, os, subprocess, sys, time
        from agentkit_core import Hooks, Message
        from agentkit_core.testing import make_test_ctx

        cpu = min(os.sched_getaffinity(0))
        os.sched_setaffinity(0, {cpu})
        held = []

        def crowded(message):
            wall, start = time.perf_counter(), time.thread_time()
            while time.thread_time() - start < 0.03:  # under slow (0.05 s) of CPU time
                pass
            held.append(time.perf_counter() - wall)

        hooks = Hooks.of("crowded", output_guard=crowded, slow=0.05)
        burn = (
            f"import os,time\\nos.sched_setaffinity(0,{{{cpu}}})\\n"
            "t=time.time()\\nwhile time.time()-t<8: pass"
        )
        loops = [subprocess.Popen([sys.executable, "-c", burn]) for _ in range(12)]
        try:
            time.sleep(0.5)  # they have started and share the CPU
            ctx = make_test_ctx()
            asyncio.run(hooks.run_output_guard(ctx, Message.assistant("a")))
        finally:
            for loop in loops:
                loop.kill()
        assert held[0] > 0.25, f"not crowded past 5 x slow: {held}"
        assert ctx.trace.find("hook") == [], ctx.trace.find("hook")
        print("quiet")
        """
    )
    assert proc.returncode == 0 and proc.stdout == "quiet\n", proc.stderr
