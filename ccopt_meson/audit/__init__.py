"""The ISA audit: every instruction of what a build made, or of what ships, against what that code may use.

A wing of its own: it reads artifacts (objects, linked files, their dispatch manifests, Meson's introspection)
and the feature tables, never the configure glue's internals, and it alone imports its decoders (the 'audit'
extra).  ``elf`` reads a file, ``decode`` its instructions, ``allow`` says what code may use, ``check`` checks
one file, ``build`` a Meson build directory, ``artifacts`` what ships (wheels, packages, installed trees),
``report`` prints.  docs/explanation/isa-audit.md says what it proves and what it cannot.
"""

from __future__ import annotations

from .allow import Allowance, for_build
from .artifacts import audit_paths
from .build import Result, audit_build
from .check import FileReport, Finding
from .report import format_text, to_json

allowance = for_build  # what an object of a build's version may use

__all__ = ["Allowance", "FileReport", "Finding", "Result", "allowance", "audit_build", "audit_paths", "format_text",
           "to_json"]
