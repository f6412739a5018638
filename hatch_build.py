"""The wheel's build hook (hatchling): a wheel carries what a clone builds with scripts/setup.sh and a pip install
cannot: the native engine binary for this platform, storbench's own small jars and Hive's SQL scripts (under
storbench/_bundle), and the list of every large jar a part needs (``_bundle/maven/MODULE.txt``: Maven path, sha1,
size), which an installed storbench fetches from Maven Central into a per-user cache on first use (storbench/fetch.py).

What it carries and lists is read from the table of build parts (src/storbench/buildparts.tsv). It reuses the
clone's builds: each must be fresh (its set-up stamp matches its sources, as scripts/setup.sh checks); `make dist`
runs the set-up of every part first. The jars' Maven paths are taken relative to the local repository Maven names
itself (not $HOME/.m2: Java takes the home from the password database). An editable install bundles nothing.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

ALLOW_STALE = "STORBENCH_DIST_ALLOW_STALE"
# Maven's help plugin, pinned: the answer where Maven keeps its local repository is Maven's own (its settings, the
# account's home from the password database), not $HOME's; a pinned version is fetched once, then found offline
EVALUATE = "org.apache.maven.plugins:maven-help-plugin:3.5.1:evaluate"


class BundleHook(BuildHookInterface):
    PLUGIN_NAME = "storbench-bundle"

    def initialize(self, version: str, build_data: dict) -> None:
        if self.target_name != "wheel" or version == "editable":
            return
        root = Path(self.root)
        sys.path.insert(0, str(root / "src"))  # the table of build parts, read from the tree being built
        from storbench.buildparts import MODULES, WHEEL_PARTS

        carried = [m for m in MODULES if m.part in WHEEL_PARTS]
        stale = sorted({m.part for m in carried if m.stamp and not _fresh(root, m)})
        if stale and os.environ.get(ALLOW_STALE) == "1":  # tests/test_wheel.py: never rebuilds a shared build
            print(f"hatch_build: bundling builds older than their sources ({', '.join(stale)}): {ALLOW_STALE}=1")
        elif stale:
            raise SystemExit(
                f"hatch_build: not built or older than their sources: {', '.join(stale)}; run "
                f"`make dist` (it runs scripts/setup.sh --part NAME for each first)"
            )
        self._lists = Path(tempfile.mkdtemp(prefix="storbench-dist-"))
        repository = _maven_repository()
        bundle = "storbench/_bundle"
        for module in carried:
            if module.classpath:
                entries = (root / module.resolved).read_text().strip().split(":")
                _write_list(self._lists / f"{module.classpath}.txt", entries, repository)
            for inside, source in module.wheel:
                build_data["force_include"][str(root / source)] = f"{bundle}/{inside}"
        build_data["force_include"][str(self._lists)] = f"{bundle}/maven"
        build_data["pure_python"] = False
        build_data["tag"] = "py3-none-" + sysconfig.get_platform().replace("-", "_").replace(".", "_")

    def finalize(self, version: str, build_data: dict, artifact_path: str) -> None:
        if getattr(self, "_lists", None):
            shutil.rmtree(self._lists, ignore_errors=True)


def _fresh(root: Path, module) -> bool:
    """scripts/setup.sh's own check: the stamp holds the fingerprint of the sources and every product is there."""
    done = subprocess.run(
        ["bash", "-c", f"cat {module.sources} | sha256sum | cut -c1-16"],
        cwd=root,
        capture_output=True,
        text=True,
        check=True,
    )
    stamp = root / module.stamp
    built = all((root / p).exists() and (root / p).stat().st_size > 0 for p in module.products)
    return built and stamp.is_file() and stamp.read_text().strip() == done.stdout.strip()


def _maven_repository() -> Path:
    """Where Maven keeps its local repository, as Maven says (the classpaths scripts/setup.sh resolved are in it)."""
    with tempfile.TemporaryDirectory() as scratch:
        answer = Path(scratch) / "repository.txt"
        try:
            done = subprocess.run(
                [
                    "mvn",
                    "-q",
                    "-B",
                    "-Dstyle.color=never",
                    EVALUATE,
                    "-Dexpression=settings.localRepository",
                    f"-Doutput={answer}",
                ],
                cwd=scratch,
                stdin=subprocess.DEVNULL,
                capture_output=True,
                text=True,
                timeout=600,
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise SystemExit(f"hatch_build: cannot ask Maven where its local repository is: {exc}") from None
        said = answer.read_text().strip() if answer.is_file() else ""
        if done.returncode != 0 or not said:
            lines = [line for line in (done.stdout + done.stderr).splitlines() if line.strip()]
            raise SystemExit(
                f"hatch_build: Maven did not say where its local repository is ({EVALUATE} "
                f"-Dexpression=settings.localRepository): {lines[-1] if lines else f'exit {done.returncode}'}"
            )
        return Path(said)


def _write_list(path: Path, entries: list[str], repository: Path) -> None:
    """One ``MAVEN-PATH SHA1 SIZE`` line per jar of a classpath resolved into the local Maven repository."""
    lines = []
    for entry in entries:
        jar = Path(entry)
        try:
            relative = jar.relative_to(repository)
        except ValueError:
            raise SystemExit(
                f"hatch_build: {jar} is not in Maven's local repository {repository} (as Maven says now); run "
                "`make dist` to resolve the parts again"
            ) from None
        recorded = jar.with_name(jar.name + ".sha1")  # Maven keeps the repository's checksum beside the jar
        sha1 = recorded.read_text().split()[0] if recorded.is_file() else hashlib.sha1(jar.read_bytes()).hexdigest()
        lines.append(f"{relative.as_posix()} {sha1.strip().lower()} {jar.stat().st_size}\n")
    path.write_text("".join(lines))
