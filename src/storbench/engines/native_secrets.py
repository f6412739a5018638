"""How the native engine gets its secrets: the job's S3 keys and CQL login taken out of the job file and handed
over in a pipe of their own (never a file, never the command line), and the environment the engine starts with,
without them."""

from __future__ import annotations

import json
import os
from typing import Any

from storbench.errors import EngineError


# the job's S3 keys -> the environment variables the engine reads them from
CREDENTIAL_ENV = {"access_key": "STORBENCH_S3_ACCESS_KEY", "secret_key": "STORBENCH_S3_SECRET_KEY"}
# the job's CQL login (cql.username / cql.password) -> the names the engine reads it by when the job has none
CQL_LOGIN_ENV = {"username": "STORBENCH_CQL_USERNAME", "password": "STORBENCH_CQL_PASSWORD"}
SECRETS_FILE_ENV = "STORBENCH_SECRETS_FILE"  # the engine reads its secrets from the JSON file this names


def split_credentials(job: dict[str, Any]) -> tuple[dict[str, Any], dict[str, str]]:
    """(the job without its S3 keys and CQL login: what a job file may hold, the secrets by the names the
    engine reads them by)."""
    secrets: dict[str, str] = {}
    for protocol, names in (("s3", CREDENTIAL_ENV), ("cql", CQL_LOGIN_ENV)):
        section = job.get(protocol)
        if isinstance(section, dict) and any(name in section for name in names):
            secrets |= {names[name]: str(section[name]) for name in names if name in section}
            job = {**job, protocol: {k: v for k, v in section.items() if k not in names}}
    return job, secrets


def secrets_pipe(secrets: dict[str, str]) -> tuple[int, str]:
    """The secrets in a pipe of their own: (its read end, for the engine to inherit (``pass_fds``), the path the
    engine opens it by). They never reach a file: written into the pipe here, its write end closed, they wait in
    the kernel until the engine reads them at its start, and vanish with it, even when storbench is killed."""
    data = json.dumps(secrets).encode()
    if len(data) > 32768:  # a pipe holds 64 KiB: the write must not wait for a reader
        raise EngineError(f"the engine's secrets are too large to hand over ({len(data)} bytes)")
    read_end, write_end = os.pipe()
    try:
        os.write(write_end, data)
    finally:
        os.close(write_end)
    return read_end, f"/proc/self/fd/{read_end}"


def _engine_env(secrets: dict[str, str]) -> tuple[dict[str, str], tuple[int, ...]]:
    """One engine process's environment and the descriptors it inherits: ours without the secrets' names, and
    the secrets in a pipe of their own (:func:`secrets_pipe`) the environment names, never holds
    (/proc/PID/environ and every child's copy of it stay free of them). The caller closes the descriptors once
    the engine is started."""
    env = {k: v for k, v in os.environ.items() if k not in secrets and k not in CQL_LOGIN_ENV.values()}
    env.pop(SECRETS_FILE_ENV, None)
    if not secrets:
        return env, ()
    read_end, path = secrets_pipe(secrets)
    env[SECRETS_FILE_ENV] = path
    return env, (read_end,)
