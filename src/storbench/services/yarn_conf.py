"""The Hadoop configuration of ``services up yarn``: the clients' conf dir and one per NodeManager.

Everything a client (spark-submit, a MapReduce job) needs is in ``conf/`` (HADOOP_CONF_DIR
and YARN_CONF_DIR both point there): the ResourceManager's addresses, the queue, the
MapReduce settings and the container sizes. Each NodeManager has ``conf/`` plus its own
address, ports, resources and local/log dirs in ``nm-K/conf/``.

Who may use the ResourceManager (``yarn.acl.enable``): every queue ACL and the admin ACL
name only ``USER`` (storbench's Hadoop user, the one that owns the HDFS service's
namespace). The web UI and REST API are bound to 127.0.0.1 and refuse anonymous
requests (``simple.anonymous.allowed=false``): a REST call must state ``user.name``, and
what it may do is then held to the same ACLs.
"""

from __future__ import annotations

from pathlib import Path
from xml.sax.saxutils import escape

USER = "storbench"  # the Hadoop user every ACL names (see services/hdfs.py for why a name, not an OS account)
QUEUE = "default"
AM_MB = 384  # a MapReduce ApplicationMaster's container (heap below)
MAP_MB = 256  # a MapReduce task's container
# Room each NodeManager has beyond --memory: a MapReduce job (the cross-check drivers) runs while the run's Spark
# session holds its executors, which fill --memory; the ApplicationMaster and a task fit in this room.
MR_ROOM_MB = AM_MB + MAP_MB
SPARK_AM_MB, SPARK_OVERHEAD_MB = 256, 128  # Spark's client-mode ApplicationMaster heap; overhead per container
MIN_ALLOCATION_MB = 128
# Spark's AM beside an executor; and two executors never fit on one node, room included (2 × (M - 384) > M + room)
MIN_NODE_MB = 1536
# JVMs that start, coordinate and exit (ApplicationMasters): C1 only and the serial collector start them in about
# half the time on a busy machine; the JVMs that move data (executors, map tasks) keep the JDK's defaults
QUICK_JVM = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"

# JDK 17: Guice (the daemons' and the MapReduce AM's web apps) and Hadoop's reflection need these, as Hadoop's
# own launch scripts add on JDK 17
OPENS = " ".join(
    f"--add-opens=java.base/{p}=ALL-UNNAMED"
    for p in (
        "java.lang",
        "java.lang.reflect",
        "java.util",
        "java.util.concurrent",
        "java.io",
        "java.net",
        "java.nio",
        "sun.nio.ch",
    )
)

LOG4J = """log4j.rootLogger=INFO, out
log4j.appender.out=org.apache.log4j.ConsoleAppender
log4j.appender.out.layout=org.apache.log4j.PatternLayout
log4j.appender.out.layout.ConversionPattern=%d{ISO8601} %p %c{1}: %m%n
log4j.logger.org.apache.hadoop.util.NativeCodeLoader=ERROR
"""


def site(props: dict[str, str]) -> str:
    body = "".join(
        f"  <property><name>{escape(k)}</name><value>{escape(str(v))}</value></property>\n" for k, v in props.items()
    )
    return f'<?xml version="1.0"?>\n<configuration>\n{body}</configuration>\n'


def client_files(
    ports: dict[str, int], memory_mb: int, classpath: str, staging: Path, rm: str = "127.0.0.1"
) -> dict[str, dict[str, str]]:
    """Every site file of the clients' conf dir, as name → properties; ``rm``: the ResourceManager's address
    (a lab cluster's: this machine's end of its bridge)."""
    core = {
        "fs.defaultFS": "file:///",
        "hadoop.security.authentication": "simple",
        "hadoop.http.authentication.type": "simple",
        "hadoop.http.authentication.simple.anonymous.allowed": "false",
    }
    yarn = {
        "yarn.resourcemanager.hostname": rm,
        "yarn.resourcemanager.bind-host": rm,
        "yarn.resourcemanager.address": f"{rm}:{ports['rm']}",
        "yarn.resourcemanager.scheduler.address": f"{rm}:{ports['scheduler']}",
        "yarn.resourcemanager.resource-tracker.address": f"{rm}:{ports['tracker']}",
        "yarn.resourcemanager.admin.address": f"{rm}:{ports['admin']}",
        "yarn.resourcemanager.webapp.address": f"{rm}:{ports['web']}",
        "yarn.acl.enable": "true",
        "yarn.admin.acl": USER,
        "yarn.resourcemanager.nodemanagers.heartbeat-interval-ms": "500",
        "yarn.scheduler.minimum-allocation-mb": str(MIN_ALLOCATION_MB),
        "yarn.scheduler.maximum-allocation-mb": str(memory_mb),
        # JDK 17's virtual size is far above its heap, and PySpark's Python workers count in the tree:
        # the NodeManager does not kill containers on its own memory estimate (YARN's scheduler still
        # places them by their declared size)
        "yarn.nodemanager.vmem-check-enabled": "false",
        "yarn.nodemanager.pmem-check-enabled": "false",
        "yarn.application.classpath": classpath,
        "yarn.timeline-service.enabled": "false",
        "yarn.log-aggregation-enable": "false",
        "yarn.resourcemanager.recovery.enabled": "false",
        # a lost NodeManager is declared lost after 20 s, not 10 minutes: a killed node ends a run soon
        "yarn.nm.liveness-monitor.expiry-interval-ms": "20000",
        "yarn.resourcemanager.am.max-attempts": "1",
    }
    queue = "yarn.scheduler.capacity.root"
    capacity = {
        f"{queue}.queues": QUEUE,
        f"{queue}.{QUEUE}.capacity": "100",
        f"{queue}.{QUEUE}.maximum-capacity": "100",
        f"{queue}.{QUEUE}.user-limit-factor": "1",
        "yarn.scheduler.capacity.maximum-am-resource-percent": "0.5",
        # one container per node heartbeat: executors and maps spread over the nodes
        "yarn.scheduler.capacity.per-node-heartbeat.multiple-assignments-enabled": "false",
    }
    for name in (queue, f"{queue}.{QUEUE}"):  # a child queue inherits its parent's ACL: root must be closed too
        capacity |= {f"{name}.acl_submit_applications": USER, f"{name}.acl_administer_queue": USER}
    mapred = {
        "mapreduce.framework.name": "yarn",
        "mapreduce.application.classpath": classpath,
        "yarn.app.mapreduce.am.staging-dir": staging.as_uri(),
        "yarn.app.mapreduce.am.resource.mb": str(AM_MB),
        "yarn.app.mapreduce.am.command-opts": f"-Xmx256m {QUICK_JVM} {OPENS}",
        "mapreduce.map.memory.mb": str(MAP_MB),
        "mapreduce.map.java.opts": f"-Xmx200m {OPENS}",
        "mapreduce.reduce.memory.mb": str(MAP_MB),
        "mapreduce.reduce.java.opts": f"-Xmx200m {OPENS}",
        "mapreduce.job.maxtaskfailures.per.tracker": "1",
        "mapreduce.map.maxattempts": "2",
        "mapreduce.reduce.maxattempts": "2",
        "mapreduce.jobhistory.address": f"{rm}:{ports['history']}",
    }
    return {"core-site.xml": core, "yarn-site.xml": yarn, "capacity-scheduler.xml": capacity, "mapred-site.xml": mapred}


def node_props(
    host: str, ports: dict[str, int], cores: int, memory_mb: int, local_dir: Path, log_dir: Path
) -> dict[str, str]:
    """A NodeManager's own settings on top of the clients' yarn-site.xml."""
    return {
        "yarn.nodemanager.hostname": host,
        "yarn.nodemanager.bind-host": host,
        "yarn.nodemanager.address": f"{host}:{ports['nm']}",
        "yarn.nodemanager.localizer.address": f"{host}:{ports['localizer']}",
        "yarn.nodemanager.webapp.address": f"{host}:{ports['nm_web']}",
        "yarn.nodemanager.collector-service.address": f"{host}:{ports['collector']}",
        "yarn.nodemanager.resource.memory-mb": str(memory_mb + MR_ROOM_MB),
        "yarn.nodemanager.resource.cpu-vcores": str(cores),
        "yarn.nodemanager.local-dirs": str(local_dir),
        "yarn.nodemanager.log-dirs": str(log_dir),
        "yarn.nodemanager.aux-services": "mapreduce_shuffle",
        "yarn.nodemanager.aux-services.mapreduce_shuffle.class": "org.apache.hadoop.mapred.ShuffleHandler",
        "yarn.nodemanager.recovery.enabled": "false",
        "yarn.nodemanager.disk-health-checker.max-disk-utilization-per-disk-percentage": "99",
    }


def node_files(
    client: dict[str, dict[str, str]],
    host: str,
    ports: dict[str, int],
    cores: int,
    memory_mb: int,
    local_dir: Path,
    log_dir: Path,
) -> dict[str, dict[str, str]]:
    """A NodeManager's site files: the clients', its own settings on top (the shuffle port in mapred-site.xml,
    which Hadoop loads after mapred-default.xml, whose default would win over yarn-site.xml)."""
    return {
        **client,
        "yarn-site.xml": {
            **client["yarn-site.xml"],
            **node_props(host, ports, cores, memory_mb, local_dir, log_dir),
        },
        "mapred-site.xml": {**client["mapred-site.xml"], "mapreduce.shuffle.port": str(ports["shuffle"])},
    }


def write_dir(conf: Path, files: dict[str, dict[str, str]]) -> None:
    conf.mkdir(parents=True, exist_ok=True)
    for name, props in files.items():
        (conf / name).write_text(site(props))
    (conf / "log4j.properties").write_text(LOG4J)


def spark_conf(nodes: int, cores: int, memory_mb: int, spark_jars: Path, staging: Path) -> dict[str, str]:
    """Spark's settings for this YARN: one executor per NodeManager with all its cores, sized so that two never
    fit on one node (YARN then places one on each) while the ApplicationMaster fits beside one; Spark's own jars
    from the local disk (every node is this machine) rather than uploaded per session."""
    return {
        "spark.executor.instances": str(nodes),
        "spark.executor.cores": str(cores),
        "spark.executor.memory": f"{executor_heap_mb(memory_mb)}m",
        "spark.executor.memoryOverhead": f"{SPARK_OVERHEAD_MB}m",
        "spark.yarn.am.memory": f"{SPARK_AM_MB}m",
        "spark.yarn.am.memoryOverhead": f"{SPARK_OVERHEAD_MB}m",
        "spark.yarn.am.extraJavaOptions": QUICK_JVM,
        # executors are asked for, and their containers' launch polled, every second rather than every 3
        "spark.yarn.scheduler.heartbeat.interval-ms": "1000",
        "spark.yarn.jars": f"local:{spark_jars}/*",
        "spark.yarn.populateHadoopClasspath": "false",
        "spark.yarn.stagingDir": staging.as_uri(),
        "spark.yarn.queue": QUEUE,
        "spark.yarn.maxAppAttempts": "1",
        "spark.yarn.am.waitTime": "60s",
        "spark.dynamicAllocation.enabled": "false",
        "spark.executor.maxNumFailures": str(2 * nodes + 1),
    }


def executor_heap_mb(memory_mb: int) -> int:
    """The executor heap: its container (heap + overhead) takes what the AM leaves of a node."""
    return memory_mb - SPARK_AM_MB - 2 * SPARK_OVERHEAD_MB
