"""Versions and defaults stated in several places agree."""

from __future__ import annotations

import re

from ccopt_meson import DEFAULT_BASELINE, DEFAULT_DISPATCH, __version__
from ccopt_meson.cli import build_parser

from .conftest import ROOT


def test_versions_agree() -> None:
    pyproject = (ROOT / "pyproject.toml").read_text()
    meson_build = (ROOT / "meson.build").read_text()
    py_version = re.search(r'^version = "([^"]+)"', pyproject, re.M)
    meson_version = re.search(r"project\('ccopt-meson', version: '([^']+)'", meson_build)
    assert py_version and meson_version
    assert py_version.group(1) == meson_version.group(1) == __version__


def test_meson_option_defaults_match_the_cli() -> None:
    options = (ROOT / "meson_options.txt").read_text()
    default = dict(re.findall(r"option\('([\w-]+)', type: 'string', value: '([^']*)'", options))
    assert default["cpu-baseline"] == DEFAULT_BASELINE
    assert default["cpu-dispatch"] == DEFAULT_DISPATCH
    ns = build_parser().parse_args(["detect"])
    assert (ns.baseline, ns.dispatch) == (DEFAULT_BASELINE, DEFAULT_DISPATCH)


def test_readme_test_command_is_what_ci_runs() -> None:
    readme = (ROOT / "README.md").read_text()
    ci = (ROOT / ".ci" / "run").read_text()
    command = 'python3 -m pytest -m "slow or not slow" -n 2'
    assert command in readme and command in ci


def test_builtin_sha256_matches_hashlib() -> None:
    import hashlib

    from ccopt_meson._sha import sha256

    h = sha256()
    h.update(b"ccopt")
    assert h.hexdigest() == sha256(b"ccopt").hexdigest() == hashlib.sha256(b"ccopt").hexdigest()
