"""issue 38 item 4: the metastore's PostgreSQL password reaches psql in a 0600 passfile of a private directory,
removed as soon as psql exits; never in its environment (PGPASSWORD) or on its command line."""

import os
import stat
import subprocess
from pathlib import Path

from storbench.services import postgres

CANARY = "pg:pw\\canary-38"  # a ':' and a '\\' the passfile escapes


def test_psql_gets_the_password_in_a_private_passfile_removed_after(monkeypatch):
    seen = {}

    def run(argv, env=None, **_):
        passfile = Path(env["PGPASSFILE"]) if env and "PGPASSFILE" in env else None
        seen.update(
            argv=argv,
            env=env,
            passfile=passfile,
            mode=stat.S_IMODE(passfile.stat().st_mode) if passfile else None,
            folder_mode=stat.S_IMODE(passfile.parent.stat().st_mode) if passfile else None,
            text=passfile.read_text() if passfile else None,
        )
        return subprocess.CompletedProcess(argv, 0, "", "")

    monkeypatch.setattr(postgres, "bindir", lambda: Path("/usr/lib/postgresql/bin"))
    monkeypatch.setenv("PGPASSWORD", "the-user-s-own")
    port = 54329
    assert postgres.create_database(port, CANARY, "hive", run=run).returncode == 0
    assert seen["argv"][0].endswith("psql") and seen["argv"][seen["argv"].index("-p") + 1] == str(port)
    env = seen["env"]
    assert "PGPASSWORD" not in env and not [k for k, v in env.items() if CANARY in v]
    assert not [a for a in seen["argv"] if CANARY in a]
    assert seen["text"] == f"127.0.0.1:{port}:postgres:{postgres.USER}:pg\\:pw\\\\canary-38\n"
    assert seen["mode"] == 0o600 and seen["folder_mode"] == 0o700
    assert seen["passfile"].parent.name.startswith("storbench-pgpass-")
    assert not seen["passfile"].parent.exists()  # removed as soon as psql exited
    assert os.environ["PGPASSWORD"] == "the-user-s-own"  # storbench's own environment is left as it was
