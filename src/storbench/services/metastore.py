"""A shared Hive metastore on loopback: Apache Hive 4.0.1's standalone metastore, its schema in PostgreSQL.

``up`` starts a PostgreSQL cluster of its own under the service directory (:mod:`storbench.services.postgres`:
Debian's server, password authentication, 127.0.0.1 only), creates Hive's schema there with Hive's own
schematool (``MetastoreSchemaTool -initSchema -dbType postgres``), then starts the metastore
(``HiveMetaStore``) with thrift on 127.0.0.1 and a free port. The state: ``uri`` (``thrift://127.0.0.1:PORT``),
every process (postgres, metastore) by PID with a marker checked before it is signalled.

Who may call it: the metastore asks for a user name and password on thrift (``metastore.authentication=CONFIG``:
SASL PLAIN against one user, ``storbench``, with a generated password); storbench's Spark sessions log in with
Hive's client in PLAIN mode (``metastore.client.auth.mode``), which reads the password from a Hadoop credential
store (``credentials.jceks``, 0600) by user name. PostgreSQL's password (its own, generated) is in the
metastore's configuration (``conf/metastore-site.xml``, 0600). No secret is on a command line; both passwords
are in state.json (0600). :func:`client_env` gives a shell the URI and the credential store's path.

Every metastore call is written to ``audit.log`` (Hive's audit logger, ``cmd=get_table`` and so on, one line
each): storbench counts the lines a query added (its metastore calls).
"""

from __future__ import annotations

import os
import secrets
import socket
import subprocess
import time
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape

from storbench.errors import EngineError
from storbench.services import postgres, process
from storbench.services.jvm import carried, java_command, metastore_classpath
from storbench.services.ports import free_port
from storbench.services.registry import register

SERVICE = "metastore"
register(SERVICE, __name__)
USER = "storbench"
DATABASE = "metastore"
MAIN = "org.apache.hadoop.hive.metastore.HiveMetaStore"
SCHEMATOOL = "org.apache.hadoop.hive.metastore.tools.schematool.MetastoreSchemaTool"
# scripts/metastore/upgrade/postgres/, from the release (a wheel carries them)
SCRIPTS_HOME = carried("metastore/home")  # the wheel's, or the clone's (the table of build parts)
CREDENTIAL_TOOL = carried("metastore/CredentialFile.java")
START_TIMEOUT_S = 180.0
HEAP = "512m"
LOG4J = """status = WARN
appender.main.type = File
appender.main.name = main
appender.main.fileName = {log}
appender.main.layout.type = PatternLayout
appender.main.layout.pattern = %d{{ISO8601}} %-5p [%t] %c{{2}}: %m%n
appender.audit.type = File
appender.audit.name = audit
appender.audit.fileName = {audit}
appender.audit.immediateFlush = true
appender.audit.layout.type = PatternLayout
appender.audit.layout.pattern = %d{{ISO8601}} %m%n
rootLogger.level = INFO
rootLogger.appenderRef.main.ref = main
logger.audit.name = org.apache.hadoop.hive.metastore.HiveMetaStore.audit
logger.audit.level = INFO
logger.audit.additivity = false
logger.audit.appenderRef.audit.ref = audit
"""


def _site(settings: dict[str, str]) -> str:
    props = "".join(f"  <property><name>{k}</name><value>{escape(v)}</value></property>\n" for k, v in settings.items())
    return f'<?xml version="1.0"?>\n<configuration>\n{props}</configuration>\n'


def _settings(workdir: Path, pg_port: int, port: int, auth: dict[str, str]) -> dict[str, str]:
    return {
        "javax.jdo.option.ConnectionURL": f"jdbc:postgresql://127.0.0.1:{pg_port}/{DATABASE}",
        "javax.jdo.option.ConnectionDriverName": "org.postgresql.Driver",
        "javax.jdo.option.ConnectionUserName": postgres.USER,
        "javax.jdo.option.ConnectionPassword": auth["postgres_password"],
        "metastore.thrift.bind.host": "127.0.0.1",
        "metastore.thrift.port": str(port),
        "metastore.thrift.uris": f"thrift://127.0.0.1:{port}",
        "metastore.warehouse.dir": (workdir / "warehouse").as_uri(),
        "metastore.authentication": "CONFIG",
        "metastore.execute.setugi": "false",  # Hive refuses it with a password login: the login names the user
        "metastore.authentication.config.username": auth["username"],
        "metastore.authentication.config.password": auth["password"],
        "metastore.schema.verification": "true",
        "metastore.event.db.notification.api.auth": "false",
        "metastore.housekeeping.threads.on": "false",  # no compactor, no background cleaners: a benchmark's catalog
        "metastore.metrics.enabled": "false",
        # no rewriting of tables by client capabilities (Hive 4 turns managed tables into external ones for
        # clients like Spark that declare none)
        "metastore.metadata.transformer.class": " ",
    }


def _java(conf: Path, *args: str) -> list[str]:
    return [
        *java_command(),
        f"-Xmx{HEAP}",
        "-Djava.net.preferIPv4Stack=true",
        f"-Dlog4j.configurationFile={conf / 'log4j2.properties'}",
        "-cp",
        f"{conf}:{metastore_classpath()}",
        *args,
    ]


def up(workdir: Path) -> dict[str, Any]:
    state = status(workdir)
    if state:
        return state
    metastore_classpath(), metastore_classpath(client=True), postgres.bindir()  # fetched (or one line) first
    if process.owned(workdir, SERVICE):
        down(workdir)  # a stopped service's leftovers
    process.fresh_dir(workdir, SERVICE)
    workdir.chmod(0o711)  # PostgreSQL's account may traverse it (as root); nothing here is listable
    conf = workdir / "conf"
    conf.mkdir(mode=0o700)
    auth = {"username": USER, "password": secrets.token_urlsafe(24), "postgres_password": secrets.token_urlsafe(24)}
    port = free_port()
    state: dict[str, Any] = {
        "service": SERVICE,
        "workdir": str(workdir),
        "uri": f"thrift://127.0.0.1:{port}",
        "port": port,
        "auth": auth,
        "processes": [],
        "summary": "starting",
        "audit_log": str(workdir / "audit.log"),
        "log": str(workdir / "metastore.log"),
        "credentials": str(workdir / "credentials.jceks"),
    }
    with process.all_or_nothing(workdir, state, _stop_all, main=-1):
        pg_root = postgres.cluster_dir(workdir / "pg")
        state["pg_root"] = str(pg_root)
        entry = postgres.start(pg_root, auth["postgres_password"], DATABASE)
        state["processes"].append(entry)
        process.write_state(workdir, state)
        process.write_private(conf / "metastore-site.xml", _site(_settings(workdir, entry["port"], port, auth)))
        (conf / "log4j2.properties").write_text(LOG4J.format(log=state["log"], audit=state["audit_log"]))
        schema_started = time.monotonic()
        _run(
            _java(conf, SCHEMATOOL, "-initSchema", "-dbType", "postgres"),
            workdir / "schematool.log",
            "Hive's schematool (-initSchema -dbType postgres)",
        )
        state["schema_s"] = round(time.monotonic() - schema_started, 2)
        _credential_store(state, auth)
        marker = f"-Dstorbench.metastore={workdir}"
        proc = process.spawn(_java(conf, marker, MAIN), workdir, "metastore.out")
        state["processes"].append({"kind": "metastore", "pid": proc.pid, "marker": marker})
        process.write_state(workdir, state)
        _wait_thrift(state, proc, time.monotonic() + START_TIMEOUT_S)
    state["summary"] = (
        f"Hive metastore 4.0.1 pid {state['pid']} on {state['uri']}, schema in PostgreSQL "
        f"(pid {state['processes'][0]['pid']}, port {state['processes'][0]['port']}), up in "
        f"{state['startup_s']:.1f} s (schema {state['schema_s']:.1f} s); thrift login as "
        f"{USER} (SASL PLAIN)"
    )
    process.write_state(workdir, state)
    return state


def _run(argv: list[str], log: Path, what: str) -> None:
    env = {**os.environ, "METASTORE_HOME": str(SCRIPTS_HOME)}  # where schematool finds its SQL scripts
    with open(log, "ab") as out:
        done = subprocess.run(
            argv, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, timeout=600, env=env
        )
    if done.returncode != 0:
        raise EngineError(
            f"{what} failed with exit code {done.returncode}; last line: {process.last_line(log)} (log: {log})"
        )


def _credential_store(state: dict[str, Any], auth: dict[str, str]) -> None:
    """The password clients read (by user name) from a JCEKS store, written by Hadoop's own provider with the
    password on stdin; 0600."""
    path = Path(state["credentials"])
    argv = [
        *java_command(),
        "-cp",
        metastore_classpath(),
        str(CREDENTIAL_TOOL),
        "jceks://file" + str(path),
        auth["username"],
    ]
    done = subprocess.run(argv, input=auth["password"] + "\n", capture_output=True, text=True, timeout=120)
    if done.returncode != 0 or not path.exists():
        why = (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise EngineError(f"writing the metastore's credential store failed: {why[:300]}")
    path.chmod(0o600)


def _wait_thrift(state: dict[str, Any], proc: subprocess.Popen, deadline: float) -> None:
    log = Path(state["log"])
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise EngineError(
                f"the Hive metastore exited with code {proc.returncode} while starting; "
                f"last log line: {process.last_line(log)} (log: {log})"
            )
        if answers(state["uri"]):
            return
        time.sleep(0.5)
    raise EngineError(
        f"the Hive metastore was not listening on {state['uri']} within {START_TIMEOUT_S:.0f} s (log: {log})"
    )


def answers(uri: str, timeout: float = 2.0) -> bool:
    """Whether ``thrift://HOST:PORT`` takes a connection."""
    host, _, port = uri.removeprefix("thrift://").rstrip("/").rpartition(":")
    try:
        with socket.create_connection((host, int(port)), timeout=timeout):
            return True
    except (OSError, ValueError):
        return False


def client_env(state: dict[str, Any]) -> dict[str, str]:
    """What a client's shell needs: the URI, the user, and the credential store holding its password."""
    return {
        "STORBENCH_METASTORE_URI": state["uri"],
        "STORBENCH_METASTORE_USER": state["auth"]["username"],
        "HADOOP_CREDENTIAL_PROVIDER_PATH": "jceks://file" + state["credentials"],
    }


def status(workdir: Path) -> dict[str, Any] | None:
    return process.running_state(workdir)


def running(home: Path) -> dict[str, Any] | None:
    """The state of the metastore ``services up metastore`` runs under results home ``home``, or None."""
    return status(process.service_dir(home, SERVICE))


def _stop_all(state: dict[str, Any]) -> bool:
    """The metastore, then PostgreSQL; a cluster outside the service directory is removed with it."""
    stopped = process.stop_in_order(
        state.get("processes", []), ("metastore",), lambda e: process.stop_pid(e["pid"], e["marker"])
    )
    for entry in [e for e in state.get("processes", []) if e["kind"] == "postgres"]:
        stopped = postgres.stop(entry) or stopped
    pg_root = state.get("pg_root")
    if pg_root and not Path(pg_root).is_relative_to(state["workdir"]):
        postgres.remove_cluster(Path(pg_root))
    return stopped


def down(workdir: Path) -> bool:
    return process.take_down(workdir, SERVICE, _stop_all)
