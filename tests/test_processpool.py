"""``processpool.stop_pool`` ends a pool at once, whatever its workers were doing when killed.

Found by CI: a SIGTERM that killed a reader process half way through writing its chunk of files
back left the pool's manager thread inside ``recv`` waiting for the rest of the message; the
interpreter joins that thread at exit, so the command printed "terminated" and then hung.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

# A worker writes the first bytes of a result message (a length header and part of the body) to
# the pool's result pipe and then sleeps: the state a worker killed mid-write leaves behind. The
# parent waits until the manager thread is reading that message, stops the pool and exits.
_HALF_WRITTEN_RESULT = textwrap.dedent(
    """
    import concurrent.futures, os, struct, sys, time
    from resume_audit.engine.processpool import pool_context, stop_pool

    pool = None

    def half_write() -> None:
        writer = pool._result_queue._writer
        os.write(writer.fileno(), struct.pack("!i", 1_000_000) + b"x" * 1000)
        time.sleep(120)

    pool = concurrent.futures.ProcessPoolExecutor(max_workers=1, mp_context=pool_context())
    future = pool.submit(half_write)
    time.sleep(1.0)  # the manager thread is now inside recv() for the half message
    stop_pool(pool)
    print("stopped", flush=True)
    """
)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the worker reaches the pool's pipe through fork")
def test_a_worker_killed_mid_write_does_not_hang_the_exit() -> None:
    """Fails without closing the parent's copy of the result pipe's write end (the exit hangs)."""
    proc = subprocess.run([sys.executable, "-c", _HALF_WRITTEN_RESULT], capture_output=True, text=True, timeout=60)
    assert proc.stdout.strip() == "stopped", proc.stderr[-2000:]
    assert proc.returncode == 0, proc.stderr[-2000:]


def test_a_pool_stopped_before_it_started_work_ends() -> None:
    """The pool's own bookkeeping (not yet any worker, no result queue read) is no obstacle."""
    import concurrent.futures

    from resume_audit.engine.processpool import pool_context, stop_pool

    pool = concurrent.futures.ProcessPoolExecutor(max_workers=1, mp_context=pool_context())
    stop_pool(pool)
    with pytest.raises(RuntimeError):
        pool.submit(print)


def test_a_reader_pools_result_pipe_is_widened_and_still_carries_results() -> None:
    """Readers send back every byte they read; their pool's result pipe is asked to hold 1 MiB
    instead of Linux's 64 KiB, and results bigger than either still arrive whole."""
    fcntl = pytest.importorskip("fcntl")
    if not hasattr(fcntl, "F_GETPIPE_SZ"):
        pytest.skip("no pipe-size setting on this platform")
    import concurrent.futures

    from resume_audit.engine.processpool import WIDE_PIPE_BYTES, pool_context, stop_pool, widen_result_pipe

    pool = concurrent.futures.ProcessPoolExecutor(max_workers=2, mp_context=pool_context())
    try:
        assert widen_result_pipe(pool)
        assert fcntl.fcntl(pool._result_queue._reader.fileno(), fcntl.F_GETPIPE_SZ) >= WIDE_PIPE_BYTES
        sizes = [10, 70_000, 3 * WIDE_PIPE_BYTES]
        assert [len(b) for b in pool.map(bytes, sizes)] == sizes
    finally:
        stop_pool(pool)
