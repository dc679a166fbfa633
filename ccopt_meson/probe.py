"""Probing: the stage that starts compiler processes.

The plan, cheapest sound first:

1. one predefined-macro dump with the user's flags (identity, arch, what the
   user's own ``-march`` already enables), plus one with the native flag when
   ``native`` is asked for;
2. ONE batched translation unit that ``#include``s the probe of every
   candidate feature, compiled once with the union of their flags.  Header
   parsing dominates a probe (~0.25 s for ``<immintrin.h>``), so one compile
   costs about as much as one probe;
3. diagnostics are attributed to the probe file (or the flag) they name; the
   failing features are dropped and the batch is compiled again without them.
   A diagnostic located in a shared header (``arm_neon.h``) names probes only
   through its include chain and notes, and the chain names whichever probe
   included the header first: those are suspects, each compiled alone, and
   only the ones that fail alone are dropped;
4. only when a failure cannot be attributed, every candidate is probed on its
   own, in parallel, lowest first, skipping features whose implied features
   already failed.

A diagnostic counts against a feature unless it is a warning located inside
some other file (a compiler header): gcc 12 warns inside ``avx512erintrin.h``,
which must not cost a feature, while "unknown option" or "argument unused"
warnings from the driver must.

Every process goes through one ``Runner`` callable, which tests replace.
"""

from __future__ import annotations

import contextlib
import math
import os
import re
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from . import fsio, rules
from ._record import TYPE_CHECKING, NamedTuple
from .compiler import macro_satisfied, parse_macro_dump, program_prefix
from .errors import CompilerError, InputError
from .flags import mentions, plus_bases, plus_parts
from .records import Outcome
from .tables import DATA_DIR, PROBES_DIR, Table

if TYPE_CHECKING:  # typing, dataclasses and concurrent.futures (logging) cost a cold configure ~10 ms
    from concurrent.futures import Future, ThreadPoolExecutor
    from typing import IO, Any, Callable, Iterable, Iterator, Mapping, Sequence

__all__ = ["SCRATCH_MARK", "ProcResult", "Runner", "run_process", "Scratch", "Session", "Outcome", "probe_features",
           "diagnose", "timeout_from_env", "describe_status", "flag_readings", "read_macros"]

DEFAULT_TIMEOUT = 120.0
MAX_TIMEOUT = 86400.0  # a day: beyond it the OS wait calls overflow (OverflowError), and no probe needs it


class ProcResult(NamedTuple):
    returncode: int
    output: str

    def first_line(self, default: str = "") -> str:
        """The first non-blank line of the output: what a one-line error quotes."""
        return next((ln.strip() for ln in self.output.splitlines() if ln.strip()), default)


if TYPE_CHECKING:
    Runner = Callable[[Sequence[str], float], ProcResult]
else:
    Runner = "Callable[[Sequence[str], float], ProcResult]"  # typing is not imported at run time


def run_process(argv: Sequence[str], timeout: float) -> ProcResult:
    """Run one compiler process: no shell, C locale, merged output, bounded time and output.

    The compiler gets a session (process group) of its own, so a timeout, an interrupt or a
    stopped ``Scratch`` ends its children (``cc1``, a launcher's compiler) too.  Its output is
    read in chunks; past ``fsio.LIMITS.compiler_output`` bytes it is dropped (a compiler printing 200 MB of
    warnings costs the time to drain the pipe, not the memory).
    """
    env = dict(os.environ, LC_ALL="C", LANG="C", LANGUAGE="C")
    env.pop("CCACHE_DISABLE", None)
    try:
        proc = subprocess.Popen(
            list(argv), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT, env=env, start_new_session=True,
        )
    except FileNotFoundError as exc:
        raise CompilerError(f"compiler not found: '{argv[0]}' ({exc.strerror}); set CC or pass --cc") from exc
    except PermissionError as exc:
        raise CompilerError(f"compiler '{argv[0]}' is not executable ({exc.strerror})") from exc
    except OSError as exc:
        raise CompilerError(f"cannot run compiler '{argv[0]}': {exc.strerror or exc}; "
                            "check that it is a program for this machine") from exc
    scratch: Scratch | None = getattr(_current, "scratch", None)
    out: _Output | None = None
    try:
        assert proc.stdout is not None
        out = _Output(proc.stdout)
        if scratch is not None and not scratch.started(proc):
            raise CompilerError("stopped: another compiler process failed or the helper was interrupted")
        deadline = time.monotonic() + timeout
        # The pipe closes when the compiler (and any child still holding it) is done: a blocking
        # wait on the reader, where Popen.wait(timeout) polls with sleeps of up to 50 ms and so
        # notices a 0.2 s compile about 30 ms late.
        if not out.join(timeout):
            raise subprocess.TimeoutExpired(list(argv), timeout)
        proc.wait(timeout=max(0.0, deadline - time.monotonic()))
    except subprocess.TimeoutExpired as exc:
        _kill(proc, out)
        raise CompilerError(
            f"compiler '{argv[0]}' did not finish within {timeout:g} s; "
            "check that it works, or raise CCOPT_PROBE_TIMEOUT"
        ) from exc
    except BaseException:
        _kill(proc, out)
        raise
    finally:
        if scratch is not None:
            scratch.finished(proc)
    return ProcResult(proc.returncode, out.text() if out is not None else "")


class _Output:
    """A compiler's merged output, read by a thread in chunks, at most ``fsio.LIMITS.compiler_output`` bytes kept."""

    def __init__(self, stream: IO[bytes]) -> None:
        self.stream = stream
        self.head = bytearray()
        self.dropped = 0
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self) -> None:
        fd = self.stream.fileno()
        while True:
            try:
                chunk = os.read(fd, 1 << 16)
            except OSError:
                return
            if not chunk:
                return
            room = max(0, fsio.LIMITS.compiler_output - len(self.head))
            self.head += chunk[:room]
            self.dropped += len(chunk) - min(room, len(chunk))

    def join(self, timeout: float) -> bool:
        """Wait until the pipe is closed (True) or ``timeout`` has passed (False)."""
        self.thread.join(timeout)
        if self.thread.is_alive():
            return False
        self.stream.close()
        return True

    def text(self) -> str:
        text = self.head.decode("utf-8", errors="replace")
        if self.dropped:
            text += f"\n[{self.dropped} more bytes of compiler output were dropped]\n"
        return text


def _killpg(proc: subprocess.Popen[bytes]) -> None:
    try:
        if hasattr(os, "killpg"):
            os.killpg(proc.pid, signal.SIGKILL)
        else:  # pragma: no cover - Windows has no process groups of this kind
            proc.kill()
    except OSError:
        pass


def _kill(proc: subprocess.Popen[bytes], out: _Output | None = None) -> None:
    """Kill the compiler's whole process group, then reap it."""
    _killpg(proc)
    proc.wait()
    if out is not None:
        out.join(5.0)  # a grandchild in a session of its own may still hold the pipe: the daemon reader waits


def timeout_from_env() -> float:
    """``CCOPT_PROBE_TIMEOUT`` (seconds per compiler process), or the default."""
    text = os.environ.get("CCOPT_PROBE_TIMEOUT", "").strip()
    if not text:
        return DEFAULT_TIMEOUT
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value > 0):
        raise InputError(f"CCOPT_PROBE_TIMEOUT: '{text[:40]}' is not a positive, finite number of seconds; "
                         f"unset it to use the default ({DEFAULT_TIMEOUT:g})")
    if value > MAX_TIMEOUT:
        print(f"ccopt-meson: warning: CCOPT_PROBE_TIMEOUT: '{text[:40]}' seconds is more than the maximum, "
              f"{MAX_TIMEOUT:g} (a day); using {MAX_TIMEOUT:g}", file=sys.stderr)
        return MAX_TIMEOUT
    return value


def describe_status(returncode: int) -> str:
    """``exit status 1``, or ``killed by signal SIGSEGV`` for a negative return code."""
    if returncode >= 0:
        return f"exit status {returncode}"
    try:
        name = signal.Signals(-returncode).name
    except ValueError:
        name = str(-returncode)
    return f"killed by signal {name}"


# --------------------------------------------------------------------------- diagnostics

_LOCATED = re.compile(
    r"^(?P<file>.+?)(?::(?P<line>\d+)(?::\d+)?|\((?P<mline>\d+)(?:,\d+)?\))\s*:\s*"
    r"(?P<sev>fatal error|error|warning|note|remark)\b"
)
_CONTEXT = re.compile(r"^(In file included from |\s+from |.*: In function |.*: At top level:|\s*\|)|^\s*\d*\s*\|")
_BAD_WORDS = re.compile(r"\b(error|warning)\b", re.IGNORECASE)


class Diagnosis:
    def __init__(self) -> None:
        self.bad = False
        self.attributed: dict[str, str] = {}
        self.unattributed: list[str] = []
        # attributed by a diagnostic located outside every probe (in a shared header such as arm_neon.h): the
        # probe named in its include chain or notes may be innocent, so these are re-checked on their own
        self.suspects: set[str] = set()


def _blocks(lines: Sequence[str]) -> list[list[str]]:
    """Group output into diagnostics: context lines, a primary line, its notes."""
    blocks: list[list[str]] = []
    pending: list[str] = []
    for line in lines:
        m = _LOCATED.match(line)
        if m and m.group("sev") in ("note", "remark"):
            (blocks[-1] if blocks else pending).append(line)
        elif m or (_BAD_WORDS.search(line) and not _CONTEXT.match(line)):
            blocks.append(pending + [line])
            pending = []
        else:
            pending.append(line)
    return blocks


def diagnose(
    output: str,
    returncode: int,
    probe_owner: Mapping[str, str],
    flag_owner: Mapping[str, Sequence[str]],
) -> Diagnosis:
    """Classify a compiler's output; attribute failures to probe files or flags."""
    diag = Diagnosis()
    diag.bad = returncode != 0
    # clang prints an include chain only when it differs from the previous diagnostic's: a header's later
    # diagnostics name no probe, and count against the probes its first one's chain named
    header_owners: dict[str, list[str]] = {}
    for block in _blocks(output.splitlines()):
        primary = next((ln for ln in block if _LOCATED.match(ln) or _BAD_WORDS.search(ln)), block[-1])
        m = _LOCATED.match(primary)
        if m and m.group("sev") == "warning" and not any(p in m.group("file") for p in probe_owner):
            continue  # a warning inside the compiler's own headers
        if m is None and not _BAD_WORDS.search(primary):
            continue
        diag.bad = True
        text = "\n".join(block)
        owners = [name for path, name in probe_owner.items() if path in text]
        header = m.group("file") if m is not None and not any(p in m.group("file") for p in probe_owner) else None
        if header is not None and not owners:
            owners = header_owners.get(header, [])
        if owners and header is not None:
            diag.suspects.update(owners)
            header_owners.setdefault(header, owners)
        if not owners:
            owners = [n for flag, names in flag_owner.items() if mentions(text, flag) for n in names]
        reason = primary.strip()
        if owners:
            for name in dict.fromkeys(owners):
                diag.attributed.setdefault(name, reason)
        else:
            diag.unattributed.append(reason)
    if diag.bad and not diag.attributed and not diag.unattributed:
        diag.unattributed.append(f"compiler failed without a message ({describe_status(returncode)})")
    return diag


# --------------------------------------------------------------------------- session


STALE_AFTER = 2 * 86400.0  # seconds: longer than any run can take (MAX_TIMEOUT per compiler process)
# mkdtemp's names: the prefix, then 8 of [a-z0-9_]; and inside, the mark file written at creation
_STALE_NAME = re.compile(r"ccopt-(\d+)-[a-z0-9_]{8}")
SCRATCH_MARK = ".ccopt-scratch"


def _sweep_stale_scratch() -> None:
    """Remove scratch directories a killed helper (SIGKILL cannot be caught) left in the temp dir.

    Only ours: mkdtemp's exact name pattern and our mark file inside (a user's ``ccopt-2024-notes/``
    is neither), owned by this user, untouched for two days, and whose helper is gone: a directory of
    a live helper in another PID namespace is younger than that.
    """
    if not hasattr(os, "geteuid"):  # pragma: no cover - Windows cleans its temp dir itself
        return
    top = Path(tempfile.gettempdir())
    try:
        entries = list(os.scandir(top))
    except OSError:
        return
    cutoff = time.time() - STALE_AFTER
    for entry in entries:
        m = _STALE_NAME.fullmatch(entry.name)
        if m is None:
            continue
        try:
            st = entry.stat(follow_symlinks=False)
        except OSError:
            continue
        if stat.S_ISDIR(st.st_mode) and st.st_uid == os.geteuid() and st.st_mtime < cutoff \
                and not fsio.running(int(m.group(1))) and _marked(os.path.join(entry.path, SCRATCH_MARK)):
            shutil.rmtree(entry.path, ignore_errors=True)


def _marked(path: str) -> bool:
    """Is ``path`` our scratch mark (a regular file holding the mark, not a link)?"""
    try:
        return not os.path.islink(path) and fsio.read_head(path, 512) == fsio.MARK.encode()
    except OSError:
        return False


_current = threading.local()  # the Scratch whose process the calling thread is running (run_process reads it)


class Scratch:
    """A scratch directory, the process runner and the count of processes started (shared by threads).

    ``stop()`` (also run by ``close()``) kills every compiler still running for it and refuses new
    ones: an interrupted parallel fallback ends at once instead of waiting for its workers' timeouts.
    """

    def __init__(self, runner: Runner | None = None, timeout: float | None = None, limit: int | None = None) -> None:
        self.runner: Runner = runner or run_process
        self.timeout = timeout or timeout_from_env()
        self.processes = 0
        self.limit = limit  # at most this many processes; one more is a CompilerError
        self._lock = threading.Lock()
        self._live: set[subprocess.Popen[bytes]] = set()
        self._stopped = False
        _sweep_stale_scratch()
        try:
            self.dir = Path(tempfile.mkdtemp(prefix=f"ccopt-{os.getpid()}-"))
        except OSError as exc:
            raise CompilerError(f"cannot create a scratch directory for the probes in {tempfile.gettempdir()}: "
                                f"{exc.strerror}; free space there or point TMPDIR at another directory") from exc
        # what the sweep of a later run looks for before it removes anything
        self.write(self.dir / SCRATCH_MARK, fsio.MARK.encode())
        self._n = 0

    def close(self) -> None:
        self.stop()
        shutil.rmtree(self.dir, ignore_errors=True)

    def write(self, path: Path, data: bytes) -> None:
        """A file of the scratch directory; a full disk (or any write error) is one CompilerError line."""
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            with open(path, "wb") as fh:
                fh.write(data)
        except OSError as exc:
            self.close()
            raise CompilerError(f"cannot write the probes' scratch directory {self.dir}: {exc.strerror}; free "
                                "space there or point TMPDIR at another directory") from exc

    def __enter__(self) -> Scratch:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def next_path(self, suffix: str) -> Path:
        with self._lock:
            self._n += 1
            return self.dir / f"p{self._n}{suffix}"

    def run(self, argv: Sequence[str]) -> ProcResult:
        with self._lock:
            if self._stopped:
                raise CompilerError("stopped: another compiler process failed or the helper was interrupted")
            if self.limit is not None and self.processes >= self.limit:
                raise CompilerError(f"stopped: this scratch runs at most {self.limit} compiler processes")
            self.processes += 1
        _current.scratch = self
        try:
            return self.runner(argv, self.timeout)
        finally:
            _current.scratch = None

    def started(self, proc: subprocess.Popen[bytes]) -> bool:
        """Register a running compiler; False (the caller kills it) once this scratch is stopped."""
        with self._lock:
            if not self._stopped:
                self._live.add(proc)
            return not self._stopped

    def finished(self, proc: subprocess.Popen[bytes]) -> None:
        with self._lock:
            self._live.discard(proc)

    def stop(self) -> None:
        """Kill the process groups of every compiler still running, and start no more."""
        with self._lock:
            self._stopped = True
            live = list(self._live)
        for proc in live:
            _killpg(proc)


@contextlib.contextmanager
def _pool(scratch: Scratch, workers: int) -> Iterator[ThreadPoolExecutor]:
    """A thread pool that, when the caller is interrupted (Ctrl-C, SIGTERM) or fails, stops the
    scratch's compilers first, so shutting down does not wait for the workers' timeouts."""
    from concurrent.futures import ThreadPoolExecutor  # the fallback only

    pool = ThreadPoolExecutor(max_workers=max(1, workers))
    try:
        yield pool
    except BaseException:
        scratch.stop()
        pool.shutdown(wait=True, cancel_futures=True)
        raise
    pool.shutdown(wait=True)


class Session:
    """One compiler (command, the user's args, language, driver syntax) in a scratch directory."""

    def __init__(self, scratch: Scratch, command: Sequence[str], args: Sequence[str], lang: str,
                 driver: Mapping[str, Any]) -> None:
        self.scratch = scratch
        self.command = list(command)  # as given: what messages name
        self.lang = lang
        self.driver = driver
        # the command's own arguments (CC="clang -ftime-trace") are the user's args too, filtered alike
        self.programs = program_prefix(self.command)
        self.args = self._probe_args([*self.command[len(self.programs):], *args])
        self._staged: dict[Path, Path] = {}
        self._stage_lock = threading.Lock()

    def _probe_args(self, args: Sequence[str]) -> list[str]:
        """The user's args minus warning options and the options that name or write files (per driver,
        ``probe_drop_args``): those change no code, and a user's ``-o FILE``, ``-MJ FILE`` or ``-ftime-trace``
        must not redirect a probe's output, overwrite the user's file or litter the directory Meson runs in."""
        drop = [re.compile(p) for p in self.driver.get("probe_drop_args", ())]
        with_value = [re.compile(p) for p in self.driver.get("probe_drop_args_with_value", ())]
        out: list[str] = []
        skip = False
        for a in args:
            if skip:
                skip = False
            elif any(p.search(a) for p in with_value):
                skip = True
            elif not any(p.search(a) for p in drop):
                out.append(a)
        return out

    def _next(self, suffix: str) -> Path:
        return self.scratch.next_path(suffix)

    def run(self, extra: Sequence[str]) -> ProcResult:
        return self.scratch.run([*self.programs, *self.args, *extra])

    def clean(self, text: str) -> str:
        """Make compiler output deterministic: no scratch or install paths."""
        text = text.replace(str(self.scratch.dir) + os.sep, "").replace(str(PROBES_DIR) + os.sep, "probes/")
        return text.replace(str(DATA_DIR) + os.sep, "")

    def _source(self, source: Path) -> list[str]:
        """The language options and the source file (joined to the option that holds ``{}``)."""
        lang = [str(part) for part in self.driver["lang"][self.lang]]
        joined = [part.replace("{}", str(source)) for part in lang]
        return joined if joined != lang else [*lang, str(source)]

    def dump_macros(self, flags: Sequence[str]) -> tuple[dict[str, str] | None, ProcResult]:
        """Predefined macros with ``flags``; None when the flags are refused."""
        dump = self.driver.get("macro_dump")
        if not dump:
            return None, ProcResult(1, "this compiler cannot dump its predefined macros")
        src = self._next(".c")
        self.scratch.write(src, b"\n")
        res = self.run([*flags, *dump, *self._source(src)])
        diag = diagnose(res.output.replace("#define", ""), res.returncode, {}, {})
        if diag.bad:  # the real status: a compiler may exit 0 and still print a diagnostic
            return None, ProcResult(res.returncode, self.clean(res.output))
        return parse_macro_dump(res.output), res

    def compile(self, source: Path, flags: Sequence[str], listing: Path | None = None) -> ProcResult:
        """Compile ``source`` to an object; ``listing``: where the assembler also writes its listing
        (the driver's ``asm_listing``)."""
        obj = self._next(str(self.driver["obj_suffix"]))
        out = [part.replace("{out}", str(obj)) for part in self.driver["output"]]
        if listing is not None:
            out += [part.replace("{out}", str(listing)) for part in self.driver["asm_listing"]]
        res = self.run([*flags, *self.driver["compile"], *self._source(source), *out])
        if res.returncode == 0 and not obj.exists():
            # a "compiler" that succeeds without compiling (e.g. `true`) must not pass every probe
            return ProcResult(1, res.output + f"{self.command[0]}: error: exited 0 but wrote no object file\n")
        return res

    def stage(self, probe: Path) -> Path:
        """The probe's copy in the scratch directory, under the name it is included by.

        A compiler writes the path of every file it reads into its output (``# line`` markers in
        the assembly): gcc's gas stops at a ``"`` in such a path.  The package and a project may
        live anywhere, so no probe is compiled from there; the scratch's own path is ours.
        """
        with self._stage_lock:
            copy = self._staged.get(probe)
            if copy is None:
                try:  # a project's probe is the user's input: read like every input, bounded, regular files only
                    data = fsio.read_bounded(probe, fsio.LIMITS.probe_source, "probe source")
                except (FileNotFoundError, NotADirectoryError) as exc:
                    raise InputError(f"probe source '{fsio.show_path(probe)}' does not exist (it was there when "
                                     "the features were read); configure again") from exc
                copy = self.scratch.dir / "probes" / probe_ref(probe)[0]
                self.scratch.write(copy, data)
                self._staged[probe] = copy
            return copy

    def listed(self, listing: Path) -> list[str] | None:
        """The assembly lines an assembler listing shows, by their line number in the assembly file (what its
        diagnostics name); None when the assembler wrote none."""
        try:
            text = fsio.read_bounded(listing, fsio.LIMITS.compiler_output, "assembler listing")
        except OSError:
            return None
        lines: dict[int, str] = {}
        for row in text.decode(errors="replace").splitlines():
            m = _LISTED.match(row)
            if m and (m.group(2) or int(m.group(1)) not in lines):  # a continuation row of bytes shows no text
                lines[int(m.group(1))] = m.group(2)
        return [lines.get(i, "") for i in range(1, max(lines, default=0) + 1)]

    def assembly(self, source: Path, flags: Sequence[str]) -> list[str]:
        """The lines of the assembly the compiler writes for ``source`` (its driver's ``asm_only``,
        gcc's ``-S``); none where the driver has no such option or the compile fails."""
        spec = self.driver.get("asm_only")
        if not spec:
            return []
        path = self._next(".s")
        out = [part.replace("{out}", str(path)) for part in self.driver["output"]]
        res = self.run([*flags, *spec, *self._source(source), *out])
        if res.returncode != 0 or not path.is_file():
            return []
        return path.read_text(errors="replace").splitlines()

    def write_unit(self, probes: Sequence[Path]) -> tuple[Path, list[str]]:
        """A translation unit including every probe, and the flags that make it find them.

        Probes are included by a name of ours (``x86/avx2.c``; a project probe by its file name),
        which is safe to quote, from the scratch copies (``stage``).
        """
        for p in probes:
            self.stage(p)
        names = [probe_ref(p)[0] for p in probes]
        src = self._next(".c")
        self.scratch.write(src, "".join(f'#include "{name}"\n' for name in names).encode())
        return src, [str(self.driver["include"]).format(self.scratch.dir / "probes")]

    def check_trivial(self) -> None:
        """A compiler that cannot build an empty function is an error, not 'no features'."""
        src = self._next(".c")
        self.scratch.write(src, b"int ccopt_trivial(void) { return 0; }\n")
        res = self.compile(src, [])
        if res.returncode != 0:
            first = ProcResult(res.returncode, self.clean(res.output)).first_line()
            raise CompilerError(
                f"compiler '{' '.join(self.command)}' cannot compile a trivial C file"
                f" ({describe_status(res.returncode)}){': ' + first if first else ''}"
            )


# --------------------------------------------------------------------------- the plan


def probe_ref(probe: Path) -> tuple[str, Path]:
    """(name to include, directory to put on the include path) of a probe source."""
    try:
        return probe.relative_to(PROBES_DIR).as_posix(), PROBES_DIR
    except ValueError:  # a project's own probe: under a directory named by its path, so two check.c differ
        from .digest import sha256

        tag = sha256(os.fsencode(probe)).hexdigest()[:12]
        return f"project/{tag}/{probe.name}", probe.parent


def _prune(table: Table, names: Iterable[str], outcomes: dict[str, Outcome]) -> None:
    """A feature whose implied feature failed fails too, naming the culprit."""
    changed = True
    while changed:
        changed = False
        for n in names:
            if n in outcomes and not outcomes[n].supported:
                continue
            for dep in table.sort(table.closure([n]) - {n}):
                dep_out = outcomes.get(dep)
                if dep_out is not None and not dep_out.supported:
                    outcomes[n] = Outcome(False, f"requires {dep}, which is unsupported")
                    changed = True
                    break


def _owners(table: Table, names: Iterable[str]) -> tuple[dict[str, str], dict[str, list[str]]]:
    probe_owner: dict[str, str] = {}
    flag_owner: dict[str, list[str]] = {}
    for n in names:
        subject = table.subject(n)
        probe_owner[probe_ref(subject.probe)[0]] = n
        for f in subject.flags:
            flag_owner.setdefault(f, []).append(n)
    return probe_owner, flag_owner


def _batch(session: Session, table: Table, features: list[str], extras: list[str],
           outcomes: dict[str, Outcome]) -> bool:
    """Compile candidates together until the rest passes; False if a failure can't be placed."""
    listing_works = bool(session.driver.get("asm_listing"))
    for _ in range(len(features) + len(extras) + 2):
        live = [n for n in features if n not in outcomes]
        live_extras = [e for e in extras if e not in outcomes and table.subject(e).owner in live]
        if not live:
            return True
        probes = [table.subject(n).probe for n in live + live_extras]
        unit, include = session.write_unit(probes)
        listing = session._next(".lst") if listing_works else None
        res = session.compile(unit, [*table.flags_for(live), *include], listing)
        probe_owner, flag_owner = _owners(table, live + live_extras)
        diag = diagnose(res.output, res.returncode, probe_owner, flag_owner)
        if diag.unattributed and listing is not None and not listing.is_file() and str(listing) in res.output:
            listing_works = False  # an assembler refusing GNU as' listing option (Apple's): compile as it knows
            continue
        if diag.unattributed:
            lines = session.listed(listing) if listing is not None else None
            _place_assembler(session, unit, [*table.flags_for(live), *include], diag, probe_owner, lines)
        if not diag.bad:
            for n in live + live_extras:
                outcomes[n] = Outcome(True)
            return True
        if diag.unattributed or not diag.attributed:
            return False
        failed = {n: Outcome(False, session.clean(r)) for n, r in diag.attributed.items() if n not in diag.suspects}
        failed.update(_guilty(session, table, [n for n in diag.attributed if n in diag.suspects]))
        if not failed:  # every suspect compiles on its own: the culprit is elsewhere
            return False
        outcomes.update(failed)
        _prune(table, live, outcomes)
    return False


_ASM_LOCATED = re.compile(r"^(?P<file>.+?\.s):(?P<line>\d+): (?:Error|Warning): (?P<message>.+)$")
_ASM_FUNCTION = re.compile(r"^_?(ccopt_probe_\w+):")
_LISTED = re.compile(r"^\s*(\d+) [^\t]*\t?(.*)$")  # GNU as' listing: line number, address and bytes, the line


def _place_assembler(session: Session, unit: Path, flags: Sequence[str], diag: Diagnosis,
                     probe_owner: Mapping[str, str], lines: list[str] | None = None) -> None:
    """Attribute the assembler's diagnostics to the probe whose function holds the line they name.

    They name only the compiler's temporary assembly file (``/tmp/ccX.s:34: Error: ...``: mingw's
    assembler refusing GCC 12's AMX tile loads, whose ``(long)`` stride is 32-bit on LLP64
    Windows), so the batch could not place them and fell back to one process per feature.  The
    assembler's listing of that very compile (``lines``), or else the same compile with ``-S``,
    shows the assembly; the ``ccopt_probe_<name>`` label above the line names the probe.
    """
    located = [(reason, m) for reason in diag.unattributed if (m := _ASM_LOCATED.match(reason))]
    if lines is None:
        lines = session.assembly(unit, flags) if located else []
    by_function = {f"ccopt_probe_{Path(path).stem}": name for path, name in probe_owner.items()}
    for reason, m in located if lines else ():
        above = reversed(lines[:int(m.group("line"))])
        function = next((f.group(1) for f in map(_ASM_FUNCTION.match, above) if f), "")
        if function in by_function:
            diag.unattributed.remove(reason)
            diag.attributed.setdefault(by_function[function],
                                       f"the assembler refused {function}: {m.group('message').strip()}")


def _guilty(session: Session, table: Table, suspects: list[str]) -> dict[str, Outcome]:
    """The suspects whose probe fails on its own, with their own reason; the others are innocent.

    A diagnostic located in a shared header (``arm_neon.h``) names the first probe that included
    it, whatever feature's code failed: one feature's failure must never cost another whose
    probe compiles on its own.
    """
    if not suspects:
        return {}
    with _pool(session.scratch, min(len(suspects), os.cpu_count() or 1)) as pool:
        alone = dict(zip(suspects, pool.map(lambda n: _one(session, table, n), suspects)))
    return {n: out for n, out in alone.items() if not out.supported}


def _one(session: Session, table: Table, name: str) -> Outcome:
    subject = table.subject(name)
    res = session.compile(session.stage(subject.probe), table.flags_for([subject.owner]))
    probe_owner, flag_owner = _owners(table, [name])
    diag = diagnose(res.output, res.returncode, probe_owner, flag_owner)
    if not diag.bad:
        return Outcome(True)
    reason = next(iter(diag.attributed.values()), None) or (diag.unattributed or ["failed"])[0]
    return Outcome(False, session.clean(reason))


def _one_by_one(session: Session, table: Table, names: list[str], outcomes: dict[str, Outcome]) -> None:
    """Probe each candidate alone, in parallel, lowest interest first, pruning above failures."""
    feats = [n for n in table.sort(n for n in names if table.subject(n).owner == n) if n not in outcomes]
    extras = [n for n in names if table.subject(n).owner != n and n not in outcomes]
    from concurrent.futures import FIRST_COMPLETED, wait

    running: dict[Future[Outcome], str] = {}
    with _pool(session.scratch, os.cpu_count() or 1) as pool:
        while feats or running:
            _prune(table, feats, outcomes)
            feats = [n for n in feats if n not in outcomes]
            for n in list(feats):
                lower = {d for d in table.closure([n]) if table.features[d].interest < table.features[n].interest}
                if lower <= outcomes.keys():
                    running[pool.submit(_one, session, table, n)] = n
                    feats.remove(n)
            if not running:
                break
            done, _ = wait(list(running), return_when=FIRST_COMPLETED)
            for fut in done:
                outcomes[running.pop(fut)] = fut.result()
        ready = [e for e in extras if outcomes.get(table.subject(e).owner, Outcome(False)).supported]
        for e, out in zip(ready, pool.map(lambda e: _one(session, table, e), ready)):
            outcomes[e] = out


def flag_readings(table: Table, names: Iterable[str]) -> tuple[list[str], list[str]]:
    """The features whose flags the compiler is asked about after the batch: those whose own flags are not a
    plain subset of the batch's (merged ``-march=...+ext``: do they enable the feature?), and those whose flags
    ``rules.reads_flags`` cannot read (what do they enable?)."""
    names = list(names)
    union = set(table.flags_for(names))
    odd = [n for n in names if not set(table.flags_for([n])) <= union]
    return odd, [n for n in names if rules.reads_flags(table, n)]


def _check_flags(session: Session, table: Table, names: list[str], outcomes: dict[str, Outcome],
                 args_macros: Mapping[str, str] | None) -> None:
    """Ask the compiler about the flags of the features ``flag_readings`` names, all flag sets at once
    (``read_macros``): a target whose flags do not enable it, or enable a built-in feature its run-time test
    does not check, is not built.  ``args_macros``: the predefined macros under the user's args alone, when a
    dump read them already."""
    odd, read = ([n for n in found if outcomes.get(n, Outcome(False)).supported]
                 for found in flag_readings(table, names))  # the batch's flags are every candidate's
    if not odd and not read:
        return
    if not session.driver.get("macro_dump"):
        # MSVC-style drivers cannot dump macros: compile the feature's own probe with its own flags.  What their
        # flags enable cannot be read: the rows state their implications (docs: "what flags enable").
        workers = max(1, min(len(odd), os.cpu_count() or 1))
        with _pool(session.scratch, workers) as pool:
            for n, out in zip(odd, pool.map(lambda n: _one(session, table, n), odd)):
                if not out.supported:
                    outcomes[n] = out
        _prune(table, names, outcomes)
        return
    known = list(dict.fromkeys(m for b in table.builtin().features.values() for m in b.macros)) if read else []
    wanted: dict[tuple[str, ...], list[str]] = {(): known} if read and args_macros is None else {}
    for n in odd:
        wanted.setdefault(tuple(table.flags_for([n])), []).extend(table.features[n].macros)
    for n in read:  # the macros of what its test does not check: a set needing none the pragma keeps is folded
        specs = [m for b in rules.unchecked(table, n) for m in b.macros]
        wanted.setdefault(tuple(table.flags_for([n])), []).extend(specs)
    args_base = frozenset(m for m in known if macro_satisfied(m, args_macros)) if args_macros is not None else None
    facts = _read_in_two(session, table, read, {k: list(dict.fromkeys(v)) for k, v in wanted.items()}, args_base)
    for n in odd:
        held, reason = facts[tuple(table.flags_for([n]))]
        if held is None:
            outcomes[n] = Outcome(False, reason)
        elif not all(m in held for m in table.features[n].macros):
            outcomes[n] = Outcome(False, f"flags {' '.join(table.flags_for([n]))} do not enable {n}")
    base, why = (args_base, "") if args_base is not None else facts[()] if read else (None, "")
    for n in read:
        held, reason = facts[tuple(table.flags_for([n]))]
        if n in outcomes and not outcomes[n].supported:
            continue
        if held is None or base is None:
            outcomes[n] = Outcome(False, reason if held is None else why)
            continue
        missing = rules.enabled_gaps(table, n, held, base)
        if missing:
            outcomes[n] = Outcome(False, rules.describe_enabled_gap(n, table.features[n].flags, table.spec.id,
                                                                    missing))
    _prune(table, names, outcomes)


def _read_in_two(session: Session, table: Table, read: list[str], wanted: Mapping[tuple[str, ...], list[str]],
                 args_base: frozenset[str] | None) -> dict[tuple[str, ...], tuple[frozenset[str] | None, str]]:
    """``read_macros`` of ``wanted``, the macros the target pragma leaves as the command line set them (the
    driver's ``pragma_keeps``: GCC's cmpxchg16b macro, one of X86_V2's) asked only where they decide: of a row's
    set whose reading holds every other macro of a built-in feature its test does not check, and no gap refuses
    it already, by a dump of that set (and of the user's args alone, when no dump read them).  ``-msse4`` needs
    none; ``-march=x86-64-v2`` in a row that checks POPCNT does."""
    kept = set(session.driver.get("pragma_keeps", ()))
    facts = read_macros(session, {k: [m for m in v if m.partition(">=")[0] not in kept] for k, v in wanted.items()})
    base = args_base if args_base is not None else facts.get((), (None, ""))[0]
    later: dict[tuple[str, ...], list[str]] = {}
    for n in read if kept else ():
        key = tuple(table.flags_for([n]))
        held = facts[key][0]
        if held is None or base is None or rules.enabled_gaps(table, n, held, base):
            continue
        for b in rules.unchecked(table, n):
            ks = [m for m in b.macros if m.partition(">=")[0] in kept]
            if ks and all(m in held for m in b.macros if m not in ks):
                later.setdefault(key, []).extend(ks)
    if later and () in wanted:
        later[()] = [m for m in wanted[()] if m.partition(">=")[0] in kept]
    for key, (held, reason) in read_macros(session, {k: list(dict.fromkeys(v)) for k, v in later.items()}).items():
        before = facts[key][0]
        facts[key] = (None, reason) if held is None or before is None else (before | held, "")
    return facts


def architecture_lines(session: Session, table: Table, args_macros: Mapping[str, str] | None) -> tuple[str, ...]:
    """The bases of the rows' ``+ext`` flags (``-march=armv8.2-a``) whose line, written after the user's
    CPU-selecting args, keeps what those enable, as the compiler says: with the ``+ext`` parts of every row (the
    table's and the built-in ones) the user's args enable, it draws no diagnostic after them and defines every macro
    they define, each number at least as high.  Then that base is the user's architecture or a later one, and our
    flag is the line whole, as numpy's fork writes it (``-mcpu=neoverse-n1`` is ``-march=armv8.2-a+fp16+dotprod+crc``
    to GCC 12; ``-march=armv8-a+crc`` is less than armv8.2-a); otherwise it would lower the user's CPU
    (``-mcpu=neoverse-v1``: armv8.4-a; ``-march=armv8.4-a+crypto``), and our ``+ext`` parts build on the user's flag.
    One macro dump per base, in parallel: a command line, not a ``#pragma GCC target``, which adds to the command
    line's features where a later ``-march`` replaces them."""
    if not table.context or not args_macros or not session.driver.get("macro_dump"):
        return ()
    bases = plus_bases((f for feat in table.features.values() if not feat.disabled for f in feat.flags),
                       table.conflicts)
    if not bases:
        return ()
    rows = [*table.features.values(), *table.builtin().features.values()]
    enabled = [r for r in rows if r.macros and all(macro_satisfied(m, args_macros) for m in r.macros)]
    exts = plus_parts(f for r in sorted(enabled, key=lambda r: (r.interest, r.name))
                      for f in r.flags if plus_bases([f], table.conflicts))
    lines = ["+".join([b, *exts]) for b in bases]
    with _pool(session.scratch, max(1, min(len(lines), os.cpu_count() or 1))) as pool:
        dumps = list(pool.map(lambda line: session.dump_macros([line])[0], lines))
    return tuple(b for b, macros in zip(bases, dumps) if macros is not None and _keeps(args_macros, macros))


def built_alone(session: Session, table: Table, names: Iterable[str]) -> tuple[str, ...]:
    """Those of ``names`` (features whose macros the user's args define) whose probe also builds under the user's
    args alone, without flags of ours: what numpy's fork's ``implicit`` detection asks of its test programs.  GCC 12
    defines the fp16 macros under ``-march=armv8-a+sve`` and still refuses arm_neon.h's fp16 intrinsics on that
    armv8.0 base, so ASIMDHP is then not the baseline: it is dispatched, on a line of its own.  Asked only of a
    feature whose flags meet the user's under a conflict rule (ours would replace theirs: ``-march=`` against
    ``-march=``/``-mcpu=``); one compile for them all, none without them (``-march=haswell`` and AVX2's ``-mavx2``)."""
    names = list(names)
    rules = [(re.compile(r["match"]), re.compile(r.get("fold_into", r["match"]))) for r in table.conflicts]
    meets = [n for n in names if n in table.features and any(
        ours.search(f) and any(ours.search(c) or host.search(c) for c in table.context)
        for f in table.features[n].flags for ours, host in rules)]
    if not meets:
        return tuple(names)
    bare = table._replace(features={n: f._replace(flags=()) for n, f in table.features.items()}, context=(),
                          lines=(), closures={})
    outcomes = probe_features(session, bare, meets)
    return tuple(n for n in names if n not in meets or outcomes.get(n, Outcome(False)).supported)


def _keeps(theirs: Mapping[str, str], ours: Mapping[str, str]) -> bool:
    """Does ``ours`` define every macro of ``theirs``, each whole number at least at its value?"""
    for name, value in theirs.items():
        if name not in ours:
            return False
        try:
            if int(ours[name].rstrip("uUlL"), 0) < int(value.rstrip("uUlL"), 0):
                return False
        except ValueError:  # not a number: defined is enough
            continue
    return True


def read_macros(session: Session, wanted: Mapping[tuple[str, ...], Sequence[str]]
                ) -> dict[tuple[str, ...], tuple[frozenset[str] | None, str]]:
    """For each flag set, the macro specs of ``wanted`` (``NAME``, ``NAME>=N``) that hold with it, as the compiler
    says; None (and the compiler's line) where it refuses the flags.

    A compiler that updates its target macros after ``#pragma GCC target`` (the driver's ``target_pragma``: GCC;
    clang keeps the command line's) answers for every set in one compile: a section per set, ``-mX`` flags as the
    pragma's ``X``, ``-D``/``-U`` as ``#define``/``#undef``.  A set the pragma cannot state, that needs a macro
    the pragma leaves alone (the driver's ``pragma_keeps``), or whose section draws a diagnostic, and every set
    of another compiler, gets one predefined-macro dump of its own."""
    out: dict[tuple[str, ...], tuple[frozenset[str] | None, str]] = {}
    if session.driver.get("target_pragma"):
        out.update(_read_folded(session, wanted))
    rest = [k for k in wanted if k not in out]
    if rest:
        with _pool(session.scratch, max(1, min(len(rest), os.cpu_count() or 1))) as pool:
            dumps = list(pool.map(lambda k: session.dump_macros(list(k)), rest))
        for k, (macros, res) in zip(rest, dumps):
            out[k] = ((None, session.clean(res.first_line("flags refused"))) if macros is None else
                      (frozenset(m for m in wanted[k] if macro_satisfied(m, macros)), ""))
    return out


_PRAGMA_SAFE = re.compile(r"^[A-Za-z0-9_.,=+-]+$")
_DEFINE = re.compile(r"^-([DU])([A-Za-z_]\w*)(?:=(.*))?$")
_FACT = re.compile(r"ccopt-fact (\d+) (\d+)")


def _section(i: int, flags: Sequence[str], specs: Sequence[str]) -> list[str] | None:
    """The lines that read ``specs`` under ``flags`` after the command line's; None where a flag is neither
    ``-mX`` nor ``-D``/``-U``."""
    target, macros = [], []
    for f in flags:
        m = _DEFINE.match(f)
        if m and (m.group(3) is None or "\n" not in m.group(3)):
            macros.append(m)
        elif f.startswith("-m") and len(f) > 2 and _PRAGMA_SAFE.match(f[2:]):
            target.append(f'"{f[2:]}"')
        else:
            return None
    lines = ["#pragma GCC push_options"] + ([f"#pragma GCC target({', '.join(target)})"] if target else [])
    for m in macros:
        lines += [f'#pragma push_macro("{m.group(2)}")', f"#undef {m.group(2)}"]
        lines += [f"#define {m.group(2)} {1 if m.group(3) is None else m.group(3)}"] if m.group(1) == "D" else []
    for k, spec in enumerate(specs):
        name, sep, bound = spec.partition(">=")
        cond = f"defined({name})" + (f" && ({name}) >= {int(bound)}" if sep else "")
        lines += [f"#if {cond}", f'#pragma message "ccopt-fact {i} {k}"', "#endif"]
    lines += [f'#pragma pop_macro("{m.group(2)}")' for m in reversed(macros)]
    return [*lines, "#pragma GCC pop_options"]


def _read_folded(session: Session, wanted: Mapping[tuple[str, ...], Sequence[str]]
                 ) -> dict[tuple[str, ...], tuple[frozenset[str] | None, str]]:
    """The sets of ``wanted`` one compile with a section each reads (see ``read_macros``); a set left out is
    read otherwise."""
    keys = list(wanted)
    lines: list[str] = []
    spans: dict[int, range] = {}
    kept = set(session.driver.get("pragma_keeps", ()))
    for i, k in enumerate(keys):
        stated = all(_PRAGMA_SAFE.match(s.replace(">=", "")) and s.partition(">=")[0] not in kept for s in wanted[k])
        sec = _section(i, k, wanted[k]) if stated else None
        if sec is not None:
            spans[i] = range(len(lines) + 1, len(lines) + len(sec) + 1)
            lines += sec
    if not spans:
        return {}
    src = session._next(".c")
    session.scratch.write(src, "".join(f"{ln}\n" for ln in lines).encode())
    res = session.compile(src, [])
    located = [_LOCATED.match(ln) for ln in res.output.splitlines()]
    spoiled = {i for m in located if m and m.group("sev") != "note" and src.name in m.group("file")
               for i, span in spans.items() if int(m.group("line") or m.group("mline")) in span}
    if res.returncode != 0 and not spoiled:  # a failure no section explains: read every set otherwise
        return {}
    held: dict[int, set[str]] = {i: set() for i in spans}
    for fact in _FACT.finditer(res.output):
        i, spec = int(fact.group(1)), int(fact.group(2))
        if i in held and spec < len(wanted[keys[i]]):
            held[i].add(wanted[keys[i]][spec])
    return {keys[i]: (frozenset(h), "") for i, h in held.items() if i not in spoiled}


def probe_features(session: Session, table: Table, names: Iterable[str],
                   known: Mapping[str, Outcome] | None = None,
                   args_macros: Mapping[str, str] | None = None) -> dict[str, Outcome]:
    """Outcome of every feature in ``names`` (closed under implication) and their extra checks.

    ``known`` holds outcomes an earlier run with the same compiler and args found; only the
    rest is probed (a new request re-probes what it adds, nothing else).  ``args_macros``: the
    compiler's predefined macros under the user's args, when the caller has them.
    """
    wanted = table.sort(table.closure(names))
    extras = [e for n in wanted for e in table.features[n].extra_checks if e in table.extra_checks]
    known = {n: o for n, o in (known or {}).items() if n in wanted or n in extras}
    outcomes: dict[str, Outcome] = dict(known)
    for n in wanted:
        if table.features[n].disabled:
            outcomes[n] = Outcome(False, table.features[n].disabled or "")
    _prune(table, wanted, outcomes)
    fresh = [n for n in wanted if n not in outcomes]
    if not fresh and all(e in outcomes for e in extras):
        return outcomes
    if not _batch(session, table, wanted, extras, outcomes):
        session.check_trivial()
        for n in list(outcomes):
            if n not in known and (outcomes[n].supported or n in extras):
                del outcomes[n]
        _one_by_one(session, table, [n for n in wanted if n not in outcomes] + extras, outcomes)
    _check_flags(session, table, fresh, outcomes, args_macros)
    for e in extras:
        owner = table.subject(e).owner
        if not outcomes.get(owner, Outcome(False)).supported:
            outcomes[e] = Outcome(False, f"requires {owner}, which is unsupported")
    return outcomes
