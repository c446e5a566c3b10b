"""buildkit.builder.configure.torch_env: which projects use torch, and a build against another torch
than the one installed where the wheel goes (pip's build isolation)."""

from __future__ import annotations

from pathlib import Path

import pytest

from buildkit.builder.configure import torch_env
from buildkit.builder.configure.torch_env import InstalledTorch, isolation_mismatch, project_uses_torch


@pytest.mark.parametrize("text, uses", [
    ("find_package(Torch REQUIRED)", True),
    ("FIND_PACKAGE( Torch CONFIG)", True),
    ("include(BuildkitTorch)\nbuildkit_torch_extension(_C SOURCES a.cpp)", True),
    ("find_package(TorchVision)", False),
    ("find_package(Python)  # torch-free", False),
])
def test_project_uses_torch(tmp_path: Path, text: str, uses: bool) -> None:
    (tmp_path / "CMakeLists.txt").write_text(text)
    assert project_uses_torch(tmp_path / "CMakeLists.txt") is uses
    assert project_uses_torch(tmp_path / "missing.txt") is False


@pytest.fixture
def target_site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The interpreter's own site-packages (where the wheel will go), off sys.path as under pip's isolation."""
    site = tmp_path / "target-site"
    site.mkdir()
    monkeypatch.setattr(torch_env.sysconfig, "get_paths", lambda: {"purelib": str(site)})
    return site


def test_a_build_against_another_torch_than_the_installed_one_is_named(target_site: Path) -> None:
    isolated = InstalledTorch("2.14.1", "12.8", Path("/tmp/pip-build-env-x/overlay/site-packages/torch"))
    assert isolation_mismatch(isolated) is None  # nothing installed where the wheel goes
    (target_site / "torch-2.13.0+cpu.dist-info").mkdir()
    warning = isolation_mismatch(isolated)
    assert "torch 2.14.1" in warning and "has torch 2.13.0+cpu" in warning and "--no-build-isolation" in warning
    assert isolation_mismatch(InstalledTorch("2.13.0+cpu", None, target_site / "torch")) is None
    assert isolation_mismatch(None) is None
