#!/usr/bin/env python3
"""Make a release of this checkout's last commit in OUTDIR (docs/how-to/release.md):

    python3 tools/release.py OUTDIR [--url-base URL] [--archive-only] [--allow-dirty]

- ``ccopt-meson-VERSION.tar.gz``: the source archive ``meson dist`` makes (the files Git tracks), written again
  with fixed owners, modes and times (the last commit's, or ``SOURCE_DATE_EPOCH``) so the same commit always
  gives the same bytes; ``meson dist`` runs with ``--no-tests`` (the archive is the repository's tree, which
  the repository's own test suite checks);
- ``ccopt-meson-VERSION.tar.gz.sha256sum``: its checksum, in ``sha256sum -c``'s format;
- ``ccopt-meson.wrap``: a ``[wrap-file]`` in WrapDB's format, its ``source_url`` under ``--url-base``
  (default: OUTDIR itself, as a ``file://`` address);
- ``python/``: the sdist and the wheel of the command line (``python -m build`` on the archive's tree),
  checked by ``twine check --strict`` (not with ``--archive-only``).
"""
from __future__ import annotations

import argparse
import gzip
import hashlib
import io
import os
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

CHECKOUT = Path(__file__).resolve().parent.parent
sys.dont_write_bytecode = True
sys.path.insert(0, str(CHECKOUT))

from ccopt_meson.errors import CcoptError  # noqa: E402
from ccopt_meson.fsio import atomic_write  # noqa: E402
from ccopt_meson.version import __version__  # noqa: E402

NAME = f"ccopt-meson-{__version__}"
ARCHIVE = f"{NAME}.tar.gz"
MESON = [sys.executable, "-m", "mesonbuild.mesonmain"]


def run(cmd: list[str], what: str) -> str:
    """Run one step; its last output lines in one error line when it fails."""
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        tail = " | ".join((r.stdout + r.stderr).strip().splitlines()[-3:])
        raise CcoptError(f"{what} failed (exit status {r.returncode}): {tail}")
    return r.stdout


def source_date() -> int:
    """The archive's one timestamp: SOURCE_DATE_EPOCH (reproducible-builds.org), else the last commit's."""
    if os.environ.get("SOURCE_DATE_EPOCH", "").isdigit():
        return int(os.environ["SOURCE_DATE_EPOCH"])
    return int(run(["git", "-C", str(CHECKOUT), "log", "-1", "--format=%ct"], "git log").strip())


def meson_dist(work: Path, allow_dirty: bool) -> Path:
    """The archive as ``meson dist`` makes it from the last commit (a configure of this project first)."""
    build = work / "build"
    run([*MESON, "setup", str(build), str(CHECKOUT)], "meson setup")
    run([*MESON, "dist", "-C", str(build), "--no-tests", "--formats", "gztar",
         *(["--allow-dirty"] if allow_dirty else [])], "meson dist")
    return build / "meson-dist" / ARCHIVE


def normalized(archive: Path, mtime: int) -> bytes:
    """``archive`` again, entries sorted, owned by root, modes 0644/0755, every time ``mtime``, no gzip name or
    time: what ``meson dist`` leaves varying (checkout times, the current user, the gzip header's clock)."""
    out = io.BytesIO()
    with tarfile.open(archive) as src, tarfile.open(fileobj=out, mode="w", format=tarfile.PAX_FORMAT) as dst:
        for member in sorted(src.getmembers(), key=lambda m: m.name):
            member.mtime, member.uid, member.gid, member.uname, member.gname = mtime, 0, 0, "", ""
            member.pax_headers = {}  # meson's tar states each time again there, to the microsecond
            member.mode = 0o755 if member.isdir() or member.mode & 0o111 else 0o644
            dst.addfile(member, src.extractfile(member) if member.isfile() else None)
    packed = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=packed, mtime=0, compresslevel=9) as gz:
        gz.write(out.getvalue())
    return packed.getvalue()


def wrap_file(url_base: str, digest: str) -> str:
    """The wrap WrapDB would serve for the archive: where it is, its checksum, what it provides."""
    return (f"[wrap-file]\ndirectory = {NAME}\nsource_url = {url_base.rstrip('/')}/{ARCHIVE}\n"
            f"source_filename = {ARCHIVE}\nsource_hash = {digest}\n\n"
            "[provide]\ndependency_names = ccopt\nprogram_names = ccopt-meson\n")


def python_dists(archive: Path, out: Path, work: Path) -> list[Path]:
    """The sdist and the wheel, built from the archive's tree (so from the same commit), checked by twine, then
    written into ``out/python`` (files of other names there are left alone)."""
    safe = {"filter": "data"} if hasattr(tarfile, "data_filter") else {}  # Python >= 3.12 and the backports
    with tarfile.open(archive) as tar:
        tar.extractall(work / "src", **safe)  # type: ignore[arg-type]
    built = work / "dist"
    run([sys.executable, "-m", "build", "--sdist", "--wheel", "--outdir", str(built), str(work / "src" / NAME)],
        "python -m build")
    files = sorted(built.iterdir())
    run([sys.executable, "-m", "twine", "check", "--strict", *map(str, files)], "twine check")
    made = [out / "python" / f.name for f in files]
    for src, dest in zip(files, made):
        atomic_write(dest, src.read_bytes(), f"the output directory {out}")
    return made


def release(out: Path, url_base: str | None, archive_only: bool, allow_dirty: bool) -> list[Path]:
    out = out.resolve()
    with tempfile.TemporaryDirectory(prefix="ccopt-release-") as tmp:
        data = normalized(meson_dist(Path(tmp), allow_dirty), source_date())
        digest = hashlib.sha256(data).hexdigest()
        where = f"the output directory {out}"
        atomic_write(out / ARCHIVE, data, where)
        atomic_write(out / f"{ARCHIVE}.sha256sum", f"{digest} *{ARCHIVE}\n", where)
        atomic_write(out / "ccopt-meson.wrap", wrap_file(url_base or out.as_uri(), digest), where)
        made = [out / ARCHIVE, out / f"{ARCHIVE}.sha256sum", out / "ccopt-meson.wrap"]
        if not archive_only:
            made += python_dists(out / ARCHIVE, out, Path(tmp))
    return made


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="release.py", description=__doc__.split("\n\n")[0])
    p.add_argument("outdir", type=Path, help="where the release files go (created if missing)")
    p.add_argument("--url-base", help="the address the archive is published under (the wrap's source_url)")
    p.add_argument("--archive-only", action="store_true", help="only the archive, its checksum and the wrap")
    p.add_argument("--allow-dirty", action="store_true", help="release the last commit though the tree has changes")
    ns = p.parse_args(argv)
    try:
        made = release(ns.outdir, ns.url_base, ns.archive_only, ns.allow_dirty)
    except CcoptError as exc:
        print(f"ccopt-meson: error: {exc}", file=sys.stderr)
        return 1
    for path in made:
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
