from __future__ import annotations

import os
from pathlib import Path

import pytest

from buildkit.builder.toolchain.jobs import available_memory_mb, cpu_count, default_job_count, memory_warning


@pytest.mark.parametrize("cores, memory, cuda, expected", [
    (64, 32_000, False, 31),  # memory-bound: 32 GB / 1 GB
    (64, 32_000, True, 10),  # nvcc jobs need 3 GB each
    (8, 64_000, False, 8),  # core-bound
    (8, 64_000, True, 8),
    (16, 500, False, 1),  # never below one job
    (16, 0, True, 1),
    (1, 100_000, False, 1),
])
def test_default_job_count(cores: int, memory: int, cuda: bool, expected: int) -> None:
    assert default_job_count(cores=cores, available_memory_mb=memory, cuda=cuda) == expected


def test_job_memory_is_a_parameter() -> None:
    assert default_job_count(cores=64, available_memory_mb=32_000, job_memory_mb=4_000) == 8
    assert default_job_count(cores=64, available_memory_mb=32_000, cuda=True, cuda_job_memory_mb=8_000) == 4


def test_defaults_come_from_the_machine() -> None:
    jobs = default_job_count()
    assert 1 <= jobs <= cpu_count() <= (os.cpu_count() or 1)


def test_cpu_count_honours_cgroup_quota(tmp_path: Path) -> None:
    (tmp_path / "cpu.max").write_text("150000 100000\n")
    assert cpu_count(tmp_path) == min(2, cpu_count(tmp_path / "none"))
    (tmp_path / "cpu.max").write_text("max 100000\n")
    assert cpu_count(tmp_path) == cpu_count(tmp_path / "none")


def test_cpu_count_cgroup_v1(tmp_path: Path) -> None:
    (tmp_path / "cpu").mkdir()
    (tmp_path / "cpu" / "cpu.cfs_quota_us").write_text("100000\n")
    (tmp_path / "cpu" / "cpu.cfs_period_us").write_text("100000\n")
    assert cpu_count(tmp_path) == 1


def test_available_memory(tmp_path: Path) -> None:
    meminfo = tmp_path / "meminfo"
    meminfo.write_text("MemTotal:       32000000 kB\nMemAvailable:    8192000 kB\n")
    assert available_memory_mb(meminfo, tmp_path / "none") == 8000
    (tmp_path / "memory.max").write_text(str(4096 * 1024 * 1024))
    (tmp_path / "memory.current").write_text(str(1024 * 1024 * 1024))
    assert available_memory_mb(meminfo, tmp_path) == 3072, "the container limit wins"
    (tmp_path / "memory.max").write_text("max\n")
    assert available_memory_mb(meminfo, tmp_path) == 8000


def test_available_memory_of_this_machine() -> None:
    memory = available_memory_mb()
    assert memory is None or memory > 0


@pytest.mark.parametrize("jobs, per_job, available, warns", [
    (8, 1024, 16_000, False), (16, 1024, 8_000, True), (4, 3072, 10_000, True), (4, 3072, None, False),
])
def test_memory_warning(jobs: int, per_job: int, available: int | None, warns: bool) -> None:
    warning = memory_warning(jobs, per_job, available)
    assert (warning is not None) is warns
    if warning:
        assert f"MAX_JOBS={max(1, available // per_job)}" in warning
