"""Where results came from: the code's git commit, package versions, the host and its CPU model.

The CPU model is part of where a number came from: bit-identical reruns are promised on one CPU
model, and machines of one kind are not all the same model (docs/reliability-numbers.md).

Versions are read from package metadata, never by importing the packages (TensorFlow would take
seconds to import just to print its version).
"""

from __future__ import annotations

import platform
import socket
import subprocess
from importlib import metadata
from pathlib import Path
from typing import Any

__all__ = ["collect_provenance", "cpu_model", "git_commit", "package_versions"]

_PACKAGES = (
    "opt-suite",
    "numpy",
    "scipy",
    "gymnasium",
    "tensorflow",
    "tf-keras",
    "tf-agents",
    "pyyaml",
    "ray",
)


def git_commit(path: Path | None = None) -> str | None:
    """The commit of the git checkout holding opt_suite (``+dirty`` if modified), or None."""
    where = path or Path(__file__).resolve().parents[2]
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=where, capture_output=True, text=True, timeout=10
        )
        if commit.returncode != 0:
            return None
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=where,
            capture_output=True,
            text=True,
            timeout=10,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return commit.stdout.strip() + ("+dirty" if dirty.stdout.strip() else "")


def package_versions(packages: tuple[str, ...] = _PACKAGES) -> dict[str, str]:
    """Installed versions of the packages results may depend on (missing ones are left out)."""
    versions = {"python": platform.python_version()}
    for name in packages:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return versions


def cpu_model(cpuinfo: Path = Path("/proc/cpuinfo")) -> str:
    """The CPU's model name (Linux ``/proc/cpuinfo``), else what ``platform`` knows, else "?"."""
    try:
        with cpuinfo.open("rb") as f:
            head = f.read(1 << 16).decode("utf-8", "replace")  # the first core's lines suffice
    except OSError:
        head = ""
    for line in head.splitlines():
        key, _, value = line.partition(":")
        if key.strip() == "model name" and value.strip():
            return value.strip()
    return platform.processor() or "?"


def collect_provenance() -> dict[str, Any]:
    """``{git_commit, versions, host, platform, cpu}`` of this process."""
    return {
        "git_commit": git_commit(),
        "versions": package_versions(),
        "host": socket.gethostname(),
        "platform": platform.platform(),
        "cpu": cpu_model(),
    }
