"""One real Cassandra 5.0 node on 127.0.0.1 for the CQL engine tests, started as SERVICES.md
describes (Maven Central's cassandra-all jars resolved into a private folder, CassandraDaemon on
free ports), stopped by its PID. `storbench services up cassandra` is the product's way; this
keeps the engine's tests independent of it."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
from pathlib import Path

VERSION = "5.0.9"
POM = f"""<project xmlns="http://maven.apache.org/POM/4.0.0"><modelVersion>4.0.0</modelVersion>
<groupId>storbench-test</groupId><artifactId>cassandra-jars</artifactId><version>0</version><packaging>pom</packaging>
<dependencies><dependency><groupId>org.apache.cassandra</groupId><artifactId>cassandra-all</artifactId>
<version>{VERSION}</version></dependency></dependencies></project>
"""
EXPORTS = ("java.base/jdk.internal.misc", "java.management.rmi/com.sun.jmx.remote.internal.rmi", "java.rmi/sun.rmi.registry",
           "java.rmi/sun.rmi.server", "java.sql/java.sql", "java.base/java.lang.ref", "jdk.unsupported/sun.misc",
           "jdk.compiler/com.sun.tools.javac.file", "jdk.attach/sun.tools.attach")
OPENS = ("java.base/java.lang.module", "java.base/jdk.internal.loader", "java.base/jdk.internal.ref",
         "java.base/jdk.internal.reflect", "java.base/jdk.internal.math", "java.base/jdk.internal.module",
         "java.base/jdk.internal.util.jar", "jdk.management/com.sun.management.internal", "java.base/sun.nio.ch",
         "java.base/java.io", "java.base/java.lang.reflect", "jdk.compiler/com.sun.tools.javac", "java.base/java.lang",
         "java.base/java.util")
LOGBACK = """<configuration scan="false"><appender name="FILE" class="ch.qos.logback.core.FileAppender">
<file>{log}</file><encoder><pattern>%-5level %date{{ISO8601}} %msg%n</pattern></encoder></appender>
<root level="INFO"><appender-ref ref="FILE"/></root></configuration>
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def classpath(cache: Path) -> str:
    cache.mkdir(parents=True, exist_ok=True)
    out = cache / "classpath.txt"
    if not out.is_file():
        (cache / "pom.xml").write_text(POM)
        subprocess.run(["mvn", "-q", "-B", "-f", str(cache / "pom.xml"), "dependency:build-classpath",
                        f"-Dmdep.outputFile={out}"], check=True, timeout=900)
    return out.read_text().strip()


class Node:
    def __init__(self, root: Path, cache: Path, heap: str = "768m"):
        self.root = root
        self.host = "127.0.0.1"
        self.port = free_port()
        storage, ssl = free_port(), free_port()
        dirs = {d: root / d for d in ("data", "commitlog", "saved_caches", "hints", "cdc_raw")}
        for d in dirs.values():
            d.mkdir(parents=True, exist_ok=True)
        config = root / "cassandra.yaml"
        config.write_text("\n".join([
            "cluster_name: storbench-test", "num_tokens: 16", "partitioner: org.apache.cassandra.dht.Murmur3Partitioner",
            f"data_file_directories: [{dirs['data']}]", f"commitlog_directory: {dirs['commitlog']}",
            f"saved_caches_directory: {dirs['saved_caches']}", f"hints_directory: {dirs['hints']}",
            f"cdc_raw_directory: {dirs['cdc_raw']}", "commitlog_sync: periodic", "commitlog_sync_period: 10000ms",
            "seed_provider:", "  - class_name: org.apache.cassandra.locator.SimpleSeedProvider", "    parameters:",
            f"      - seeds: \"127.0.0.1:{storage}\"", "listen_address: 127.0.0.1", "rpc_address: 127.0.0.1",
            f"storage_port: {storage}", f"ssl_storage_port: {ssl}", f"native_transport_port: {self.port}",
            "start_native_transport: true", "endpoint_snitch: SimpleSnitch", "auto_bootstrap: false",
            "concurrent_compactors: 1", ""]))
        logback = root / "logback.xml"
        logback.write_text(LOGBACK.format(log=root / "system.log"))
        argv = ["java", f"-Xms{heap}", f"-Xmx{heap}", "-XX:+UseG1GC", "-Djdk.attach.allowAttachSelf=true",
                *(f"--add-exports={m}=ALL-UNNAMED" for m in EXPORTS), *(f"--add-opens={m}=ALL-UNNAMED" for m in OPENS),
                "-Dio.netty.tryReflectionSetAccessible=true", "-Dcassandra-foreground=yes",
                "-Dcassandra.skip_wait_for_gossip_to_settle=0", f"-Dcassandra.config={config.as_uri()}",
                f"-Dcassandra.storagedir={root}", f"-Dlogback.configurationFile={logback}", f"-Dcassandra.logdir={root}",
                f"-Dcassandra.jmx.local.port={free_port()}", "-cp", classpath(cache),
                "org.apache.cassandra.service.CassandraDaemon"]
        self.proc = subprocess.Popen(argv, stdout=open(root / "stdout.log", "wb"), stderr=subprocess.STDOUT,
                                     start_new_session=True)

    @property
    def contact_point(self) -> str:
        return f"{self.host}:{self.port}"

    def wait(self, timeout: float = 240.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"cassandra exited {self.proc.returncode}; see {self.root}/system.log")
            try:
                with socket.create_connection((self.host, self.port), timeout=2):
                    return  # the native transport listens last
            except OSError:
                time.sleep(1)
        raise RuntimeError(f"cassandra not up within {timeout} s; see {self.root}/system.log")

    def stop(self) -> None:
        if self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                os.kill(self.proc.pid, signal.SIGKILL)
                self.proc.wait(10)
