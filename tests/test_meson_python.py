"""docs/how-to/meson-python.md, as written: a wheel of an extension module with a dispatched kernel, built by
pip through meson-python with the subproject fetched by the tutorial's wrap, installed and imported; and
the sdist, which carries the subproject thanks to the page's `dist` argument."""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

from ccopt_meson import host

from .conftest import IN_CI, need
from .helpers import clean_env
from .snippets import snippet
from .test_consumer_meson import git_repo

pytestmark = pytest.mark.slow


def _project(tmp_path: Path) -> Path:
    """The page's package, with the tutorial's kernel and wrap, committed to a Git repository."""
    if importlib.util.find_spec("mesonpy") is None:
        message = "meson-python is not installed (pip install '.[test]')"
        if IN_CI:
            pytest.fail(message)
        pytest.skip(message)
    git = need("git")
    src = tmp_path / "fastdot"
    (src / "subprojects").mkdir(parents=True)
    (src / "pyproject.toml").write_text(snippet("meson-python/pyproject.toml") + "\n" + snippet("meson-python/dist"))
    (src / "meson.build").write_text(snippet("meson-python/meson.build"))
    (src / "fastdot.c").write_text(snippet("meson-python/fastdot.c"))
    (src / "dot.dispatch.c").write_text(snippet("consumer/dot.dispatch.c"))
    wrap = snippet("consumer/wrap")
    url = re.search(r"^url = (\S+)$", wrap, re.M)
    assert url
    (src / "subprojects" / "ccopt-meson.wrap").write_text(wrap.replace(url.group(1), git_repo(tmp_path).as_uri()))
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t", "HOME": str(tmp_path), "PATH": os.environ["PATH"]}
    for cmd in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "fastdot"]):
        subprocess.run([git, *cmd], cwd=src, env=env, check=True, capture_output=True)
    return src


def _run(cmd: list[str], cwd: Path, env: dict[str, str] | None = None) -> str:
    r = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, f"{cmd}\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}"
    return r.stdout


def test_the_wheel_and_the_sdist_of_the_how_to(tmp_path: Path) -> None:
    src = _project(tmp_path)
    build, install, check = snippet("meson-python/build").splitlines()
    # the page's commands; here without build isolation and dependencies, which would need the network
    assert build == "python3 -m pip wheel . --wheel-dir dist"
    # cpu-baseline=min (SSE3 on x86_64) rather than the default, so that a CPU model below it exists for the check below
    _run([sys.executable, "-m", "pip", "wheel", ".", "--wheel-dir", "dist", "--no-build-isolation", "--no-deps",
          "-Csetup-args=-Dccopt-meson:cpu-baseline=min"], src)
    (wheel,) = (src / "dist").glob("fastdot-1.0-*.whl")
    assert install == "python3 -m pip install dist/fastdot-1.0-*.whl"
    _run([sys.executable, "-m", "pip", "install", "--no-deps", "--target", str(tmp_path / "site"), str(wheel)], src)
    assert check.startswith("python3 -c ")
    env = clean_env(PYTHONPATH=str(tmp_path / "site"))
    out = _run([sys.executable, "-c", check.split('"')[1]], tmp_path, env)
    total, target = out.split()
    assert total == "4950.0" and re.fullmatch(r"\w+", target)
    if host.machine_name() == "x86_64":  # below the baseline: the how-to's ImportError, the host lives
        # qemu's qemu64 without pni lacks SSE3, which the baseline min has on x86_64
        r = subprocess.run([need("qemu-x86_64-static"), "-cpu", "qemu64,-pni", sys.executable, "-c",
                            "import fastdot"], env=env, capture_output=True, text=True, timeout=300)
        assert r.returncode == 1 and "ImportError: ccopt: this CPU lacks SSE3, which this build requires" in r.stderr, (
            r.returncode, r.stderr[-2000:])
    names = zipfile.ZipFile(wheel).namelist()
    assert [n for n in names if not n.startswith("fastdot-1.0.dist-info/")] == [
        n for n in names if n.startswith("fastdot.") and n.endswith((".so", ".pyd"))]  # the module, nothing of ccopt
    (module,) = (tmp_path / "site").glob("fastdot.*.so")
    exported = _run([need("nm"), "-D", "--defined-only", str(module)], tmp_path).split()
    assert [s for s in exported if s.startswith(("dot_", "ccopt_"))] == [] and "PyInit_fastdot" in exported

    # the sdist: meson dist with the page's --include-subprojects holds the wrap-fetched subproject
    _run([sys.executable, "-c", "import mesonpy; mesonpy.build_sdist('sdist')"], src)
    (sdist,) = (src / "sdist").glob("fastdot-1.0.tar.gz")
    with tarfile.open(sdist) as tar:
        members = tar.getnames()
    assert "fastdot-1.0/subprojects/ccopt-meson/meson.build" in members
