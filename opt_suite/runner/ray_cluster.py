"""Joining a Ray cluster that ``ray start`` made: its token authentication, and its nodes' code.

**Authentication.** With Ray 2.60, ``ray start --head`` turns token authentication on whenever a
token exists on the head (``~/.ray/auth_token``, which any local ``ray.init()`` writes), but a
driver given an explicit ``--address`` never turns it on itself: it then retries for about 20 s
and fails with "Failed to connect to Ray cluster". :func:`follow_ray_start_auth` applies
``ray start``'s own rule to the driver (token mode when ``RAY_AUTH_MODE`` is unset and a token is
available), and :func:`join_hint` says exactly what to set when joining still fails.

**Code.** A cell's id hashes the versions and source digests of the code that computes it
(runner/versions.py), as the driver sees them; a node with another install would compute other
numbers under the same ids. :func:`check_nodes` runs :func:`versions.code_fingerprint` on every
alive node and refuses, naming the node, one whose code differs or cannot be imported.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from opt_suite.runner.versions import code_fingerprint

__all__ = ["NodeCodeMismatch", "check_nodes", "follow_ray_start_auth", "join_hint"]

#: Seconds a node has to start a worker and answer the code check.
NODE_CHECK_TIMEOUT_S = 120.0


class NodeCodeMismatch(RuntimeError):
    """A node of the cluster runs other code than the driver (or cannot import it)."""


def _token_available() -> bool:
    """Whether this process could send a token: Ray's own places, in Ray's order."""
    if os.environ.get("RAY_AUTH_TOKEN"):
        return True
    path = os.environ.get("RAY_AUTH_TOKEN_PATH")
    return Path(path).is_file() if path else (Path.home() / ".ray" / "auth_token").is_file()


def follow_ray_start_auth() -> bool:
    """Use token authentication when ``ray start`` would: ``RAY_AUTH_MODE`` unset, a token here.

    Sets ``RAY_AUTH_MODE=token`` for this process (before Ray reads its configuration) and
    returns whether it did. An explicit ``RAY_AUTH_MODE`` is always left as it is.
    """
    if "RAY_AUTH_MODE" in os.environ or not _token_available():
        return False
    os.environ["RAY_AUTH_MODE"] = "token"
    try:  # Ray caches its configuration at import: refresh it when Ray is imported already
        from ray._raylet import Config  # type: ignore[attr-defined]  # (in C, no stubs)

        Config.initialize("")
    except (ImportError, AttributeError):  # a Ray without token authentication: nothing to do
        pass
    return True


def join_hint(address: str) -> str:
    """What to set when joining ``address`` failed: the token of the head, or no token at all."""
    mode = os.environ.get("RAY_AUTH_MODE")
    if mode is not None and mode.lower() == "token" and _token_available():
        return (
            "is this node's token the head's? Copy it: `export RAY_AUTH_TOKEN=$(ssh HEAD ray "
            "get-auth-token)` (or RAY_AUTH_TOKEN_PATH=FILE), then rerun"
        )
    return (
        "if the head runs with token authentication (Ray's `ray start` default once "
        "~/.ray/auth_token exists), give this driver its token: `export RAY_AUTH_MODE=token "
        "RAY_AUTH_TOKEN=$(ssh HEAD ray get-auth-token)`, then rerun"
    )


def check_nodes(ray: Any, modules: Sequence[str]) -> int:
    """Check every alive node runs ``modules`` at the driver's versions; return how many nodes.

    Raises:
      NodeCodeMismatch: a node cannot import a module, has another version or source of it, or
        does not answer in :data:`NODE_CHECK_TIMEOUT_S` (the message names the node).
    """
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    expected = code_fingerprint(modules)
    probe = ray.remote(num_cpus=0, max_retries=0)(code_fingerprint)
    nodes = [n for n in ray.nodes() if n.get("Alive")]
    refs = {
        probe.options(
            scheduling_strategy=NodeAffinitySchedulingStrategy(node["NodeID"], soft=False)
        ).remote(list(modules)): node
        for node in nodes
    }
    install = "install the same opt-suite and plugins on every node (docs/scaling.md)"
    for ref, node in refs.items():
        where = f"Ray node {node.get('NodeManagerAddress')} (id {str(node['NodeID'])[:12]})"
        try:
            found = ray.get(ref, timeout=NODE_CHECK_TIMEOUT_S)
        except ray.exceptions.GetTimeoutError:
            raise NodeCodeMismatch(
                f"{where} did not answer the code check in {NODE_CHECK_TIMEOUT_S:.0f} s"
            ) from None
        except Exception as exc:  # the node could not import or run opt-suite's code
            lines = [line for line in str(exc).splitlines() if line.strip()]
            cause = lines[-1].strip() if lines else type(exc).__name__
            raise NodeCodeMismatch(
                f"{where} cannot run opt-suite's code ({cause}); {install}"
            ) from None
        for module in modules:
            if found.get(module) != expected[module]:
                raise NodeCodeMismatch(
                    f"{where} has {module} {found.get(module)!r}, this driver "
                    f"{expected[module]!r}; {install}"
                )
    return len(nodes)
