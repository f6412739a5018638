"""The large jars of an installed wheel (Hadoop, S3A, Cassandra, Hive's metastore, YCSB), fetched from Maven Central
on first use into a per-user cache, each checked against Maven's .sha1, or all of a part at once (`storbench fetch`).

The wheel lists each classpath it needs (``_bundle/maven/MODULE.txt``, written by hatch_build.py from the clone's
resolved classpaths: one ``PATH SHA1 SIZE`` line per jar, PATH as Maven lays it out); storbench's own small jars
are in the wheel itself (``_bundle/jars``). In a clone nothing is fetched here: scripts/setup.sh builds the parts
with Maven (buildparts.py) and ``classpath`` answers None.
"""

from __future__ import annotations

import hashlib
import os
import sys
import tempfile
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from storbench.binaries import bundled, checkout
from storbench.buildparts import PARTS as DESCRIPTIONS
from storbench.errors import EngineError, InputError

REPOSITORY_ENV = "STORBENCH_MAVEN_REPO"
CENTRAL = "https://repo1.maven.org/maven2"
# a part (`storbench fetch PART`, scripts/setup.sh --part PART) -> its classpaths, and storbench's own jar of each
PARTS = {"jvm": ("jvm",), "s3a": ("s3a",), "cassandra": ("cassandra",), "metastore": ("metastore", "metastore-client"),
         "ycsb": ("ycsb",)}
OWN_JARS = {"jvm": "storbench-jvm.jar", "s3a": "storbench-s3a-stats.jar", "ycsb": "storbench-ycsb.jar"}
TIMEOUT_S = 60


@dataclass(frozen=True)
class Artifact:
    path: str  # as Maven lays it out: org/apache/hadoop/hadoop-common/3.4.3/hadoop-common-3.4.3.jar
    sha1: str
    size: int


def cache_dir() -> Path:
    """$XDG_CACHE_HOME/storbench, or ~/.cache/storbench."""
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "storbench"


def artifacts(module: str) -> list[Artifact]:
    listing = bundled("maven", f"{module}.txt")
    if listing is None:
        raise EngineError(f"this installation lists no jars for {module} (the wheel's _bundle/maven/{module}.txt); "
                          "reinstall the storbench wheel")
    return [Artifact(path, sha1, int(size)) for path, sha1, size in
            (line.split() for line in listing.read_text().splitlines() if line.strip())]


def cached(artifact: Artifact) -> Path:
    return cache_dir() / "maven" / artifact.path


def missing(part: str) -> list[Artifact]:
    """The jars of ``part`` not in the cache yet (a wheel install only)."""
    return [a for module in PARTS[part] for a in artifacts(module) if not cached(a).is_file()]


def classpath(module: str) -> str | None:
    """A wheel install: ``module``'s classpath (storbench's own jar first, then the cached jars, fetched now when
    missing); None in a clone, whose classpaths scripts/setup.sh resolves."""
    if checkout():
        return None
    wanted = artifacts(module)
    part = next(name for name, modules in PARTS.items() if module in modules)
    _download(part, [a for a in wanted if not cached(a).is_file()])
    own = bundled("jars", OWN_JARS[module]) if module in OWN_JARS else None
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
        todo = missing(name)
        _download(name, todo)
        done.append(f"{name}: {len(todo)} jar(s) fetched" if todo else f"{name}: already cached")
    return f"{'; '.join(done)} ({cache_dir() / 'maven'})"


def _download(part: str, todo: list[Artifact]) -> None:
    if not todo:
        return
    total = sum(a.size for a in todo)
    print(f"storbench: fetching {DESCRIPTIONS[part]}: {len(todo)} jar(s), {total / 1e6:.1f} MB from "
          f"{_repository()} into {cache_dir() / 'maven'}", file=sys.stderr, flush=True)
    progress = _Progress(len(todo), total)
    for artifact in todo:
        _fetch_one(artifact)
        progress.add(artifact.size)
    progress.close()


def _repository() -> str:
    return os.environ.get(REPOSITORY_ENV, CENTRAL).rstrip("/")


def _get(url: str):
    try:
        return urllib.request.urlopen(url, timeout=TIMEOUT_S)
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", None) or exc
        raise EngineError(f"cannot fetch {url}: {reason} (set {REPOSITORY_ENV} to a Maven mirror where Maven "
                          "Central is not reachable)") from None


def _fetch_one(artifact: Artifact) -> None:
    """One jar into the cache: downloaded beside its place, checked against Maven's .sha1 (and the sha1 the wheel
    recorded), then moved into place; a mismatch leaves nothing behind."""
    url = f"{_repository()}/{artifact.path}"
    with _get(url + ".sha1") as answer:
        published = answer.read().decode("ascii", "replace").split()[0].strip().lower()
    target = cached(artifact)
    target.parent.mkdir(parents=True, exist_ok=True)
    digest = hashlib.sha1()
    fd, partial = tempfile.mkstemp(dir=target.parent, prefix=target.name, suffix=".part")
    try:
        with os.fdopen(fd, "wb") as out, _get(url) as answer:
            while chunk := answer.read(1 << 20):
                digest.update(chunk)
                out.write(chunk)
        got = digest.hexdigest()
        if got != published or got != artifact.sha1:
            raise EngineError(f"{url}: checksum mismatch: the download's sha1 is {got}, Maven's .sha1 says "
                              f"{published}, the wheel recorded {artifact.sha1}; nothing was kept")
        os.replace(partial, target)
    finally:
        if os.path.exists(partial):
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
