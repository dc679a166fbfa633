"""The ISA audit beside other tools on the same shipped files: the seeded-fault corpus and its clean builds
(tests/projects/seeded_faults/corpus.json), each built, installed and packed as a platform wheel, then read by

- ``ccopt-meson audit WHEEL`` (with the case's ``--baseline`` when the fault is a whole build above its level);
- auditwheel's ISA check (``auditwheel show``), which reads the GNU property note a file may declare;
- a dispatch-blind union scan, what elfx86exts-style scanners report: the highest instruction set any
  instruction of the wheel uses (the audit's own decoding, the manifest ignored).

    python3 bench/audit_corpus.py OUT [--arch x86_64 aarch64]

prints a Markdown table and writes OUT/audit-corpus.json.  Needs the audit extra and auditwheel (pinned in
the dev extra); aarch64 needs the cross compiler of tests/cross/aarch64.ini.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as `python bench/audit_corpus.py`
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.projects import copy_repo
from bench.timing import ROOT

FIXTURE = ROOT / "tests" / "projects" / "seeded_faults"
CROSS = {"aarch64": ["--cross-file", str(ROOT / "tests" / "cross" / "aarch64.ini")]}
TAGS = {"x86_64": "linux_x86_64", "aarch64": "linux_aarch64"}


def build(work: Path, arch: str, case: dict[str, Any]) -> Path:
    """The case built and installed, packed as a platform wheel (the installed files under the package)."""
    src = work / "src"
    if not src.exists():
        shutil.copytree(FIXTURE, src)
        copy_repo(src / "subprojects" / "ccopt-meson", bytecode=False)
    env = dict(os.environ, **case.get("env", {}))
    if arch == "x86_64":
        env.setdefault("CC", "gcc")
    b, tree = work / "build", work / "tree"
    meson = [sys.executable, "-m", "mesonbuild.mesonmain"]
    subprocess.run([*meson, "setup", *CROSS.get(arch, []), *case.get("setup", []), str(b)], cwd=src, env=env,
                   check=True, capture_output=True)
    subprocess.run(["ninja", "-C", str(b)], env=env, check=True, capture_output=True)
    subprocess.run([*meson, "install", "-C", str(b), "--destdir", str(tree), "--quiet"], env=env, check=True,
                   capture_output=True)
    wheel = work / f"seeded_faults-1.0-cp311-cp311-{TAGS[arch]}.whl"
    records = []
    with zipfile.ZipFile(wheel, "w", zipfile.ZIP_DEFLATED) as z:
        def add(name: str, data: bytes) -> None:
            z.writestr(name, data)
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
            records.append(f"{name},sha256={digest},{len(data)}")
        for path in sorted(tree.rglob("*")):
            if path.is_file() and not path.is_symlink():
                add(f"seeded_faults/{path.name}", path.read_bytes())
        info = "seeded_faults-1.0.dist-info/"
        add(info + "WHEEL", f"Wheel-Version: 1.0\nGenerator: bench\nRoot-Is-Purelib: false\nTag: cp311-cp311-"
                            f"{TAGS[arch]}\n".encode())
        add(info + "METADATA", b"Metadata-Version: 2.1\nName: seeded_faults\nVersion: 1.0\n")
        z.writestr(info + "RECORD", "\n".join([*records, info + "RECORD,,"]) + "\n")
    return wheel


def ccopt(wheel: Path, case: dict[str, Any]) -> tuple[str, str]:
    """What the audit says, and the union scan's rating from the same decoding."""
    contract = ["--baseline", case["baseline"]] if case.get("baseline") else []
    r = subprocess.run([sys.executable, "-m", "ccopt_meson", "audit", "--json", *contract, str(wheel)],
                       capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=str(ROOT)))
    doc = json.loads(r.stdout) if r.stdout.strip() else {"objects": []}
    named = sorted({f["function"] for o in doc["objects"] for f in o["findings"]})
    verdict = {0: "pass", 1: f"finding: {', '.join(named)}", 2: "error"}.get(r.returncode, str(r.returncode))
    highest = [o["highest"] for o in doc["objects"] if o["highest"]]
    order = ["SSE", "SSE2", "SSE3", "SSSE3", "SSE41", "SSE42", "AVX", "AVX2", "AVX512F", "NEON", "ASIMD", "CRC32",
             "ASIMDDP", "SVE"]
    union = max(highest, key=lambda h: order.index(h) if h in order else len(order), default="none")
    return verdict, union


def auditwheel(wheel: Path) -> str:
    exe = shutil.which("auditwheel")
    if exe is None:
        return "not installed"
    r = subprocess.run([exe, "show", str(wheel)], capture_output=True, text=True)
    text = " ".join((r.stdout + r.stderr).split())
    if "x86-64-v" in text or "ISA" in text:
        return "names an ISA level"
    return "no ISA finding" if r.returncode == 0 else f"error ({text[:60]})"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("out", type=Path)
    p.add_argument("--arch", nargs="+", default=["x86_64"], choices=["x86_64", "aarch64"])
    ns = p.parse_args(argv)
    corpus = json.loads((FIXTURE / "corpus.json").read_text())
    rows = []
    for arch in ns.arch:
        cases = corpus[arch] + (corpus["clean"] if arch == "x86_64" else [{"fault": "none", "setup": []}])
        for i, case in enumerate(cases):
            work = ns.out / f"{arch}-{i}"
            shutil.rmtree(work, ignore_errors=True)
            work.mkdir(parents=True)
            try:
                wheel = build(work, arch, case)
            except subprocess.CalledProcessError as exc:
                out = exc.stdout.decode(errors="replace") if isinstance(exc.stdout, bytes) else str(exc.stdout)
                rows.append({"arch": arch, "case": case["fault"], "expected": case.get("function", ""),
                             "ccopt": "build failed", "auditwheel": "", "union": "", "log": out[-2000:]})
                continue
            verdict, union = ccopt(wheel, case)
            rows.append({"arch": arch, "case": case["fault"], "expected": case.get("function", ""),
                         "ccopt": verdict, "auditwheel": auditwheel(wheel), "union": union})
            print(f"{arch}: {case['fault']}: {verdict}", file=sys.stderr)
    (ns.out / "audit-corpus.json").write_text(json.dumps(rows, indent=1) + "\n")
    print("| arch | build | `ccopt-meson audit` | auditwheel's ISA check | dispatch-blind union scan |")
    print("|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['arch']} | {r['case']} | {r['ccopt']} | {r['auditwheel']} | highest: {r['union']} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
