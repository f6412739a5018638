"""The Spark cluster's shared secret and what a client of it needs: ``services up spark`` writes the secret with
the other server settings into one private file master and workers are given by path; a client (storbench's
Spark engine, a user's shell) reads it from there, with the driver address a lab-placed cluster's executors
reach."""

from __future__ import annotations

import os
import secrets
from pathlib import Path
from typing import Any

from storbench.errors import EngineError
from storbench.services import process

SERVICE = "spark"  # its service directory's name


AUTH_FILE = Path("private") / "spark-auth.properties"  # under the service dir: the secret and server settings
SECRET_KEY = "spark.authenticate.secret"
ENV_MASTER = "STORBENCH_SPARK_MASTER"  # client_env's names
ENV_PROPERTIES = "STORBENCH_SPARK_PROPERTIES"


def write_auth(workdir: Path) -> None:
    """The generated secret and the server settings, in a private file master and workers are given by path."""
    private = (workdir / AUTH_FILE).parent
    private.mkdir(mode=0o700)
    private.chmod(0o700)  # whatever the umask
    settings = {
        "spark.authenticate": "true",
        SECRET_KEY: secrets.token_urlsafe(32),
        "spark.ui.killEnabled": "false",  # the web UIs are not authenticated: no kill buttons there
        "spark.master.rest.enabled": "false",
    }  # no unauthenticated REST submissions
    process.write_private(workdir / AUTH_FILE, "".join(f"{k}={v}\n" for k, v in settings.items()))


def client_conf(home: Path | None, master_url: str) -> dict[str, str]:
    """The Spark settings a client of a cluster ``services up spark`` started needs (``spark.authenticate`` and
    its secret) when ``master_url`` is that cluster's: the one under results home ``home``, else the one the
    environment names (``client_env``: a run from another results home); else none."""
    path = _auth_file(home, master_url)
    if path is None:
        return {}
    try:
        lines = path.read_text().splitlines()
    except OSError as exc:
        raise EngineError(
            f"cannot read the secret of `services up spark` ({path}): {exc.strerror or exc}; "
            f"run as the user who started the cluster"
        ) from None
    conf = dict(line.split("=", 1) for line in lines if "=" in line)
    driver = _driver_settings(home, master_url)
    return {**driver, **{key: conf[key] for key in ("spark.authenticate", SECRET_KEY) if key in conf}}


def _driver_settings(home: Path | None, master_url: str) -> dict[str, str]:
    """A lab-placed cluster's executors reach the driver on this machine's end of the lab's bridge."""
    state = process.running_state(process.service_dir(home, SERVICE)) if home is not None else None
    if not state or state.get("uri") != master_url or not state.get("driver_host"):
        return {}
    return {"spark.driver.host": state["driver_host"], "spark.driver.bindAddress": state["driver_host"]}


def _auth_file(home: Path | None, master_url: str) -> Path | None:
    state = process.running_state(process.service_dir(home, SERVICE)) if home is not None else None
    if state and state.get("uri") == master_url and state.get("auth_file"):
        return Path(state["auth_file"])
    if os.environ.get(ENV_MASTER) == master_url and os.environ.get(ENV_PROPERTIES):
        return Path(os.environ[ENV_PROPERTIES])
    return None


def client_env(state: dict[str, Any]) -> dict[str, str]:
    """What a shell needs to use the cluster: ``spark-submit --master "$STORBENCH_SPARK_MASTER"
    --properties-file "$STORBENCH_SPARK_PROPERTIES" ...`` (the file, not the secret, is named)."""
    return {ENV_MASTER: state["uri"], ENV_PROPERTIES: state["auth_file"]}
