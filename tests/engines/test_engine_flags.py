"""Each engine contributes its own `storbench run` flags and reads them back; the CLI names none."""

import argparse

import pytest

from storbench.cli.parser import build_parser
from storbench.engines import base
from storbench.engines.base import Engine
from storbench.engines.capabilities import AddsRunFlags
from storbench.engines.lifecycle import engine_flag_options
from storbench.errors import InputError


class Flagged(Engine, AddsRunFlags):
    name = "test-flagged"

    @classmethod
    def add_flags(cls, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--flagged-depth", type=int, default=4, help="a test engine's own flag")

    @classmethod
    def read_flags(cls, args: argparse.Namespace) -> dict:
        return {"flagged_depth": args.flagged_depth}


@pytest.fixture
def flagged():
    with base.registered(Flagged):  # beside every discovered engine
        yield Flagged


def test_a_new_engine_s_flag_reaches_the_run_s_engine_options(flagged):
    args = build_parser().parse_args(["run", "null", "--flagged-depth", "16"])
    assert engine_flag_options(args)["flagged_depth"] == 16
    assert engine_flag_options(build_parser().parse_args(["run"]))["flagged_depth"] == 4


def test_spark_s_flags_are_its_own_and_read_back_as_before():
    args = build_parser().parse_args(["run", "--spark-master", "local[2]", "--spark-conf", "spark.a=1"])
    assert engine_flag_options(args) == {"spark_master": "local[2]", "spark_conf": {"spark.a": "1"}}
    with pytest.raises(InputError, match=r"^--spark-conf 'bad': expected key=value"):
        engine_flag_options(build_parser().parse_args(["run", "--spark-conf", "bad"]))
