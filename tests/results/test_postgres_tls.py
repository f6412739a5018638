"""Issue 25, PostgreSQL results index: TLS required to a host other than loopback unless the URL sets sslmode
(a real server listening on this machine's non-loopback address too, without TLS: refused in one line, and
reached with sslmode=disable), and the decision itself for the forms a URL takes."""

from __future__ import annotations

import socket

import pytest

from storbench.errors import InputError
from storbench.results.postgres import PostgresIndex, password_warning, tls_default


@pytest.mark.parametrize(
    "url, mode",
    [
        ("postgresql://bench@127.0.0.1:5432/r", None),
        ("postgresql://bench@localhost/r", None),
        ("postgresql://bench@[::1]:5432/r", None),
        ("postgresql:///r", None),
        ("postgresql:///r?host=/run/pg", None),
        ("postgresql://bench@192.0.2.7:5432/r", "require"),
        ("postgresql://bench@db.example.invalid/r", "require"),
        ("postgresql://bench@127.0.0.1,192.0.2.7/r", "require"),  # any host beyond loopback
        ("postgresql://bench@192.0.2.7/r?sslmode=disable", None),
        ("postgresql://bench@192.0.2.7/r?sslmode=verify-full", None),
    ],
)
def test_which_urls_get_tls_required(url, mode, monkeypatch):
    monkeypatch.delenv("PGSSLMODE", raising=False)
    monkeypatch.delenv("PGHOST", raising=False)
    assert tls_default(url) == mode


def test_pgsslmode_counts_as_the_users_choice(monkeypatch):
    monkeypatch.setenv("PGSSLMODE", "prefer")
    assert tls_default("postgresql://bench@192.0.2.7/r") is None


def test_a_password_in_the_url_is_warned_about_without_showing_it():
    assert password_warning("postgresql://bench@db/r", "--results") is None
    for url in ("postgresql://bench:hunter22@db/r", "postgresql://bench@db/r?password=hunter22"):
        warning = password_warning(url, "--results")
        assert warning and "hunter22" not in warning and "PGPASSFILE" in warning and warning.count("\n") == 0


def _outward_address() -> str | None:
    """This machine's address on its default route (no packet is sent), when it has one beyond loopback."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("192.0.2.1", 9))
        except OSError:
            return None
        address = probe.getsockname()[0]
    return None if address.startswith("127.") else address


@pytest.fixture(scope="module")
def outward_postgres():
    from tests.pgserver import PgServer

    address = _outward_address()
    if address is None:
        pytest.skip("this machine has no address beyond loopback")
    server = PgServer(listen=f"127.0.0.1,{address}")
    try:
        yield server, address
    finally:
        server.stop()


@pytest.mark.postgres
def test_a_server_without_tls_beyond_loopback_is_one_line_unless_sslmode_says(outward_postgres, monkeypatch):
    server, address = outward_postgres
    monkeypatch.delenv("PGSSLMODE", raising=False)
    url = server.url(host=address)
    index = PostgresIndex(url)
    with pytest.raises(InputError) as refused:
        index.runs()
    message = str(refused.value)
    assert message == (
        f"--results postgresql://***@{address}:{server.port}/postgres: the server does not offer TLS, "
        f"which storbench requires for a host other than loopback; set sslmode in the URL "
        f"(?sslmode=verify-full with the server's CA, or ?sslmode=disable for clear text)"
    )
    assert server.password not in message
    plain = PostgresIndex(f"{url}?sslmode=disable")  # the user's choice
    assert plain.runs() == []
    plain.close()
    assert PostgresIndex(server.url()).runs() == []  # loopback: no TLS asked for


@pytest.mark.postgres
def test_the_cli_refuses_in_one_line_and_leaves_nothing(outward_postgres, tmp_path):
    from tests.results.test_postgres_store import TINY, storbench

    server, address = outward_postgres
    home, target = tmp_path / "home", tmp_path / "target"
    target.mkdir()
    done = storbench(home, server.url(host=address), "run", "fio-write", "--target", str(target), *TINY)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.splitlines()[-1].startswith(f"storbench: error: --results postgresql://***@{address}:")
    assert "does not offer TLS" in done.stderr and "Traceback" not in done.stderr
    assert list(target.iterdir()) == []
    assert not (home / "runs").exists() or list((home / "runs").iterdir()) == []
