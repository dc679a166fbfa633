"""The machine this helper runs on: its name in the tables and its CPU's identity.

Only two questions need it: is a build a cross build (``native`` is refused
then), and which CPU a ``native`` answer was made for (part of the cache key).
The names and ``/proc/cpuinfo`` fields are data (``data/host.json``).
"""

from __future__ import annotations

import os

from .fsio import LIMITS

__all__ = ["machine_name", "cpu_identity"]


def machine_name() -> str:
    """The running machine's name as the tables spell it (``x86_64``, ``aarch64``, ...)."""
    from .tables import host_data

    if hasattr(os, "uname"):
        m = os.uname().machine.lower()
    else:  # Windows; platform costs ~10 ms to import, so only there
        import platform

        m = platform.machine().lower()
    return str(host_data()["aliases"].get(m, m))


def cpu_identity() -> str:
    """The running CPU's identity, for the cache key of native builds."""
    from .tables import host_data

    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as fh:
            block = fh.read(LIMITS.cpuinfo).split("\n\n")[0]
    except OSError:
        import platform

        return f"{platform.machine()} {platform.processor()}"
    wanted = set(host_data()["cpuinfo_identity_fields"])
    fields = (line.partition(":") for line in block.splitlines())
    return "\n".join(f"{k.strip()}:{v.strip()}" for k, _, v in fields if k.strip().lower() in wanted)
