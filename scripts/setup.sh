#!/usr/bin/env bash
# Installs what storbench needs on a fresh Debian-like machine; safe to run again.
#   scripts/setup.sh          what the default job needs: Java, a virtualenv in .venv with storbench and
#                             PySpark. The other parts are built on first use (storbench runs
#                             `scripts/setup.sh --part NAME` and says so) or all at once by --test:
#   scripts/setup.sh --part P one part: a row of the table of build parts (src/storbench/buildparts.tsv says
#                             what each part is and what uses it), e.g. jvm (MiniDFSCluster for `services up
#                             hdfs`, TestDFSIO), cassandra, metastore, native (the native load engine, Rust >= 1.88)
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

# The table of build parts: one row a module of a part, tab-separated, "-" for none (its header names the columns)
PARTS_TABLE=src/storbench/buildparts.tsv
table_rows() { grep -v '^#' "$PARTS_TABLE"; }
part_names() { table_rows | cut -f1 | uniq | tr '\n' ' ' | sed 's/ $//'; }

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
    case " $(part_names) " in *" $part "*) ;; *)
      echo "setup: --part '$part': allowed: $(part_names | sed 's/ /, /g')" >&2; exit 2 ;; esac ;;
  *) echo "setup: unknown option '$1'; allowed: --test, --test-fast, --check, --part NAME" >&2; exit 2 ;;
esac
wants() { [ "$want_test" = 1 ] || [ "$part" = "$1" ]; }  # one part, or all of them for the tests
wants_maven() {  # a module of a wanted part is built with Maven
  local name kind
  while IFS=$'\t' read -r name _ kind _; do
    [[ "$kind" == maven_* ]] && wants "$name" && return 0
  done < <(table_rows)
  return 1
}

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
if wants_maven; then
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
  # `storbench lab cluster` (tests/lab_cluster): namespaces, links and tc; each host's ext4 disk
  command -v tc >/dev/null 2>&1 || apt_packages+=(iproute2)
  command -v mkfs.ext4 >/dev/null 2>&1 || apt_packages+=(e2fsprogs)
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
  # Bytecode for storbench's own modules (an editable install: pip compiles only what it copies). Every storbench
  # process imports ~150 of them, and where PYTHONDONTWRITEBYTECODE is set none is ever cached: each CLI call
  # compiled them all again (`storbench runs`: 0.52 CPU-s, 0.30 with the bytecode here). A second or two; Python
  # still checks each file against its source's time.
  .venv/bin/python -m compileall -q -j 0 src benchmarks tests >/dev/null
fi

# The tests' Spark drivers start from a class-data-sharing archive (tests/spark_cds.py: about half the CPU of a
# driver's start-up); built once per JDK and PySpark, in .venv. Without it the tests run as before. It needs only
# the virtualenv: built beside the parts below (a JVM on one core for ~30 s, while Maven and cargo wait on theirs).
cds_build=""
if [ "$want_test" = 1 ]; then
  .venv/bin/python -m tests.spark_cds &
  cds_build=$!
fi

# How each kind of module is built (the table's build column): build_KIND FOLDER [ITS FILES IN THE WHEEL...].
build_maven_package() {  # its jar, and its classpath (Maven's local repository) in FOLDER/target/classpath.txt
  mvn -q -B -f "$1/pom.xml" package dependency:build-classpath -DskipTests \
      -Dmdep.outputFile=target/classpath.txt >/dev/null
}
build_maven_classpath() {  # only its classpath
  mvn -q -B -f "$1/pom.xml" dependency:build-classpath -Dmdep.outputFile=target/classpath.txt >/dev/null
}
build_maven_metastore() {  # Hive's metastore: its classpath, and schematool's SQL scripts (only in the bin tarball)
  build_maven_classpath "$1"
  rm -rf "$1/target/home" "$1/target/bin" && mkdir -p "$1/target/home"
  mvn -q -B -f "$1/pom.xml" dependency:copy -DoutputDirectory=target/bin \
      -Dartifact=org.apache.hive:hive-standalone-metastore-server:4.0.1:tar.gz:bin >/dev/null
  tar xzf "$1"/target/bin/*.tar.gz -C "$1/target/home" --strip-components=1 --no-same-owner \
      --wildcards '*/scripts/metastore/upgrade/postgres/*'
  rm -rf "$1/target/bin"
}
# Spark's S3A connector for s3:// targets: hadoop-aws matching PySpark's Hadoop, the AWS SDK v2 modules it loads,
# Spark's cloud committers, copied into FOLDER/target/jars (~13 MB, Spark's spark.jars) and listed in its
# classpath.txt (for the wheel); then storbench's reader of S3A's counters on the executors (java_method) and its
# signer for Ceph RGW, compiled against PySpark's Hadoop API and the AWS SDK jars fetched here.
build_maven_s3a() {
  rm -rf "$1/target/jars"
  mvn -q -B -f "$1/pom.xml" dependency:copy-dependencies dependency:build-classpath -DoutputDirectory=target/jars \
      -DincludeScope=runtime -Dmdep.outputFile=target/classpath.txt >/dev/null
  local pyspark_jars
  pyspark_jars="$(.venv/bin/python -c 'import os, pyspark; print(os.path.dirname(pyspark.__file__))')/jars"
  rm -rf "$1/target/classes" && mkdir -p "$1/target/classes"
  javac --release 17 -nowarn -cp "$(ls "$pyspark_jars"/hadoop-client-api-*.jar):$1/target/jars/*" \
      -d "$1/target/classes" "$1"/src/storbench/s3a/*.java
  jar cf "$2" -C "$1/target/classes" .  # storbench's own jar of the module, as the table names it
}
build_cargo() {  # a release build, from the last build's dependencies when there is one (seed_dependencies)
  seed_dependencies "$1"
  cargo build --release --quiet --manifest-path "$1/Cargo.toml"
}
# Each module's last build on this machine is kept in storbench's cache, like Maven's jars in ~/.m2: a clean
# clone takes it whole when its sources' fingerprint is the same, and a Rust folder whose sources changed starts
# from its dependencies (its own crates cleaned first: cargo clean -p, so none is another checkout's build). A
# clean clone's set-up --test on this machine: 58-80 s with every part kept, ~110 s with only the Rust
# dependencies (the native engine's release build 36 s instead of 129, its unit tests' ~6 s instead of 94), 270 s
# before.
last_build() { echo "${XDG_CACHE_HOME:-$HOME/.cache}/storbench/built/$(echo "$1" | tr / -)"; }
take_last_build() {  # FOLDER FINGERPRINT: its target directory from the cache when built from the same sources
  local cache
  cache="$(last_build "$1")"
  [ "$(cat "$cache/.storbench-fingerprint" 2>/dev/null)" = "$2" ] || return 1
  rm -rf "$1/target"
  if [ -f "$1/Cargo.toml" ]; then
    # with its times: cargo judges each artifact by them and rebuilds the crates whose sources are the clone's.
    # Copied at copy time, a build script's output came out newer than the crates built from it, and a clean
    # clone rebuilt most of the engine's unit-test dependencies (78 s of set-up; with its times 6 s)
    cp -a "$cache/target" "$1/target"
  else
    # as if built now: newer than the clone's sources, which a built part's users may check (the YCSB binding's)
    cp -R --preserve=mode,links "$cache/target" "$1/target"
  fi
}
keep_last_build() {  # FOLDER FINGERPRINT: a private copy renamed into place, so a concurrent set-up sees one whole
  local cache fresh
  cache="$(last_build "$1")"
  mkdir -p "$(dirname "$cache")" && chmod 700 "$(dirname "$cache")"
  fresh="$(mktemp -d "$cache.new.XXXXXX")"
  cp -a "$1/target" "$fresh/target"
  echo "$2" > "$fresh/.storbench-fingerprint"
  rm -rf "$cache"
  mv -T "$fresh" "$cache" 2>/dev/null || rm -rf "$fresh"
}
seed_dependencies() {  # a Rust folder without a target directory: the last build's, its own crates cleaned
  local cache crate profile
  cache="$(last_build "$1")"
  [ ! -e "$1/target" ] && [ -d "$cache/target" ] || return 0
  cp -a "$cache/target" "$1/target"
  for crate in $(sed -n 's/^members = \[\(.*\)\]$/\1/p' "$1/Cargo.toml" | tr -d '",'); do
    for profile in release unit; do
      cargo clean --quiet -p "$crate" --profile "$profile" --manifest-path "$1/Cargo.toml"
    done
  done
}
# The device lab's guest kernel (tests/lab): Debian's generic kernel (nvme, 9p, virtio, dm-delay, dm-flakey,
# btrfs, f2fs as modules), the version linux-image-amd64 depends on, downloaded and unpacked, not installed. No
# stamp in the table: its own check is the package's name.
build_lab() {
  local lab_dir="$1/target" kernel_pkg kver
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
}

# Each module of each wanted part, built only when its stamp does not hold its sources' fingerprint or one of its
# products (its files in the wheel column, its classpath.txt) is missing or empty. The table is read on fd 3: a
# build's commands keep their own stdin.
declare -A fingerprints  # each module's, by folder
while IFS=$'\t' read -r -u 3 name folder kind classpath stamp sources wheel about _; do
  [ "$about" = - ] || part_about="$about"  # a part's further rows leave it "-"
  wants "$name" || continue
  if [ "$stamp" = - ]; then "build_$kind" "$folder"; continue; fi
  fingerprint="$(eval "cat $sources" | sha256sum | cut -c1-16)"
  fingerprints[$folder]="$fingerprint"
  in_wheel=()
  [ "$wheel" = - ] || for pair in $wheel; do in_wheel+=("${pair#*=}"); done
  products=("${in_wheel[@]}")
  [ "$classpath" = - ] || products+=("$folder/target/classpath.txt")
  built=1
  [ "$(cat "$stamp" 2>/dev/null)" = "$fingerprint" ] || built=0
  for product in "${products[@]}"; do [ -s "$product" ] || built=0; done
  if [ "$built" = 0 ] && take_last_build "$folder" "$fingerprint"; then
    echo "setup: $folder: this machine's last build of the same sources ($(last_build "$folder"))" >&2
  elif [ "$built" = 0 ]; then
    echo "setup: building $folder: $part_about" >&2
    "build_$kind" "$folder" "${in_wheel[@]}"
    echo "$fingerprint" > "$stamp"
    keep_last_build "$folder" "$fingerprint"
  fi
done 3< <(table_rows)
# The engine's unit tests (tests/workloads/objects/test_engine.py) compile every dependency again in their own
# unoptimized profile: about 3 minutes of one core that the test lane spent on building, not testing. Set-up
# builds them with the rest; the test only runs them (cargo rebuilds what changed since).
if [ "$want_test" = 1 ]; then
  echo "setup: building the native engine's unit tests (cargo test --no-run --profile unit)" >&2
  cargo test --no-run --profile unit --quiet --manifest-path native/Cargo.toml
  # and the dependencies' metadata the lint gate's clippy reads (make lint: cargo clippy --profile unit)
  cargo check --profile unit --all-targets --quiet --manifest-path native/Cargo.toml
  keep_last_build native "${fingerprints[native]}"  # with them: the next clean clone's are built
fi

[ -z "$cds_build" ] || wait "$cds_build"  # the archive, complete (or set-up fails with its error)
