"""The release command (tools/release.py): the archive meson dist makes, made reproducible, its checksum and
wrap-file, the sdist and wheel; then each consumed as a stranger would: a project built from the archive
through the wrap-file, the wheel installed in a fresh venv."""

from __future__ import annotations

import configparser
import hashlib
import os
import re
import subprocess
import sys
import venv
from pathlib import Path

import pytest

from ccopt_meson.version import __version__

from .conftest import ROOT, need_module
from .snippets import snippet
from .test_meson import Build

pytestmark = pytest.mark.slow
NAME = f"ccopt-meson-{__version__}"
ARCHIVE = f"{NAME}.tar.gz"


def release(out: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The documented command; --allow-dirty: a working tree with changes releases its last commit."""
    assert snippet("release/command").split() == ["python3", "tools/release.py", "dist/"]
    r = subprocess.run([sys.executable, str(ROOT / "tools" / "release.py"), str(out), "--allow-dirty", *args],
                       capture_output=True, text=True, timeout=1200)
    assert r.returncode == 0, f"{r.stdout[-3000:]}\n{r.stderr[-3000:]}"
    return r


@pytest.fixture(scope="module")
def released(tmp_path_factory: pytest.TempPathFactory) -> Path:
    need_module("build", "the test extra's build")
    need_module("twine", "the test extra's twine")
    out = tmp_path_factory.mktemp("release")
    release(out)
    return out


def test_the_release_command_makes_the_archive_checksum_wrap_and_dists(released: Path) -> None:
    archive = (released / ARCHIVE).read_bytes()
    digest = hashlib.sha256(archive).hexdigest()
    assert (released / f"{ARCHIVE}.sha256sum").read_text() == f"{digest} *{ARCHIVE}\n"  # sha256sum -c reads it
    wrap = configparser.ConfigParser(interpolation=None)
    wrap.read_string((released / "ccopt-meson.wrap").read_text())
    assert dict(wrap["wrap-file"]) == {"directory": NAME, "source_url": (released / ARCHIVE).as_uri(),
                                       "source_filename": ARCHIVE, "source_hash": digest}
    assert dict(wrap["provide"]) == {"dependency_names": "ccopt", "program_names": "ccopt-meson"}
    assert sorted(p.name for p in (released / "python").iterdir()) == [
        f"ccopt_meson-{__version__}-py3-none-any.whl", f"ccopt_meson-{__version__}.tar.gz"]


def test_the_readme_s_wrap_file_is_the_released_one(released: Path) -> None:
    """The README shows the wrap a release carries: the same lines, but the address and the checksum."""
    made = (released / "ccopt-meson.wrap").read_text()
    shown = snippet("consumer/wrap-file")
    placeholders = ("source_url", "source_hash")
    keep = [line for line in made.splitlines() if not line.startswith(placeholders)]
    assert [line for line in shown.splitlines() if not line.startswith(placeholders)] == keep
    assert re.search(rf"^source_url = \S+/{re.escape(ARCHIVE)}$", shown, re.M)


def test_the_same_commit_gives_the_same_archive_bytes(released: Path, tmp_path: Path) -> None:
    """meson dist alone does not: checkout times, the user, the gzip header's clock vary between runs."""
    release(tmp_path, "--archive-only")
    assert (tmp_path / ARCHIVE).read_bytes() == (released / ARCHIVE).read_bytes()
    assert not (tmp_path / "python").exists()


def test_a_project_builds_from_the_archive_through_the_wrap_file(released: Path, tmp_path: Path) -> None:
    """The README's example with the released wrap-file: Meson reads the file:// address, checks the hash."""
    src = tmp_path / "fresh"
    (src / "subprojects").mkdir(parents=True)
    (src / "subprojects" / "ccopt-meson.wrap").write_text((released / "ccopt-meson.wrap").read_text())
    (src / "meson.build").write_text(snippet("consumer/meson.build"))
    for name in ("dot.dispatch.c", "main.c"):
        (src / name).write_text(snippet(f"consumer/{name}"))
    b = Build(tmp_path, src)
    b.meson_cmd("setup", "build")
    assert (src / "subprojects" / NAME / "meson.build").is_file()  # unpacked from the archive
    assert (src / "subprojects" / "packagecache" / ARCHIVE).read_bytes() == (released / ARCHIVE).read_bytes()
    b.meson_cmd("test", "-C", "build")
    assert re.search(r"dot = 4950 \((\w+)\)", (src / "build" / "meson-logs" / "testlog.txt").read_text())


def test_the_wheel_installs_in_a_fresh_venv_and_detects(released: Path, tmp_path: Path) -> None:
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=True)
    py = env_dir / "bin" / "python"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH" and not k.startswith("CCOPT_")}
    wheel = released / "python" / f"ccopt_meson-{__version__}-py3-none-any.whl"
    r = subprocess.run([str(py), "-m", "pip", "install", "-q", str(wheel)], capture_output=True, text=True,
                       env=env, timeout=900)
    assert r.returncode == 0, r.stderr[-3000:]
    cli = env_dir / "bin" / "ccopt-meson"
    version = subprocess.run([str(cli), "--version"], capture_output=True, text=True, cwd=tmp_path, env=env, timeout=60)
    assert version.stdout == f"ccopt-meson {__version__}\n"
    detect = subprocess.run([str(cli), "detect"], capture_output=True, text=True, cwd=tmp_path, env=env, timeout=300)
    assert detect.returncode == 0, detect.stderr
    assert re.search(r"^CPU baseline\n  Requested    : 'detect'$", detect.stdout, re.M), detect.stdout
    located = subprocess.run([str(py), "-c", "import ccopt_meson; print(ccopt_meson.__file__)"],
                             capture_output=True, text=True, cwd=tmp_path, env=env, timeout=60)
    assert located.stdout.startswith(str(env_dir))  # the wheel's copy, not this checkout's


def test_an_output_directory_that_cannot_be_written_is_one_error_line(tmp_path: Path) -> None:
    blocked = tmp_path / "file"
    blocked.write_text("not a directory\n")
    r = subprocess.run([sys.executable, str(ROOT / "tools" / "release.py"), str(blocked / "out"), "--allow-dirty",
                        "--archive-only"], capture_output=True, text=True, timeout=600)
    assert r.returncode == 1 and r.stdout == "" and blocked.read_text() == "not a directory\n"
    assert re.fullmatch(rf"ccopt-meson: error: cannot write {re.escape(str(blocked))}/out/{re.escape(ARCHIVE)}: "
                        r"Not a directory; check that the output directory .* is writable\n", r.stderr), r.stderr
