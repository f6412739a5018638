"""The fio engine: job files, running fio, the I/O-engine and O_DIRECT fallback (results: engines.fio_results).

storbench writes fio's job file itself (INI text); the engine (:class:`FioEngine`, a tool engine) runs
``fio --output-format=json --output=FILE JOBFILE`` for a :class:`FioSpec` and reads the result. Nothing here
knows about the run lifecycle; ``storbench.workloads.fio`` drives it.

- Sizes follow fio's own convention: ``4k`` = 4096 bytes, ``1m`` = 1 MiB, a bare
  number is bytes (``kb_base=1024``, fio's default).
- Units out: MB is 10^6 bytes and MB/s is 10^6 bytes per second, as everywhere in
  storbench; latencies are in milliseconds.
- Layouts: fio 3.x writes ``clat_ns``/``lat_ns`` (percentiles only under
  ``clat_ns.percentile``), ``bw_bytes`` and ``io_bytes``; 3.16 has no ``N`` in the
  latency blocks, 3.33 does. fio 2.x's microsecond blocks (``clat``/``lat``) and
  KiB/s ``bw`` are read as a fallback when the 3.x keys are missing.
- With ``group_reporting=1`` fio reports one entry per group (the aggregate);
  without it one entry per job, and the aggregate is computed here: bandwidth, IOPS
  and bytes add up, mean latency is weighted by I/O count and the percentiles are
  taken from the merged latency histograms (``json+`` bins), exactly as fio does.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from storbench.binaries import require
from storbench.engines.base import register
from storbench.engines.fio_job import FioSpec, escape
from storbench.engines.tool import ToolEngine, run_limited
from storbench.errors import EngineError, InputError, WorkloadError

ENGINE_CHAIN = ("io_uring", "libaio", "psync")  # the order a missing engine falls back in


# -- the fio binary ----------------------------------------------------------------------

_VERSION: dict[str, str] = {}
_IOENGINES: dict[str, bool] = {}  # whether this fio has an I/O engine, asked once per process


def fio_binary() -> str:
    return require("fio", " (on Debian/Ubuntu: apt-get install fio)")


def fio_version() -> str:
    """``fio-3.33``; cached per process. fio older than 3.0 is refused (its JSON is different)."""
    binary = fio_binary()
    if binary not in _VERSION:
        try:
            out = subprocess.run([binary, "--version"], capture_output=True, text=True, timeout=30)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise EngineError(f"cannot run {binary} --version: {exc}") from None
        version = out.stdout.strip() or out.stderr.strip()
        numbers = re.search(r"(\d+)\.(\d+)", version)
        if not numbers:
            raise EngineError(f"{binary} --version said {version!r}; is it fio?")
        if int(numbers.group(1)) < 3:
            raise EngineError(f"{binary} is {version}; storbench needs fio 3.0 or newer")
        _VERSION[binary] = version
    return _VERSION[binary]


# -- running ------------------------------------------------------------------------------


@dataclass
class FioRun:
    data: dict[str, Any]  # fio's JSON document
    wall_s: float  # wall time of the fio process (spawn to exit)
    output_path: Path
    job_text: str = ""  # the job file it ran


def _fio_messages(*texts: str) -> list[str]:
    """fio's own error lines, without the 'fio: ' prefix and without JSON."""
    found = []
    for text in texts:
        for line in text.splitlines():
            line = line.strip()
            if line.startswith("fio:"):
                line = line[4:].strip()
            elif not line.lower().startswith(("error", "failed")):
                continue
            if line and line not in found:
                found.append(line)
    return found


def load_json(text: str) -> dict[str, Any]:
    """fio's JSON document; any notice fio printed before or after it is skipped."""
    start = next((m.start() for m in re.finditer(r"(?m)^\{", text)), None)
    if start is None:
        raise ValueError("no JSON document in fio's output")
    data, _end = json.JSONDecoder().raw_decode(text[start:])
    if not isinstance(data, dict) or "jobs" not in data:
        raise ValueError("fio's JSON has no 'jobs'")
    return data


@register
class FioEngine(ToolEngine):
    """fio for raw devices and files (papers 002, 004)."""

    name = "fio"

    def read_version(self) -> str:
        return fio_version()

    def run(self, spec: FioSpec) -> FioRun:
        """Writes the job file and runs fio on it; a failure is one WorkloadError line with fio's own reason."""
        text = spec.text()
        job_file, output_path = spec.workdir / spec.job_file, spec.workdir / spec.output
        job_file.write_text(text)
        timeout = spec.limit_s
        started = time.monotonic()
        try:
            done = self.launch(spec, job_file, output_path, timeout)
        except subprocess.TimeoutExpired:
            raise WorkloadError(
                f"fio did not finish within its {timeout:.0f} s timeout on {job_file.name}; killed it "
                "(a stalled device?)"
            ) from None
        wall = time.monotonic() - started
        output = output_path.read_text() if output_path.exists() else ""
        if done.returncode != 0:
            reasons = _fio_messages(done.stderr, done.stdout, output)
            raise WorkloadError(
                f"fio failed (exit {done.returncode}) on {job_file.name}: "
                + ("; ".join(reasons[:2]) or done.stderr.strip()[:200] or "no message")
            )
        try:
            data = load_json(output)
        except ValueError as exc:
            raise WorkloadError(f"fio's output for {job_file.name} is not readable: {exc}") from None
        failed = [job for job in data["jobs"] if job.get("error")]
        if failed:
            raise WorkloadError(
                f"fio job {failed[0].get('jobname')} failed with error {failed[0]['error']} "
                f"({os.strerror(int(failed[0]['error']))})"
            )
        return FioRun(data, wall, output_path, text)

    def launch(
        self, spec: FioSpec, job_file: Path, output_path: Path, timeout: float | None
    ) -> subprocess.CompletedProcess:
        """The fio process on ``job_file``, writing ``output_path`` (and the job's logs); killed with its forked
        jobs at ``timeout`` (subprocess.TimeoutExpired) or an interrupt."""
        argv = [fio_binary(), f"--output-format={spec.output_format}", f"--output={output_path}", str(job_file)]
        return run_limited(argv, timeout, job_file.parent, self.running)

    def probe(self, engine: str, direct: bool, location: str, is_device: bool) -> tuple[bool, str]:
        """Whether I/O engine ``engine`` with ``direct`` works at ``location`` (:func:`probe_fio`)."""
        return probe_fio(engine, direct, location, is_device)

    def has_ioengine(self, name: str) -> bool:
        """Whether this fio was built with the I/O engine ``name`` (rados: fio's own Ceph client)."""
        if name not in _IOENGINES:
            done = subprocess.run([fio_binary(), f"--enghelp={name}"], capture_output=True, text=True, timeout=30)
            _IOENGINES[name] = done.returncode == 0 and bool(done.stdout.strip())
        return _IOENGINES[name]


# -- engine and O_DIRECT fallback -------------------------------------------------------


@dataclass
class IoChoice:
    """The I/O engine and direct flag that will really be used, and why they differ from the request."""

    requested_engine: str
    requested_direct: bool
    engine: str
    direct: bool
    reasons: list[str] = field(default_factory=list)  # one line per fallback, with fio's reason

    @property
    def fallback(self) -> str:
        """Short text for sample labels; empty when nothing fell back."""
        parts = []
        if self.engine != self.requested_engine:
            parts.append(f"ioengine {self.requested_engine}->{self.engine}")
        if self.direct != self.requested_direct:
            parts.append(f"direct {int(self.requested_direct)}->{int(self.direct)}")
        return ", ".join(parts)

    def labels(self) -> dict[str, str]:
        labels = {"ioengine": self.engine, "direct": str(int(self.direct))}
        if self.fallback:
            labels["fallback"] = self.fallback
        return labels

    def to_dict(self) -> dict[str, Any]:
        return {
            "requested": {"ioengine": self.requested_engine, "direct": int(self.requested_direct)},
            "effective": {"ioengine": self.engine, "direct": int(self.direct)},
            "fallback": self.fallback,
            "reasons": list(self.reasons),
        }


Probe = Callable[[str, bool, str, bool], tuple[bool, str]]
_PROBES: dict[tuple[str, bool, str], tuple[bool, str]] = {}


def _location_key(location: str, is_device: bool) -> str:
    if is_device:
        return os.path.realpath(location)
    try:
        return f"dev:{os.stat(location).st_dev}"  # one probe per filesystem, not per directory
    except OSError:
        return location


def probe_fio(engine: str, direct: bool, location: str, is_device: bool) -> tuple[bool, str]:
    """A tiny real fio run: (works, fio's reason when it does not). Cached per process and filesystem.

    Directories get a 64 KiB write to a hidden file that is removed at once; a device
    is only read (``--readonly``), so probing never changes a device.
    """
    key = (engine, direct, _location_key(location, is_device))
    if key not in _PROBES:
        _PROBES[key] = _probe_uncached(engine, direct, location, is_device)
    return _PROBES[key]


def _probe_uncached(engine: str, direct: bool, location: str, is_device: bool) -> tuple[bool, str]:
    target = location if is_device else os.path.join(location, f".storbench-fio-probe-{os.getpid()}")
    command = [
        fio_binary(),
        "--output-format=json",
        "--name=storbench-probe",
        f"--ioengine={engine}",
        f"--direct={int(direct)}",
        "--bs=4k",
        "--size=64k",
        "--iodepth=1",
        f"--filename={escape(target)}",
    ]
    command += ["--rw=read", "--readonly"] if is_device else ["--rw=write"]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return False, f"probe did not run: {exc}"
    finally:
        if not is_device:
            try:
                os.unlink(target)
            except OSError:
                pass
    if done.returncode == 0:
        try:
            data = load_json(done.stdout)
            if not any(job.get("error") for job in data["jobs"]):
                return True, ""
        except ValueError:
            pass
    reasons = _fio_messages(done.stderr, done.stdout)
    return False, "; ".join(reasons[:2]) or f"fio exited with {done.returncode}"


def clear_probe_cache() -> None:
    _PROBES.clear()


def resolve_io(
    engine: str, direct: bool, location: str, is_device: bool = False, probe: Probe | None = None
) -> IoChoice:
    """The first working (engine, direct) pair: io_uring → libaio → psync, and direct=1 → 0.

    A requested engine is tried as asked first; when it fails with direct=1 but works
    buffered, the filesystem refused O_DIRECT and only ``direct`` falls back.
    """
    probe = probe or probe_fio
    if engine not in ENGINE_CHAIN:
        raise InputError(f"ioengine={engine!r} is not allowed; allowed: {', '.join(ENGINE_CHAIN)}")
    choice = IoChoice(engine, direct, engine, direct)
    failures = []
    for candidate in ENGINE_CHAIN[ENGINE_CHAIN.index(engine) :]:
        works, why = probe(candidate, direct, location, is_device)
        if works:
            choice.engine = candidate
            break
        if direct:
            buffered, _ = probe(candidate, False, location, is_device)
            if buffered:
                choice.engine, choice.direct = candidate, False
                choice.reasons.append(f"direct=1 is refused on {location} ({why}); using buffered I/O (direct=0)")
                break
        failures.append(f"{candidate}: {why}")
    else:
        raise WorkloadError(f"no fio I/O engine works on {location}: " + "; ".join(failures))
    if choice.engine != engine:
        choice.reasons.insert(0, f"ioengine {engine} is unavailable ({'; '.join(failures)}); using {choice.engine}")
    return choice


# -- results -------------------------------------------------------------------------------
