"""STORBENCH_JVM_OPTS: extra options for every JVM daemon and Spark executor storbench starts (the test suite's
short-lived JVMs use the client compiler only); refused in one line when it is not JVM options or names a secret,
which the command line would show to every user."""

import pytest

from storbench.engines.spark import SparkEngine
from storbench.errors import InputError
from storbench.services.jvm import JVM_OPTS_ENV, extra_options, java_command


def test_the_options_are_shell_words_after_java(monkeypatch):
    monkeypatch.setenv(JVM_OPTS_ENV, "-XX:TieredStopAtLevel=1 '-Dstorbench.note=a b'")
    assert extra_options() == ["-XX:TieredStopAtLevel=1", "-Dstorbench.note=a b"]
    assert java_command()[1:] == ["-XX:TieredStopAtLevel=1", "-Dstorbench.note=a b"]
    monkeypatch.setenv(JVM_OPTS_ENV, "")
    assert extra_options() == []


@pytest.mark.parametrize(
    "text, said",
    [
        (
            "-Djavax.net.ssl.keyStorePassword=hunter2",
            "STORBENCH_JVM_OPTS: Djavax.net.ssl.keyStorePassword names a secret",
        ),
        ("-Xmx1g oops", "STORBENCH_JVM_OPTS: 'oops' is not a JVM option"),
        ("-Dx='open", "STORBENCH_JVM_OPTS: No closing quotation"),
    ],
)
def test_a_secret_or_a_non_option_is_one_line(monkeypatch, text, said):
    monkeypatch.setenv(JVM_OPTS_ENV, text)
    with pytest.raises(InputError) as refused:
        extra_options()
    assert str(refused.value).startswith(said) and "\n" not in str(refused.value)
    assert "hunter2" not in str(refused.value)


def test_spark_executors_get_them_unless_the_run_sets_its_own(monkeypatch):
    monkeypatch.setenv(JVM_OPTS_ENV, "-XX:TieredStopAtLevel=1")
    assert (
        SparkEngine("local[1]", {}).effective_conf()["spark.executor.defaultJavaOptions"] == "-XX:TieredStopAtLevel=1"
    )
    mine = {"spark.executor.defaultJavaOptions": "-XX:+UseSerialGC"}
    assert SparkEngine("local[1]", mine).effective_conf()["spark.executor.defaultJavaOptions"] == "-XX:+UseSerialGC"
    monkeypatch.delenv(JVM_OPTS_ENV)
    assert "spark.executor.defaultJavaOptions" not in SparkEngine("local[1]", {}).effective_conf()
