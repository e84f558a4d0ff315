"""How many CPU threads the generator and the OCR engine should run: the cores free to
this process now.

llama.cpp's threads wait on each other at every layer, so one thread that shares its core
with another busy process holds all of them back: ``--long`` took 3.7–5.9 s on a quiet
2-core machine and 23–124 s with a busy loop on one core, at ``n_threads = cpu_count``.
So the count is the physical cores this process may run on (its affinity, a cgroup quota),
less those another process keeps busy, measured over a short window just before
generating, and at least one. The ``generator_threads`` setting
(``RAGCTL_GENERATOR_THREADS``) overrides it. Tesseract's threads wait on each other the
same way: one reading of a receipt photo that takes 1 to 3 s took 331 s at two threads
with two more processes reading on 2 cores, and its file was skipped as too slow.
"""

from __future__ import annotations

import math
import os
import time
from pathlib import Path

SAMPLE_S = 0.05  # how long /proc/stat is watched to see which CPUs are busy
BUSY_AT = 0.5  # a CPU busier than this (another process's work) is not counted as free


def usable_cpus() -> set[int]:
    """The logical CPUs this process may run on."""
    try:
        return set(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return set(range(os.cpu_count() or 1))


def _quota() -> int | None:
    """A cgroup v2 CPU quota (``cpu.max``), in whole CPUs, rounded up."""
    try:
        quota, period = Path("/sys/fs/cgroup/cpu.max").read_text().split()[:2]
        if quota == "max":
            return None
        return max(1, math.ceil(int(quota) / int(period)))
    except (OSError, ValueError):
        return None


def physical_cores(cpus: set[int]) -> int:
    """How many physical cores the logical ``cpus`` sit on (hyper-threads share one)."""
    cores: set[tuple[str, str]] = set()
    try:
        for cpu in cpus:
            topo = Path(f"/sys/devices/system/cpu/cpu{cpu}/topology")
            cores.add(((topo / "physical_package_id").read_text().strip(),
                       (topo / "core_id").read_text().strip()))
    except OSError:
        return len(cpus)
    return len(cores) or len(cpus)


def _times(cpus: set[int]) -> dict[int, tuple[int, int]]:
    """(busy, total) jiffies per CPU, from /proc/stat."""
    out: dict[int, tuple[int, int]] = {}
    with open("/proc/stat") as f:
        for line in f:
            if not line.startswith("cpu") or line.startswith("cpu "):
                continue
            name, *values = line.split()
            cpu = int(name[3:])
            if cpu in cpus:
                v = [int(x) for x in values[:8]]
                idle = v[3] + v[4]  # idle + iowait
                out[cpu] = (sum(v) - idle, sum(v))
    return out


def busy_cpus(cpus: set[int], sample_s: float = SAMPLE_S) -> int:
    """How many of ``cpus`` other processes keep busy, watched for ``sample_s`` while
    this process sleeps; 0 where /proc/stat cannot be read."""
    try:
        before = _times(cpus)
        time.sleep(sample_s)
        after = _times(cpus)
    except (OSError, ValueError):
        return 0
    busy = 0
    for cpu, (b1, t1) in after.items():
        b0, t0 = before.get(cpu, (b1, t1))
        if t1 > t0 and (b1 - b0) / (t1 - t0) > BUSY_AT:
            busy += 1
    return busy


def generator_threads(setting: int = 0, *, sample_s: float = SAMPLE_S) -> int:
    """Threads for the generator: ``setting`` when above 0 (at most the usable CPUs),
    else the physical cores free to this process now, at least 1."""
    if setting > 0:
        return max(1, min(setting, _limit(usable_cpus())))
    return free_threads(sample_s=sample_s)


def _limit(cpus: set[int]) -> int:
    """The most threads ``cpus`` run at once: their number, within a cgroup quota."""
    return min(len(cpus), _quota() or len(cpus))


def free_threads(*, sample_s: float = SAMPLE_S) -> int:
    """The physical cores free to this process now (its affinity, a cgroup quota, less
    the CPUs other processes keep busy), at least 1."""
    cpus = usable_cpus()
    free = len(cpus) - busy_cpus(cpus, sample_s)
    return max(1, min(physical_cores(cpus), _limit(cpus), free))
