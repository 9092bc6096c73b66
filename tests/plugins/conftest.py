"""What the plugin tests share: the demo plugin package, pip-installed once per session."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

#: A third-party plugin package with one implementation per role (docs/plugin-guide.md shows its code).
DEMO = Path(__file__).parent.parent / "data" / "demo_plugin"


def _can_build_offline() -> bool:
    """Whether this environment's setuptools can build a wheel by itself (else pip fetches one)."""
    try:
        import setuptools
    except ImportError:
        return False
    major = int(setuptools.__version__.split(".")[0])
    if major >= 71:
        return True
    try:
        import wheel  # noqa: F401
    except ImportError:
        return False
    return major >= 61


@pytest.fixture(scope="session")
def demo_site(tmp_path_factory):
    """The demo plugin package pip-installed into a directory of its own."""
    target = tmp_path_factory.mktemp("site")
    cmd = [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target", str(target), str(DEMO)]
    if _can_build_offline():
        cmd.insert(4, "--no-build-isolation")
    proc = subprocess.run(cmd, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return target
