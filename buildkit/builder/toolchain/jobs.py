"""How many compile jobs to run: cores, capped by the memory the compilers need.

A C++ translation unit of a large project takes about 1 GB to compile and an nvcc
job about 3 GB; running one job per core on a 64-core machine with 32 GB ends with
the OOM killer taking a compiler and a cryptic "Killed" in the log.  Containers
often see the host's cores and memory, so the cgroup limits are honoured too.
"""

from __future__ import annotations

import math
import os
from pathlib import Path

CGROUP_ROOT = Path("/sys/fs/cgroup")
_MIB = 1024 * 1024


def cpu_count(cgroup_root: Path = CGROUP_ROOT) -> int:
    """Usable cores: the affinity mask, capped by a cgroup CPU quota (docker --cpus)."""
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not Linux
        cores = os.cpu_count() or 1
    quota = _cgroup_cpu_quota(cgroup_root)
    return max(1, min(cores, quota) if quota else cores)


def _cgroup_cpu_quota(root: Path) -> int | None:
    # cgroup v2: "max 100000" or "200000 100000"; v1: two files, -1 meaning unlimited.
    v2 = _read_words(root / "cpu.max") or []
    v1 = ((_read_words(root / "cpu" / "cpu.cfs_quota_us") or [])
          + (_read_words(root / "cpu" / "cpu.cfs_period_us") or []))
    for words in (v2, v1):
        if len(words) == 2 and words[0].lstrip("-").isdigit() and words[1].isdigit():
            quota, period = int(words[0]), int(words[1])
            if quota > 0 and period > 0:
                return max(1, math.ceil(quota / period))
    return None


def available_memory_mb(meminfo: Path = Path("/proc/meminfo"), cgroup_root: Path = CGROUP_ROOT) -> int | None:
    """Memory free for new processes, in MiB; None when it cannot be told."""
    available = _meminfo_available(meminfo)
    if available is None:
        available = _sysconf_memory()
    limit = _cgroup_memory_left(cgroup_root)
    if limit is not None:
        available = limit if available is None else min(available, limit)
    return available


def total_memory_mb(meminfo: Path = Path("/proc/meminfo"), cgroup_root: Path = CGROUP_ROOT) -> int | None:
    """The machine's memory (its cgroup's limit where lower), in MiB: unlike the free memory,
    the same from one build to the next, so a job pool written into the build files keeps its depth."""
    total = _meminfo_available(meminfo, "MemTotal:")
    limit = _cgroup_memory_left(cgroup_root, used=False)
    return limit if total is None else min(total, limit) if limit is not None else total


def _meminfo_available(meminfo: Path, field: str = "MemAvailable:") -> int | None:
    try:
        text = meminfo.read_text()
    except OSError:
        return None
    for line in text.splitlines():
        if line.startswith(field):
            return int(line.split()[1]) // 1024  # kB
    return None


def _sysconf_memory() -> int | None:
    # macOS and the BSDs have no MemAvailable; free pages where the OS tells, else the
    # total, which is still the right cap for a job count.
    for pages in ("SC_AVPHYS_PAGES", "SC_PHYS_PAGES"):
        try:
            count, size = os.sysconf(pages), os.sysconf("SC_PAGE_SIZE")
        except (AttributeError, ValueError, OSError):
            continue
        if count > 0 and size > 0:
            return count * size // _MIB
    return None


def _cgroup_memory_left(root: Path, used: bool = True) -> int | None:
    for limit_file, usage_file in (("memory.max", "memory.current"),
                                   ("memory/memory.limit_in_bytes", "memory/memory.usage_in_bytes")):
        limit, usage = _read_words(root / limit_file), _read_words(root / usage_file)
        # v1 reports "no limit" as a huge number; anything beyond 2**60 is that.
        if limit and limit[0].isdigit() and int(limit[0]) < 2 ** 60:
            taken = int(usage[0]) if used and usage and usage[0].isdigit() else 0
            return max(0, int(limit[0]) - taken) // _MIB
    return None


def _read_words(path: Path) -> list[str] | None:
    try:
        return path.read_text().split()
    except OSError:
        return None


def default_job_count(*, cores: int | None = None, available_memory_mb: int | None = None,
                      job_memory_mb: int = 1024, cuda: bool = False, cuda_job_memory_mb: int = 3072) -> int:
    """min(cores, memory // memory per job), at least 1; unknown memory leaves cores alone."""
    cores = cpu_count() if cores is None else cores
    memory = _available_memory() if available_memory_mb is None else available_memory_mb
    per_job = max(job_memory_mb, cuda_job_memory_mb) if cuda else job_memory_mb
    by_memory = memory // per_job if memory is not None and per_job > 0 else cores
    return max(1, min(cores, by_memory))


_available_memory = available_memory_mb  # the parameter of default_job_count shadows the name


def memory_warning(jobs: int, job_memory_mb: int, available_mb: int | None) -> str | None:
    """A warning when ``jobs`` parallel compiles need more memory than is available."""
    if available_mb is None or jobs * job_memory_mb <= available_mb:
        return None
    fits = max(1, available_mb // job_memory_mb) if job_memory_mb > 0 else jobs
    return (f"{jobs} parallel jobs need about {jobs * job_memory_mb} MB ({job_memory_mb} MB each), but only "
            f"{available_mb} MB is available: compilers may be killed for lack of memory. "
            f"Set MAX_JOBS={fits} (or lower), or free some memory.")
