"""A Cassandra node's configuration as services up cassandra writes it: its JVM options (from Cassandra's own
jvm17-server.options), its logback file and its cassandra.yaml (addresses, seeds, tokens, the role manager,
client TLS)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from storbench.services import cassandra_auth, cassandra_certs

NUM_TOKENS = 4
DIRS = ("data", "commitlog", "saved_caches", "hints", "cdc_raw")


def node_host(index: int) -> str:
    """Node ``index`` (1-based) binds 127.0.0.index."""
    return f"127.0.0.{index}"


# Cassandra's own conf/jvm17-server.options (JPMS and Netty), which the daemon needs on Java 17
JVM_OPTIONS = (
    "-XX:+UseG1GC",
    "-XX:+ParallelRefProcEnabled",
    "-XX:MaxTenuringThreshold=1",
    "-XX:MaxGCPauseMillis=300",
    "-Djdk.attach.allowAttachSelf=true",
    *(
        f"--add-exports={m}=ALL-UNNAMED"
        for m in (
            "java.base/jdk.internal.misc",
            "java.management.rmi/com.sun.jmx.remote.internal.rmi",
            "java.rmi/sun.rmi.registry",
            "java.rmi/sun.rmi.server",
            "java.sql/java.sql",
            "java.base/java.lang.ref",
            "jdk.unsupported/sun.misc",
            "jdk.compiler/com.sun.tools.javac.file",
            "jdk.attach/sun.tools.attach",
        )
    ),
    *(
        f"--add-opens={m}=ALL-UNNAMED"
        for m in (
            "java.base/java.lang.module",
            "java.base/jdk.internal.loader",
            "java.base/jdk.internal.ref",
            "java.base/jdk.internal.reflect",
            "java.base/jdk.internal.math",
            "java.base/jdk.internal.module",
            "java.base/jdk.internal.util.jar",
            "jdk.management/com.sun.management.internal",
            "java.base/sun.nio.ch",
            "java.base/java.io",
            "java.base/java.lang.reflect",
            "jdk.compiler/com.sun.tools.javac",
            "java.base/java.lang",
            "java.base/java.util",
        )
    ),
    "-Dio.netty.tryReflectionSetAccessible=true",
    "-Dio.netty.allocator.useCacheForAllThreads=true",
    "-Dio.netty.allocator.maxOrder=11",
    "-XX:+ExitOnOutOfMemoryError",
    "-Dcassandra-foreground=yes",
    "-Dcassandra.skip_wait_for_gossip_to_settle=0",
)
# ISO8601 dates: a pattern like %date{HH:mm:ss,SSS} breaks logback (the comma reads as a time zone)
LOGBACK = """<configuration scan="false">
  <appender name="FILE" class="ch.qos.logback.core.FileAppender">
    <file>{log}</file>
    <encoder><pattern>%-5level [%thread] %date{{ISO8601}} %F:%L - %msg%n</pattern></encoder>
  </appender>
  <root level="INFO"><appender-ref ref="FILE"/></root>
</configuration>
"""


def node_yaml(
    root: Path, host: str, ports: dict[str, int], tls: dict[str, Any] | None = None, seed: str | None = None
) -> str:
    """``seed``: node 1's address (default 127.0.0.1; a lab host's own otherwise)."""
    dirs = {name: root / name for name in DIRS}
    return "\n".join(
        [
            "cluster_name: storbench",
            f"num_tokens: {NUM_TOKENS}",
            "partitioner: org.apache.cassandra.dht.Murmur3Partitioner",
            f"data_file_directories: [{dirs['data']}]",
            f"commitlog_directory: {dirs['commitlog']}",
            f"saved_caches_directory: {dirs['saved_caches']}",
            f"hints_directory: {dirs['hints']}",
            f"cdc_raw_directory: {dirs['cdc_raw']}",
            "commitlog_sync: periodic",
            "commitlog_sync_period: 10000ms",
            "seed_provider:",
            "  - class_name: org.apache.cassandra.locator.SimpleSeedProvider",
            "    parameters:",
            f'      - seeds: "{seed or node_host(1)}:{ports["storage"]}"',
            f"listen_address: {host}",
            f"rpc_address: {host}",
            f"storage_port: {ports['storage']}",
            f"ssl_storage_port: {ports['ssl_storage']}",
            f"native_transport_port: {ports['native']}",
            "start_native_transport: true",
            "endpoint_snitch: SimpleSnitch",
            "auto_bootstrap: false",  # a new, empty cluster: nothing to stream
            "concurrent_compactors: 1",
            *cassandra_auth.YAML,
            *cassandra_certs.yaml(tls),  # TLS and plain CQL on the native port
            "",
        ]
    )
