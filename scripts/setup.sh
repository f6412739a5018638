#!/usr/bin/env bash
# Installs what storbench needs on a fresh Debian-like machine; safe to run again.
#   scripts/setup.sh          what the default job needs: Java, a virtualenv in .venv with storbench and
#                             PySpark. The other parts are built on first use (storbench runs
#                             `scripts/setup.sh --part NAME` and says so) or all at once by --test:
#   scripts/setup.sh --part P one part: jvm (the JVM launchers: MiniDFSCluster for `services up hdfs`,
#                             TestDFSIO), s3a (Spark's S3A jars for s3:// targets), cassandra (its jars, for
#                             `services up cassandra`), metastore (Hive 4.0.1's standalone metastore and the
#                             Hive client Spark loads for it: `services up metastore`, --set catalog=hive),
#                             native (the native load engine, Rust >= 1.88), ycsb
#   scripts/setup.sh --test-fast  what the fast test lane needs (make test-fast): the virtualenv with storbench
#                             and its test extras (pytest) from pip; no Java, no Debian packages, no optional part
#   scripts/setup.sh --check  only check the versions it needs (Python >= 3.11, Java >= 17, cargo for the native
#                             engine against Cargo.lock) and say in one line each what is missing and how to get it
#   scripts/setup.sh --test   every part, and also pytest, Debian's chromium (HTML report tests), fio, sysstat,
#                             prometheus-node-exporter and prometheus (`services up spark`, telemetry), ipmitool
#                             and sushy-tools (power sources), postgresql (the shared results-store tests),
#                             Ceph (mon, osd, mgr, radosgw, rados: `services up ceph`, rados-bench tests),
#                             YCSB core 0.17.0 in jvm/ycsb (the reference of the YCSB generator tests; with
#                             storbench's DataStax Java driver binding, the ycsb workloads' driver=ycsb),
#                             the device lab (--part lab: QEMU, busybox, Debian's generic kernel in lab/target),
#                             and a class-data-sharing archive for the tests' Spark drivers (tests/spark_cds.py)
set -euo pipefail
cd "$(dirname "$0")/.."

want_test=0
want_fast=0
want_check=0
part=""
PYTHON="${PYTHON:-python3}"  # e.g. PYTHON=python3.11 where the system's python3 is older
case "${1:-}" in
  "") ;;
  --test) want_test=1 ;;
  --test-fast) want_fast=1 ;;
  --check) want_check=1 ;;
  --part)
    part="${2:-}"
    case "$part" in jvm|s3a|cassandra|metastore|native|ycsb|lab) ;; *)
      echo "setup: --part '$part': allowed: jvm, s3a, cassandra, metastore, native, ycsb, lab" >&2; exit 2 ;; esac ;;
  *) echo "setup: unknown option '$1'; allowed: --test, --test-fast, --check, --part NAME" >&2; exit 2 ;;
esac
wants() { [ "$want_test" = 1 ] || [ "$part" = "$1" ]; }  # one part, or all of them for the tests

# -- versions: checked before anything is installed; each problem is one line saying how to fix it ------------
version_ge() { [ "$(printf '%s\n%s\n' "$2" "$1" | sort -V | head -1)" = "$2" ]; }  # $1 >= $2
problems=()
check_python() {
  local found
  found="$("$PYTHON" -c 'import sys; print("%d.%d.%d" % sys.version_info[:3])' 2>/dev/null || true)"
  if [ -z "$found" ]; then
    problems+=("Python >= 3.11 is missing ($PYTHON not found): apt-get install python3 python3-venv, or set PYTHON=python3.11")
  elif ! version_ge "$found" 3.11; then
    problems+=("Python >= 3.11 needed, $PYTHON is $found: apt-get install python3.11 python3.11-venv (or pyenv), then PYTHON=python3.11 scripts/setup.sh")
  fi
}
check_java() {  # a missing java is installed below (Debian's openjdk-17); an old one is not replaced silently
  command -v java >/dev/null 2>&1 || return 0
  local found major
  found="$(java -version 2>&1 | sed -n 's/.*version "\([^"]*\)".*/\1/p' | head -1 || true)"
  major="${found%%.*}"; [ "$major" = 1 ] && major="$(echo "$found" | cut -d. -f2)"  # 1.8.0_x is Java 8
  if [ -z "$found" ] || [ "${major:-0}" -lt 17 ] 2>/dev/null; then
    problems+=("Java >= 17 needed, $(command -v java) is ${found:-of an unknown version}: apt-get install openjdk-17-jdk-headless and pick it with update-alternatives --config java (or put a JDK 17+ first in PATH)")
  fi
}
native_rust_needs() {  # the Rust the native engine needs: Cargo.lock's format, and the cql driver (scylla 1.9)
  local lock_format lock_need=1.53.0 need=1.88.0
  lock_format="$(sed -n 's/^version = \([0-9]*\)$/\1/p' native/Cargo.lock | head -1)"
  [ "${lock_format:-0}" -ge 4 ] && lock_need=1.78.0  # lock file format 4 is read by cargo >= 1.78
  version_ge "$lock_need" "$need" && need="$lock_need"
  echo "$need"
}
check_cargo() {
  local need found
  need="$(native_rust_needs)"
  found="$(cargo --version 2>/dev/null | sed -n 's/^cargo \([0-9][0-9.]*\).*/\1/p' || true)"
  if [ -z "$found" ]; then
    problems+=("cargo >= $need is missing (the native load engine, native/Cargo.lock): install Rust with rustup (https://rustup.rs: curl https://sh.rustup.rs -sSf | sh), Debian's cargo is too old")
  elif ! version_ge "$found" "$need"; then
    problems+=("cargo >= $need needed for native/Cargo.lock, cargo here is $found: rustup update stable (Debian's cargo is too old)")
  fi
}
[ -n "$part" ] || check_python  # a part is built by storbench itself, from its .venv
[ "$part" = native ] || [ "$want_fast" = 1 ] || check_java  # the fast lane starts no JVM
if [ "$want_check" = 1 ] || wants native; then check_cargo; fi
if [ "${#problems[@]}" -gt 0 ]; then
  printf 'setup: %s\n' "${problems[@]}" >&2
  exit 1
fi
if [ "$want_check" = 1 ]; then
  echo "setup: versions ok: Python $("$PYTHON" -c 'import platform; print(platform.python_version())'), $(java -version 2>&1 | head -1), $(cargo --version)" >&2
  exit 0
fi

apt_packages=()
[ "$want_fast" = 1 ] || command -v java >/dev/null 2>&1 || apt_packages+=(openjdk-17-jdk-headless)  # no JVM in the fast lane
if wants jvm || wants s3a || wants cassandra || wants metastore || wants ycsb; then
  command -v javac >/dev/null 2>&1 || apt_packages+=(openjdk-17-jdk-headless)
  command -v mvn >/dev/null 2>&1 || apt_packages+=(maven)
fi
[ -n "$part" ] || "$PYTHON" -c 'import venv, ensurepip' >/dev/null 2>&1 || apt_packages+=(python3-venv)
# `services up s3` (SeaweedFS) makes a CA for its gRPC mutual TLS at each start
[ "$want_fast" = 1 ] || command -v openssl >/dev/null 2>&1 || apt_packages+=(openssl)
if [ "$want_test" = 1 ]; then
  command -v chromium >/dev/null 2>&1 || apt_packages+=(chromium)
  command -v fio >/dev/null 2>&1 || apt_packages+=(fio)
  [ -x /usr/lib/sysstat/sadc ] || apt_packages+=(sysstat)
  command -v zstd >/dev/null 2>&1 || apt_packages+=(zstd)  # reads the engine's per-operation records in a test
  # node_exporter beside each `services up spark` worker; Prometheus for the prometheus telemetry source
  command -v prometheus-node-exporter >/dev/null 2>&1 || apt_packages+=(prometheus-node-exporter)
  command -v prometheus >/dev/null 2>&1 || apt_packages+=(prometheus)
  # a real PostgreSQL for the shared results-store tests (initdb + pg_ctl into a temp dir; not on PATH)
  compgen -G "/usr/lib/postgresql/*/bin/initdb" >/dev/null || apt_packages+=(postgresql)
  # ipmitool: the ipmi power source's parsing and error tests run the real tool
  command -v ipmitool >/dev/null 2>&1 || apt_packages+=(ipmitool)
  # a real single-node Ceph for `services up ceph` and the rados-bench tests (~55 s, 87 packages)
  for pair in ceph-mon:ceph-mon ceph-osd:ceph-osd ceph-mgr:ceph-mgr radosgw:radosgw rados:ceph-common; do
    command -v "${pair%%:*}" >/dev/null 2>&1 || apt_packages+=("${pair#*:}")
  done
fi
if wants lab; then  # the device lab's host side (tests/lab): QEMU under TCG, the guest's initramfs and mkfs tools
  for pair in qemu-system-x86_64:qemu-system-x86 qemu-img:qemu-utils cpio:cpio depmod:kmod dmsetup:dmsetup \
              mkfs.btrfs:btrfs-progs mkfs.f2fs:f2fs-tools blkzone:util-linux; do
    command -v "${pair%%:*}" >/dev/null 2>&1 || apt_packages+=("${pair#*:}")
  done
  [ -x /bin/busybox ] && /bin/busybox --list 2>/dev/null | grep -qx modprobe || apt_packages+=(busybox-static)
fi
apt_packages=($(printf '%s\n' "${apt_packages[@]}" | sort -u))
if [ "${#apt_packages[@]}" -gt 0 ]; then
  echo "setup: installing ${apt_packages[*]} from Debian's packages" >&2
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${apt_packages[@]}" >/dev/null
fi

# Reinstall the package only when its metadata changed; a no-op run takes a second. A .venv that is a link to
# another checkout's (a git worktree sharing the main checkout's builds) stays that checkout's install.
if [ -z "$part" ] && [ ! -L .venv ]; then
  extras="."; { [ "$want_test" = 1 ] || [ "$want_fast" = 1 ]; } && extras=".[test]"
  stamp=".venv/.storbench-installed"
  fingerprint="$(sha256sum pyproject.toml | cut -c1-16)-$extras"
  if [ ! -x .venv/bin/python ]; then
    "$PYTHON" -m venv .venv
  fi
  if [ "$(cat "$stamp" 2>/dev/null)" != "$fingerprint" ] && ! grep -qxF "$fingerprint" "$stamp" 2>/dev/null; then
    echo "setup: installing storbench and PySpark into .venv (first time: about 2 minutes)" >&2
    .venv/bin/pip install -q --upgrade pip >/dev/null
    .venv/bin/pip install -q -e "$extras"
    echo "$fingerprint" >> "$stamp"
  fi
fi

# A Maven module DIR (its jar, and its runtime classpath in DIR/target/classpath.txt), rebuilt only when its
# pom or sources change; MESSAGE says what is built when it is.
maven_package() {  # DIR MESSAGE
  local stamp="$1/target/.storbench-built" fingerprint
  fingerprint="$(cat "$1/pom.xml" $(find "$1/src" -type f | sort) | sha256sum | cut -c1-16)"
  if [ "$(cat "$stamp" 2>/dev/null)" != "$fingerprint" ]; then
    echo "setup: $2" >&2
    mvn -q -B -f "$1/pom.xml" package dependency:build-classpath -DskipTests \
        -Dmdep.outputFile=target/classpath.txt >/dev/null
    echo "$fingerprint" > "$stamp"
  fi
}

# The JVM launchers (jvm/).
if wants jvm; then
  maven_package jvm "building the JVM launchers with Maven (first time: about a minute, ~130 MB of jars)"
fi

# Spark's S3A connector for s3:// targets (jvm/s3a: hadoop-aws matching PySpark's Hadoop, the AWS SDK v2
# modules it loads, Spark's cloud committers; ~13 MB in jvm/s3a/target/jars), fetched again only when its pom changes.
if wants s3a; then
s3a_stamp="jvm/s3a/target/.storbench-built"
s3a_fingerprint="$(cat jvm/s3a/pom.xml jvm/s3a/src/storbench/s3a/*.java | sha256sum | cut -c1-16)"
if [ "$(cat "$s3a_stamp" 2>/dev/null)" != "$s3a_fingerprint" ]; then
  echo "setup: fetching the S3A jars for Spark with Maven (~13 MB)" >&2
  rm -rf jvm/s3a/target/jars
  mvn -q -B -f jvm/s3a/pom.xml dependency:copy-dependencies -DoutputDirectory=target/jars \
      -DincludeScope=runtime >/dev/null
  # storbench's reader of S3A's counters on the executors (java_method) and its signer for Ceph RGW, compiled
  # against PySpark's Hadoop API and the AWS SDK jars fetched above
  pyspark_jars="$(.venv/bin/python -c 'import os, pyspark; print(os.path.dirname(pyspark.__file__))')/jars"
  rm -rf jvm/s3a/target/classes && mkdir -p jvm/s3a/target/classes
  javac --release 17 -nowarn -cp "$(ls "$pyspark_jars"/hadoop-client-api-*.jar):jvm/s3a/target/jars/*" \
      -d jvm/s3a/target/classes jvm/s3a/src/storbench/s3a/*.java
  jar cf jvm/s3a/target/jars/storbench-s3a-stats.jar -C jvm/s3a/target/classes .
  echo "$s3a_fingerprint" > "$s3a_stamp"
fi
fi
# Apache Cassandra's server jars (jvm/cassandra: their own classpath, apart from Hadoop's) and storbench's role
# manager for its nodes (no default superuser), built only when the pom or the sources change.
if wants cassandra; then
cassandra_stamp="jvm/cassandra/target/.storbench-resolved"
cassandra_fingerprint="$(cat jvm/cassandra/pom.xml $(find jvm/cassandra/src -type f | sort) | sha256sum | cut -c1-16)"
if [ "$(cat "$cassandra_stamp" 2>/dev/null)" != "$cassandra_fingerprint" ] || [ ! -s jvm/cassandra/target/classpath.txt ] \
    || [ ! -s jvm/cassandra/target/storbench-cassandra-0.1.0.jar ]; then
  echo "setup: fetching Apache Cassandra's jars and building storbench's role manager with Maven (first time: about 30 s, ~70 MB)" >&2
  mvn -q -B -f jvm/cassandra/pom.xml package dependency:build-classpath -DskipTests -Dmdep.includeScope=runtime \
      -Dmdep.outputFile=target/classpath.txt >/dev/null
  echo "$cassandra_fingerprint" > "$cassandra_stamp"
fi
fi
# Hive 4.0.1's standalone metastore with PostgreSQL's JDBC driver (jvm/metastore, ~130 MB) and the Hive 4.0.1
# client Spark loads for it (jvm/metastore/client, ~180 MB): two classpaths, resolved only when a pom changes.
if wants metastore; then
for module in jvm/metastore jvm/metastore/client; do
  ms_stamp="$module/target/.storbench-resolved"
  ms_fingerprint="$(sha256sum "$module/pom.xml" | cut -c1-16)"
  if [ "$(cat "$ms_stamp" 2>/dev/null)" != "$ms_fingerprint" ] || [ ! -s "$module/target/classpath.txt" ]; then
    echo "setup: fetching Hive's metastore jars with Maven ($module; first time: about a minute)" >&2
    mvn -q -B -f "$module/pom.xml" dependency:build-classpath -Dmdep.includeScope=runtime \
        -Dmdep.outputFile=target/classpath.txt >/dev/null
    if [ "$module" = jvm/metastore ]; then  # schematool's SQL scripts: only in the release's bin tarball
      rm -rf "$module/target/home" "$module/target/bin" && mkdir -p "$module/target/home"
      mvn -q -B -f "$module/pom.xml" dependency:copy -DoutputDirectory=target/bin \
          -Dartifact=org.apache.hive:hive-standalone-metastore-server:4.0.1:tar.gz:bin >/dev/null
      tar xzf "$module"/target/bin/*.tar.gz -C "$module/target/home" --strip-components=1 --no-same-owner \
          --wildcards '*/scripts/metastore/upgrade/postgres/*'
      rm -rf "$module/target/bin"
    fi
    echo "$ms_fingerprint" > "$ms_stamp"
  fi
done
fi
# YCSB core 0.17.0, its key-drawing tool and storbench's binding on the DataStax Java driver 4.x (jvm/ycsb/: the
# generator tests and driver=ycsb; built on first use by buildparts.py).
if wants ycsb; then
  maven_package jvm/ycsb "building YCSB core, its key tool and binding with Maven (jvm/ycsb)"
fi

# The native load engine (native/, Rust): a release build, rebuilt only when its sources change.
if wants native; then
native_stamp="native/target/.storbench-built"
native_fingerprint="$(cat native/Cargo.toml native/Cargo.lock $(find native/storbench-load -type f | sort) | sha256sum | cut -c1-16)"
if [ "$(cat "$native_stamp" 2>/dev/null)" != "$native_fingerprint" ] || [ ! -x native/target/release/storbench-load ]; then
  echo "setup: building the native load engine with cargo (first time: about 4 minutes)" >&2
  cargo build --release --quiet --manifest-path native/Cargo.toml
  echo "$native_fingerprint" > "$native_stamp"
fi
# The engine's unit tests (tests/workloads/objects/test_engine.py) compile every dependency again in their own
# unoptimized profile: about 3 minutes of one core that the test lane spent on building, not testing. Set-up
# builds them with the rest; the test only runs them (cargo rebuilds what changed since).
if [ "$want_test" = 1 ]; then
  echo "setup: building the native engine's unit tests (cargo test --no-run --profile unit)" >&2
  cargo test --no-run --profile unit --quiet --manifest-path native/Cargo.toml
fi
fi

# The device lab's guest kernel (tests/lab): Debian's generic kernel (nvme, 9p, virtio, dm-delay, dm-flakey,
# btrfs, f2fs as modules), the version linux-image-amd64 depends on, downloaded and unpacked, not installed.
if wants lab; then
  lab_dir="lab/target"
  kernel_pkg="$(apt-cache depends linux-image-amd64 2>/dev/null | sed -n 's/^ *Depends: \(linux-image-[0-9].*-amd64\)$/\1/p' | head -1)"
  if [ -z "$kernel_pkg" ]; then
    echo "setup: the apt index offers no linux-image-amd64 (a Debian kernel for the device lab): apt-get update" >&2
    exit 1
  fi
  if [ "$(cat "$lab_dir/kernel.done" 2>/dev/null)" != "$kernel_pkg" ]; then
    echo "setup: downloading and unpacking $kernel_pkg for the device lab (~70 MB)" >&2
    rm -rf "$lab_dir/kernel" "$lab_dir/download" && mkdir -p "$lab_dir/download"
    (cd "$lab_dir/download" && apt-get download -qq "$kernel_pkg" 2>/dev/null)
    dpkg-deb -x "$lab_dir"/download/"$kernel_pkg"_*.deb "$lab_dir/kernel"
    kver="$(ls "$lab_dir/kernel/lib/modules")"
    depmod -b "$lab_dir/kernel" "$kver"
    rm -rf "$lab_dir/download"
    echo "$kernel_pkg" > "$lab_dir/kernel.done"
  fi
fi

# The tests' Spark drivers start from a class-data-sharing archive (tests/spark_cds.py: about half the CPU of a
# driver's start-up); built once per JDK and PySpark, in .venv. Without it the tests run as before.
if [ "$want_test" = 1 ]; then
  .venv/bin/python -m tests.spark_cds
fi
