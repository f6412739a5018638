"""The large jars of an installed wheel (Hadoop, S3A, Cassandra, Hive's metastore, YCSB), fetched from Maven Central
on first use into a per-user cache, each checked against Maven's .sha1, or all of a part at once (`storbench fetch`).

The wheel lists each classpath it needs (``_bundle/maven/MODULE.txt``, written by hatch_build.py from the clone's
resolved classpaths: one ``PATH SHA1 SIZE`` line per jar, PATH as Maven lays it out); storbench's own small jars
are in the wheel itself (``_bundle/jars``). In a clone nothing is fetched here: scripts/setup.sh builds the parts
with Maven (buildparts.py) and ``classpath`` answers None.

A cached jar is checked again where it is used: its size on every use, and its sha1 whenever the file changed since
it was last found whole (the size and modification time of that check are kept beside it, ``JAR.checked``), so a
damaged jar is fetched again instead of failing a run later; ``storbench fetch`` hashes every cached jar anew.
"""

from __future__ import annotations

import hashlib
import os
import re
import sys
import tempfile
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from storbench.binaries import bundled, checkout
from storbench.buildparts import FETCHED as PARTS  # what `storbench fetch PART` takes: a part -> its classpaths
from storbench.buildparts import PARTS as DESCRIPTIONS, with_classpath
from storbench.errors import EngineError, InputError

REPOSITORY_ENV = "STORBENCH_MAVEN_REPO"
CENTRAL = "https://repo1.maven.org/maven2"
TIMEOUT_S = 60
SCHEMES = ("http://", "https://", "file://")
SHA1 = re.compile(r"[0-9a-f]{40}")


@dataclass(frozen=True)
class Artifact:
    path: str  # as Maven lays it out: org/apache/hadoop/hadoop-common/3.4.3/hadoop-common-3.4.3.jar
    sha1: str
    size: int


def cache_dir() -> Path:
    """$XDG_CACHE_HOME/storbench, or ~/.cache/storbench."""
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "storbench"


def artifacts(module: str) -> list[Artifact]:
    """The jars the wheel lists for ``module``; a line that is not ``PATH SHA1 SIZE`` with PATH relative and inside
    the cache (no ``..``, not absolute) is refused in one line: the list decides where files are written."""
    listing = bundled("maven", f"{module}.txt")
    if listing is None:
        raise EngineError(
            f"this installation lists no jars for {module} (the wheel's _bundle/maven/{module}.txt); "
            "reinstall the storbench wheel"
        )
    found = []
    for number, line in enumerate(listing.read_text().splitlines(), 1):
        if not line.strip():
            continue
        where = f"{listing}:{number}"
        fields = line.split()
        if len(fields) != 3 or not SHA1.fullmatch(fields[1]) or not fields[2].isdigit():
            raise EngineError(
                f"{where}: {line.strip()[:120]!r} is not a jar line; allowed: PATH SHA1 SIZE "
                "(a Maven path, 40 hex digits, a byte count); reinstall the storbench wheel"
            )
        path = fields[0]
        parts = path.split("/")
        if path.startswith("/") or "\\" in path or any(p in ("", ".", "..") for p in parts):
            raise EngineError(
                f"{where}: jar path {path!r} would leave the fetch cache; allowed: a relative Maven "
                "path (group/artifact/version/file.jar, no '..', '.' or leading '/'); reinstall the "
                "storbench wheel"
            )
        found.append(Artifact(path, fields[1], int(fields[2])))
    return found


def cached(artifact: Artifact) -> Path:
    return cache_dir() / "maven" / artifact.path


def _stamp(artifact: Artifact) -> Path:
    target = cached(artifact)
    return target.with_name(target.name + ".checked")


def intact(artifact: Artifact, rehash: bool = False) -> bool:
    """The cached jar is there, of the size the wheel recorded, and its sha1 is the recorded one: hashed again
    when ``rehash`` or when the file changed since its last check (``JAR.checked``: the size and mtime then)."""
    try:
        stat = os.stat(cached(artifact))
    except OSError:
        return False
    if stat.st_size != artifact.size:
        return False
    seen = f"{artifact.sha1} {stat.st_size} {stat.st_mtime_ns}"
    if not rehash:
        try:
            if _stamp(artifact).read_text().strip() == seen:
                return True
        except OSError:
            pass
    digest = hashlib.sha1()
    try:
        with open(cached(artifact), "rb") as handle:
            while chunk := handle.read(1 << 20):
                digest.update(chunk)
    except OSError:
        return False
    if digest.hexdigest() != artifact.sha1:
        return False
    try:
        _stamp(artifact).write_text(seen + "\n")
    except OSError:
        pass  # a read-only cache: checked again next time
    return True


def missing(part: str, rehash: bool = False) -> list[Artifact]:
    """The jars of ``part`` not in the cache yet, or damaged there (a wheel install only)."""
    return [a for module in PARTS[part] for a in artifacts(module) if not intact(a, rehash)]


def classpath(module: str) -> str | None:
    """A wheel install: ``module``'s classpath (storbench's own jar first, then the cached jars, fetched now when
    missing); None in a clone, whose classpaths scripts/setup.sh resolves."""
    if checkout():
        return None
    wanted, row = artifacts(module), with_classpath(module)
    _download(row.part, [a for a in wanted if not intact(a)])
    own = bundled(*row.own_jar[0].split("/")) if row.own_jar else None
    return ":".join([str(own)] * (own is not None) + [str(cached(a)) for a in wanted])


def fetch(part: str) -> str:
    """`storbench fetch PART`: every jar of ``part`` (or of every part: ``all``) in the cache; what was done."""
    parts = list(PARTS) if part == "all" else [part]
    if any(p not in PARTS for p in parts):
        raise InputError(f"fetch: unknown part {part!r}; parts: {', '.join(PARTS)}, all")
    if checkout():  # a clone builds its parts with Maven, as a run would on first use
        from storbench.buildparts import build

        for name in parts:
            build(name)
        return f"built {', '.join(parts)} with scripts/setup.sh (a clone: its Maven builds, not the cache)"
    done = []
    for name in parts:
        todo = missing(name, rehash=True)
        damaged = sum(cached(a).exists() for a in todo)
        _download(name, todo)
        again = f" ({damaged} of them damaged in the cache, fetched again)" if damaged else ""
        done.append(f"{name}: {len(todo)} jar(s) fetched{again}" if todo else f"{name}: already cached, checked")
    return f"{'; '.join(done)} ({cache_dir() / 'maven'})"


def _download(part: str, todo: list[Artifact]) -> None:
    if not todo:
        return
    total = sum(a.size for a in todo)
    for artifact in todo:
        if cached(artifact).exists():
            print(
                f"storbench: {cached(artifact)} is damaged (not the size and sha1 the wheel recorded): "
                "fetching it again",
                file=sys.stderr,
                flush=True,
            )
    print(
        f"storbench: fetching {DESCRIPTIONS[part]}: {len(todo)} jar(s), {total / 1e6:.1f} MB from "
        f"{_repository()} into {cache_dir() / 'maven'}",
        file=sys.stderr,
        flush=True,
    )
    progress = _Progress(len(todo), total)
    for artifact in todo:
        _fetch_one(artifact)
        progress.add(artifact.size)
    progress.close()


def _repository() -> str:
    value = os.environ.get(REPOSITORY_ENV, CENTRAL)
    if not value.startswith(SCHEMES) or len(value.rstrip("/")) <= len(value.split("://")[0]) + 3:
        raise InputError(
            f"{REPOSITORY_ENV}={value!r}: not a repository URL; allowed: {', '.join(SCHEMES)} followed "
            f"by a Maven repository's root (default {CENTRAL})"
        )
    return value.rstrip("/")


def _get(url: str):
    try:
        return urllib.request.urlopen(url, timeout=TIMEOUT_S)
    except (urllib.error.URLError, OSError, ValueError) as exc:
        reason = getattr(exc, "reason", None) or exc
        raise EngineError(
            f"cannot fetch {url}: {reason} (set {REPOSITORY_ENV} to a Maven mirror where Maven "
            "Central is not reachable)"
        ) from None


def _read(answer, url: str) -> bytes:
    try:
        return answer.read(1 << 20)
    except OSError as exc:
        raise EngineError(
            f"cannot fetch {url}: {exc} (set {REPOSITORY_ENV} to a Maven mirror where Maven Central is not reachable)"
        ) from None


def _fetch_one(artifact: Artifact) -> None:
    """One jar into the cache: downloaded beside its place, checked against Maven's .sha1 (and the sha1 the wheel
    recorded), then moved into place; a mismatch leaves nothing behind."""
    url = f"{_repository()}/{artifact.path}"
    with _get(url + ".sha1") as answer:
        said = answer.read().decode("ascii", "replace").split()
    published = said[0].strip().lower() if said else ""
    if not SHA1.fullmatch(published):
        what = f"{published[:60]!r}" if published else "empty"
        raise EngineError(
            f"{url}.sha1: the repository's answer is {what}, not a sha1 (40 hex digits); nothing was "
            f"fetched (check {REPOSITORY_ENV}, or try again)"
        )
    target = cached(artifact)
    digest = hashlib.sha1()
    partial = None
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, partial = tempfile.mkstemp(dir=target.parent, prefix=target.name, suffix=".part")
        with os.fdopen(fd, "wb") as out, _get(url) as answer:
            while chunk := _read(answer, url):
                digest.update(chunk)
                out.write(chunk)
        got = digest.hexdigest()
        if got != published or got != artifact.sha1:
            raise EngineError(
                f"{url}: checksum mismatch: the download's sha1 is {got}, Maven's .sha1 says "
                f"{published}, the wheel recorded {artifact.sha1}; nothing was kept"
            )
        os.replace(partial, target)
        stat = os.stat(target)
        _stamp(artifact).write_text(f"{artifact.sha1} {stat.st_size} {stat.st_mtime_ns}\n")
    except OSError as exc:
        raise EngineError(
            f"cannot write the fetch cache {cache_dir() / 'maven'}: {exc.strerror or exc} "
            f"({exc.filename or target}); set XDG_CACHE_HOME to a writable directory"
        ) from None
    finally:
        if partial is not None and os.path.exists(partial):
            os.unlink(partial)


class _Progress:
    """Jars and MB done: one line rewritten on a terminal, a line per tenth of the bytes otherwise."""

    def __init__(self, count: int, total: int) -> None:
        self.count, self.total, self.done_count, self.done, self.shown = count, max(total, 1), 0, 0, 0
        self.tty = sys.stderr.isatty()

    def add(self, size: int) -> None:
        self.done_count, self.done = self.done_count + 1, self.done + size
        tenth = 10 * self.done // self.total
        if self.tty or tenth > self.shown or self.done_count == self.count:
            self.shown = tenth
            line = f"  {self.done_count}/{self.count} jars, {self.done / 1e6:.1f}/{self.total / 1e6:.1f} MB"
            print(("\r" + line) if self.tty else line, end="" if self.tty else "\n", file=sys.stderr, flush=True)

    def close(self) -> None:
        if self.tty:
            print(file=sys.stderr, flush=True)
