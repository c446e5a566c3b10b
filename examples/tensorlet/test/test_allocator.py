"""The CPU allocator's transparent huge pages (csrc/core/Allocator.cpp): a buffer of
2 MiB or more starts on a huge page and its whole huge pages are advised huge, so
first touch faults 2 MiB at a time; TENSORLET_HUGE_PAGES=0 turns that off.

Each case runs a fresh interpreter (the switch is read once per process) that fills a
64 MiB tensor and reports, from /proc/self/smaps, how much of the tensor's range the
kernel backs with huge pages, and from /proc/vmstat how many huge-page faults fell
back to small pages meanwhile (the kernel had none free: the case then skips)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT, requires_build

THP_ENABLED = Path("/sys/kernel/mm/transparent_hugepage/enabled")
HUGE_PAGE = 2 << 20

PROBE = r"""
import json, sys
sys.path.insert(0, sys.argv[1])
import tensorlet as tl

def vmstat(key):
    for line in open("/proc/vmstat"):
        name, value = line.split()
        if name == key:
            return int(value)
    return 0

def huge_kib_in(start, end):
    total, overlaps = 0, False
    for line in open("/proc/self/smaps"):
        fields = line.split()
        if "-" in fields[0] and len(fields) >= 5:
            lo, hi = (int(v, 16) for v in fields[0].split("-"))
            overlaps = lo < end and hi > start
        elif overlaps and fields[0] == "AnonHugePages:":
            total += int(fields[1])
    return total

fallback = vmstat("thp_fault_fallback")
x = tl.ones(16 << 20)  # 64 MiB, every page written
start = x.data_ptr()
print(json.dumps({"start": start, "huge_kib": huge_kib_in(start, start + (64 << 20)),
                  "fallbacks": vmstat("thp_fault_fallback") - fallback}))
"""


def thp_mode() -> str:
    """The bracketed word of the kernel's THP switch: always, madvise or never ('' without THP)."""
    try:
        text = THP_ENABLED.read_text()
    except OSError:
        return ""
    return text[text.find("[") + 1:text.find("]")] if "[" in text else ""


def probe(huge_pages: str) -> dict:
    env = {**os.environ, "TENSORLET_HUGE_PAGES": huge_pages}
    out = subprocess.run([sys.executable, "-c", PROBE, str(ROOT)], env=env, capture_output=True, text=True,
                         check=True)
    return json.loads(out.stdout)


pytestmark = [requires_build,
              pytest.mark.skipif(not sys.platform.startswith("linux"), reason="transparent huge pages are Linux's")]


def test_a_large_tensor_starts_on_a_huge_page_and_is_backed_by_huge_pages():
    if thp_mode() not in ("always", "madvise"):
        pytest.skip(f"the kernel's transparent huge pages are off ({THP_ENABLED}: {thp_mode() or 'absent'})")
    seen = probe("1")
    assert seen["start"] % HUGE_PAGE == 0, seen
    if seen["huge_kib"] == 0 and seen["fallbacks"] > 0:
        pytest.skip(f"the kernel had no free huge page ({seen['fallbacks']} huge-page faults fell back)")
    # 32 huge pages span the tensor; the kernel may still back an odd one with small pages.
    assert seen["huge_kib"] >= 16 * HUGE_PAGE // 1024, seen


def test_tensorlet_huge_pages_0_leaves_the_buffer_to_small_pages():
    if thp_mode() != "madvise":
        pytest.skip(f"only in THP's madvise mode does the advice alone decide ({THP_ENABLED}: "
                    f"{thp_mode() or 'absent'})")
    seen = probe("0")
    assert seen["huge_kib"] == 0, seen
