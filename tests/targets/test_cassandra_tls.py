"""cassandra:// over TLS (issue 38 item 2), without a service: the URL's ``tls=1`` / ``ca=PATH``, the refusal of a
clear-text login to another machine (``--cql-insecure`` lets it through, and the manifest says so), what each
client is handed (the engine's ``cql.tls``, YCSB's properties, the management session's SSL context) and the
nodes' cassandra.yaml. The real run over TLS, its bytes captured, is tests/workloads/ycsb/test_ycsb_tls.py."""

from __future__ import annotations

import ssl
from types import SimpleNamespace

import pytest

from storbench import cli
from storbench.errors import InputError
from storbench.services import cassandra_conf
from storbench.services import cassandra_certs
from storbench.targets import TargetOptions, cassandra_login, parse_target
from storbench.targets.cassandra_tls import Tls, is_loopback, ssl_context
from storbench.workloads.base import get_workload
from storbench.workloads.ycsb import core_driver

REMOTE = "192.0.2.7"  # TEST-NET-1: nothing answers there, so a test that tried to connect would hang, not pass


@pytest.fixture
def ca(tmp_path):
    path = tmp_path / "ca.pem"
    path.write_text("-----BEGIN CERTIFICATE-----\n")  # parsing never reads it; the clients do
    return path


@pytest.fixture
def env_login(monkeypatch):
    """A login from $STORBENCH_CQL_USERNAME/PASSWORD, as `storbench services env cassandra` gives a shell."""
    monkeypatch.setattr(cassandra_login, "environment_login", None)
    monkeypatch.setenv("STORBENCH_CQL_USERNAME", "alice")
    monkeypatch.setenv("STORBENCH_CQL_PASSWORD", "pw-canary-tls")


@pytest.fixture
def no_login(monkeypatch):
    monkeypatch.setattr(cassandra_login, "environment_login", None)
    monkeypatch.delenv("STORBENCH_CQL_USERNAME", raising=False)


def _one_line(exc: BaseException) -> str:
    text = str(exc)
    assert text and "\n" not in text
    return text


def test_tls_1_trusts_the_system_store_and_ca_names_a_ca(ca, no_login):
    assert parse_target("cassandra://127.0.0.1:9042/ks").tls is None
    assert parse_target("cassandra://127.0.0.1:9042/ks?tls=0").tls is None
    system = parse_target("cassandra://127.0.0.1:9042/ks?tls=1")
    assert system.tls == Tls(None) and system.uri == "cassandra://127.0.0.1:9042/ks?tls=1"
    for query in (f"ca={ca}", f"tls=1&ca={ca}", f"ca={ca}&tls=1"):
        target = parse_target(f"cassandra://127.0.0.1:9042/ks?{query}")
        assert target.tls == Tls(ca)
        assert target.uri == f"cassandra://127.0.0.1:9042/ks?ca={ca}"  # recorded: cleanup reconnects as the run did
        assert target.manifest_config()["cql_tls"] == {"ca_file": str(ca)}
    assert parse_target("cassandra://127.0.0.1:9042/ks").manifest_config()["cql_tls"] is None


@pytest.mark.parametrize(
    "query, says",
    [
        ("tls=yes", "tls=yes is not allowed; tls=1 asks for TLS"),
        ("tls=0&ca={ca}", "tls=0 is not allowed"),
        ("tls=", "each once"),
        ("tls=1&tls=1", "each once"),
        ("ca=relative.pem", "ca=relative.pem is not an absolute path"),
        ("ca=/no/such/ca.pem", "ca=/no/such/ca.pem: no such file"),
        ("ssl=1", "tls=1 and/or ca=/ABS/PATH/CA.PEM"),
    ],
)
def test_bad_tls_options_are_one_line(ca, query, says):
    with pytest.raises(InputError) as err:
        parse_target(f"cassandra://127.0.0.1:9042/ks?{query.format(ca=ca)}")
    assert says in _one_line(err.value)


def test_loopback_is_127_8_ipv6_one_and_localhost_only():
    assert all(map(is_loopback, ["127.0.0.1", "127.0.0.5", "127.255.0.1", "::1", "localhost", "LOCALHOST"]))
    assert not any(map(is_loopback, ["10.0.0.1", REMOTE, "128.0.0.1", "db.example", "localhost.example"]))


@pytest.mark.parametrize("url", [f"cassandra://{REMOTE}:9042/ks", f"cassandra://127.0.0.1:9042,{REMOTE}:9042/ks"])
def test_a_clear_text_login_to_another_machine_is_refused_before_connecting(url, env_login):
    with pytest.raises(InputError) as err:
        parse_target(url)
    line = _one_line(err.value)
    assert f"the login of role alice would cross the network to {REMOTE} in clear text" in line
    assert "?tls=1" in line and "--cql-insecure" in line and "pw-canary-tls" not in line


def test_a_login_in_the_url_is_refused_too(tmp_path, no_login):
    secret = tmp_path / "pw"
    secret.write_text("pw\n")
    secret.chmod(0o600)
    with pytest.raises(InputError, match=r"role bob would cross the network to 192\.0\.2\.7"):
        parse_target(f"cassandra://{REMOTE}:9042/ks?user=bob&password_file={secret}")


def test_no_login_may_go_to_any_host_without_tls(no_login):
    assert parse_target(f"cassandra://{REMOTE}:9042/ks").insecure is False


def test_loopback_tls_and_the_flag_pass_and_only_the_flag_is_recorded(ca, env_login):
    for url in (
        "cassandra://127.0.0.1:9042/ks",
        "cassandra://localhost:9042/ks",
        f"cassandra://{REMOTE}/ks?tls=1",
        f"cassandra://{REMOTE}/ks?ca={ca}",
    ):
        target = parse_target(url)
        assert target.insecure is False and "cql_insecure" not in target.manifest_config()
    target = parse_target(f"cassandra://{REMOTE}:9042/ks", TargetOptions(cql_insecure=True))
    assert target.insecure is True and target.manifest_config()["cql_insecure"] is True


def test_the_flag_is_refused_where_it_would_do_nothing_or_contradict(ca, tmp_path, no_login):
    with pytest.raises(InputError, match=r"^--cql-insecure: applies to cassandra:// targets only; the target is "):
        parse_target(str(tmp_path), TargetOptions(cql_insecure=True))
    with pytest.raises(InputError, match=r"^--cql-insecure: the target .* asks for TLS"):
        parse_target(f"cassandra://{REMOTE}:9042/ks?ca={ca}", TargetOptions(cql_insecure=True))


def test_the_cli_refuses_in_one_line_with_exit_2(env_login, tmp_path, capsys):
    code = cli.main(
        [
            "--results",
            str(tmp_path / "home"),
            "run",
            "ycsb-a",
            "--target",
            f"cassandra://{REMOTE}:9042/ks",
            "--set",
            "restore=none",
        ]
    )
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and "would cross the network to 192.0.2.7 in clear text" in err[0]


def _params(name: str, **more):
    return {p.name: p.default for p in get_workload(name, "t").params} | more


@pytest.mark.parametrize(
    "query, section", [("", None), ("?tls=1", {"ca_file": None}), ("?ca={ca}", {"ca_file": "{ca}"})]
)
def test_the_engine_s_job_asks_for_tls_as_the_url_does(ca, no_login, query, section):
    target = parse_target(f"cassandra://127.0.0.1:9042/ks{query.format(ca=ca)}")
    ctx = SimpleNamespace(target_as=lambda cls: target)
    cql = get_workload("ycsb-load", "t")._job(ctx, _params("ycsb-load"))["cql"]  # ycsb-a..f's section: the same
    if section is None:
        assert "tls" not in cql
    else:
        assert cql["tls"] == {"ca_file": section["ca_file"] and section["ca_file"].format(ca=ca)}


def test_ycsb_s_binding_gets_tls_as_properties(ca):
    params = _params("ycsb-a", operationcount=10)
    plain = core_driver.properties("a", params, [("127.0.0.1", 9042)], "ks", "usertable")
    assert not any(name.startswith("cassandra.tls") for name in plain)
    system = core_driver.properties("a", params, [("127.0.0.1", 9042)], "ks", "usertable", tls=Tls())
    assert system["cassandra.tls"] == "true" and "cassandra.tls_ca_file" not in system
    private = core_driver.properties("load", params, [("127.0.0.1", 9042)], "ks", "usertable", tls=Tls(ca))
    assert private["cassandra.tls"] == "true" and private["cassandra.tls_ca_file"] == str(ca)


def test_the_management_session_checks_certificate_and_host_name(tmp_path):
    context = ssl_context(Tls())
    assert context.verify_mode == ssl.CERT_REQUIRED and context.check_hostname


def test_the_nodes_serve_tls_and_plain_cql_with_the_service_s_keystore(tmp_path):
    tls = {"ca_file": "/s/tls/ca.pem", "keystore": "/s/tls/keystore.p12", "keystore_password": "kp"}
    text = cassandra_conf.node_yaml(tmp_path, "127.0.0.1", {"storage": 1, "ssl_storage": 2, "native": 3}, tls)
    block = text[text.index("client_encryption_options:") :].splitlines()[:7]
    assert block == [
        "client_encryption_options:",
        "  enabled: true",
        "  optional: true",
        "  keystore: /s/tls/keystore.p12",
        "  keystore_password: kp",
        "  store_type: PKCS12",
        "  require_client_auth: false",
    ]
    assert cassandra_certs.client_env({"tls": tls}) == {"SSL_CERTFILE": "/s/tls/ca.pem"}
