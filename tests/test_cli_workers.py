"""The worker processes of ``aucstream compare`` end with it, even after a SIGKILL.

A comparison whose runs take minutes (OAM with an unbounded buffer costs O(t) per
example) is started in a subprocess with two workers; once both workers are busy,
the parent is killed with SIGKILL, which gives it no chance to stop its pool. The
workers must be gone within seconds, not at the end of their run.
"""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

pytestmark = pytest.mark.skipif(
    not Path("/proc/self/stat").exists(), reason="reads the process table from /proc"
)


def _stat(pid: int) -> list[str] | None:
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return text.rsplit(")", 1)[1].split()  # state, ppid, ..., utime at [11]


def _alive(pid: int) -> bool:
    stat = _stat(pid)
    return stat is not None and stat[0] not in ("Z", "X")


def _children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            stat = _stat(int(entry.name))
            if stat is not None and int(stat[1]) == pid:
                found.append(int(entry.name))
    return found


def _is_worker(pid: int) -> bool:
    try:
        command = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False
    return b"popen_loky" in command


def _busy(pid: int) -> bool:
    """The worker has used over a second of CPU: past its start, inside a run."""
    stat = _stat(pid)
    return stat is not None and int(stat[11]) > os.sysconf("SC_CLK_TCK")


def test_workers_end_when_the_parent_is_killed(tmp_path):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40000, 3))
    y = np.where(X[:, 0] + rng.normal(size=X.shape[0]) > 0, 1, -1)
    data = tmp_path / "long.csv"
    np.savetxt(data, np.column_stack([X, y]), delimiter=",", fmt="%.3f")
    command = [sys.executable, "-m", "aucstream", "compare", "--learners", "OAM(buffer_size=None)"]
    command += ["--datasets", str(data), "--quick", "--max-samples", "40000", "--jobs", "2"]
    command += ["--out", str(tmp_path / "out")]
    parent = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    children: list[int] = []
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and parent.poll() is None:
            children = _children(parent.pid)
            workers = [c for c in children if _is_worker(c)]
            if len(workers) == 2 and all(_busy(w) for w in workers):
                break
            time.sleep(0.2)
        else:
            pytest.fail(f"the workers never got busy: {parent.communicate()[1].decode()[-2000:]}")
        parent.send_signal(signal.SIGKILL)
        parent.wait()
        # loky's workers poll for their parent; on a loaded machine that takes a while
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and any(_alive(c) for c in children):
            time.sleep(0.1)
        survivors = [c for c in children if _alive(c)]
        assert not survivors, f"processes outlived their parent: {survivors}"
    finally:
        if parent.poll() is None:
            parent.kill()
        for child in children:
            if _alive(child):
                os.kill(child, signal.SIGKILL)
