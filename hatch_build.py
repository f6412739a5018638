"""The wheel's build hook (hatchling): a wheel carries what a clone builds with scripts/setup.sh and a pip install
cannot: the native engine binary for this platform, storbench's own small jars and Hive's SQL scripts (under
storbench/_bundle), and the list of every large jar a part needs (``_bundle/maven/MODULE.txt``: Maven path, sha1,
size), which an installed storbench fetches from Maven Central into a per-user cache on first use (storbench/fetch.py).

It reuses the clone's builds: each must be fresh (its set-up stamp matches its sources, as scripts/setup.sh checks);
`make dist` runs the set-up of every part first. An editable install (scripts/setup.sh) bundles nothing.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sysconfig
import tempfile
from pathlib import Path

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

# classpath (storbench/fetch.py's module) -> the Maven module whose target/classpath.txt resolves it
CLASSPATHS = {
    "jvm": "jvm",
    "cassandra": "jvm/cassandra",
    "metastore": "jvm/metastore",
    "metastore-client": "jvm/metastore/client",
    "ycsb": "jvm/ycsb",
}
ALLOW_STALE = "STORBENCH_DIST_ALLOW_STALE"
S3A = "jvm/s3a"  # its jars are copied, not listed: its classpath is resolved here, offline, from its pom
# what the wheel carries -> where the clone has it
OWN = {
    "bin/storbench-load": "native/target/release/storbench-load",
    "jars/storbench-jvm.jar": "jvm/target/storbench-jvm-0.1.0.jar",
    "jars/storbench-ycsb.jar": "jvm/ycsb/target/storbench-ycsb-0.1.0.jar",
    "jars/storbench-cassandra.jar": "jvm/cassandra/target/storbench-cassandra-0.1.0.jar",
    "jars/storbench-s3a-stats.jar": "jvm/s3a/target/jars/storbench-s3a-stats.jar",
    "metastore/home": "jvm/metastore/target/home",
    "metastore/CredentialFile.java": "jvm/metastore/src/CredentialFile.java",
}
# part -> (its stamp, the shell that fingerprints its sources): scripts/setup.sh's own freshness checks
FRESH = {
    "native": (
        "native/target/.storbench-built",
        "cat native/Cargo.toml native/Cargo.lock $(find native/storbench-load -type f | sort)",
    ),
    "jvm": ("jvm/target/.storbench-built", "cat jvm/pom.xml $(find jvm/src -type f | sort)"),
    "ycsb": ("jvm/ycsb/target/.storbench-built", "cat jvm/ycsb/pom.xml $(find jvm/ycsb/src -type f | sort)"),
    "s3a": ("jvm/s3a/target/.storbench-built", "cat jvm/s3a/pom.xml jvm/s3a/src/storbench/s3a/*.java"),
    "cassandra": (
        "jvm/cassandra/target/.storbench-resolved",
        "cat jvm/cassandra/pom.xml $(find jvm/cassandra/src -type f | sort)",
    ),
    "metastore": ("jvm/metastore/target/.storbench-resolved", "cat jvm/metastore/pom.xml"),
}


class BundleHook(BuildHookInterface):
    PLUGIN_NAME = "storbench-bundle"

    def initialize(self, version: str, build_data: dict) -> None:
        if self.target_name != "wheel" or version == "editable":
            return
        root = Path(self.root)
        stale = [part for part, (stamp, sources) in FRESH.items() if not _fresh(root, stamp, sources)]
        if stale and os.environ.get(ALLOW_STALE) == "1":  # tests/test_wheel.py: never rebuilds a shared build
            print(f"hatch_build: bundling builds older than their sources ({', '.join(stale)}): {ALLOW_STALE}=1")
        elif stale:
            raise SystemExit(
                f"hatch_build: not built or older than their sources: {', '.join(stale)}; run "
                f"`make dist` (it runs scripts/setup.sh --part NAME for each first)"
            )
        self._lists = Path(tempfile.mkdtemp(prefix="storbench-dist-"))
        repository = Path(os.environ.get("STORBENCH_M2_REPO", Path.home() / ".m2" / "repository"))
        for name, module in CLASSPATHS.items():
            entries = (root / module / "target" / "classpath.txt").read_text().strip().split(":")
            _write_list(self._lists / f"{name}.txt", entries, repository)
        _write_list(self._lists / "s3a.txt", _s3a_classpath(root), repository)
        bundle = "storbench/_bundle"
        build_data["force_include"][str(self._lists)] = f"{bundle}/maven"
        for inside, source in OWN.items():
            build_data["force_include"][str(root / source)] = f"{bundle}/{inside}"
        build_data["pure_python"] = False
        build_data["tag"] = "py3-none-" + sysconfig.get_platform().replace("-", "_").replace(".", "_")

    def finalize(self, version: str, build_data: dict, artifact_path: str) -> None:
        if getattr(self, "_lists", None):
            shutil.rmtree(self._lists, ignore_errors=True)


def _fresh(root: Path, stamp: str, sources: str) -> bool:
    done = subprocess.run(
        ["bash", "-c", f"{sources} | sha256sum | cut -c1-16"], cwd=root, capture_output=True, text=True, check=True
    )
    path = root / stamp
    return path.is_file() and path.read_text().strip() == done.stdout.strip()


def _s3a_classpath(root: Path) -> list[str]:
    """jvm/s3a's runtime jars as Maven resolves them (offline: scripts/setup.sh --part s3a fetched them)."""
    with tempfile.TemporaryDirectory() as scratch:
        out = Path(scratch) / "classpath.txt"
        subprocess.run(
            [
                "mvn",
                "-o",
                "-q",
                "-B",
                "-f",
                str(root / S3A / "pom.xml"),
                "dependency:build-classpath",
                "-Dmdep.includeScope=runtime",
                f"-Dmdep.outputFile={out}",
            ],
            check=True,
            stdout=subprocess.DEVNULL,
        )
        return out.read_text().strip().split(":")


def _write_list(path: Path, entries: list[str], repository: Path) -> None:
    """One ``MAVEN-PATH SHA1 SIZE`` line per jar of a classpath resolved into the local Maven repository."""
    lines = []
    for entry in entries:
        jar = Path(entry)
        try:
            relative = jar.relative_to(repository)
        except ValueError:
            raise SystemExit(
                f"hatch_build: {jar} is not in the local Maven repository {repository} (set STORBENCH_M2_REPO)"
            ) from None
        recorded = jar.with_name(jar.name + ".sha1")  # Maven keeps the repository's checksum beside the jar
        sha1 = recorded.read_text().split()[0] if recorded.is_file() else hashlib.sha1(jar.read_bytes()).hexdigest()
        lines.append(f"{relative.as_posix()} {sha1.strip().lower()} {jar.stat().st_size}\n")
    path.write_text("".join(lines))
