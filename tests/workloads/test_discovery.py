"""Workload modules are found by discovery: no list names them."""

import sys

import pytest

import storbench.workloads as package
from storbench.suites import builtin_suites, load_suite
from storbench.workloads import base

EXTRA = """
from storbench.workloads.base import Workload, register


@register
class Extra(Workload):
    name = "{name}"
"""


@pytest.fixture
def extra_package_dir(tmp_path, monkeypatch):
    """A second folder on storbench.workloads' path, and the registry restored afterwards."""
    monkeypatch.setattr(package, "__path__", [*package.__path__, str(tmp_path)])
    monkeypatch.setattr(base, "REGISTRY", dict(base.REGISTRY))
    yield tmp_path
    for name in [m for m in sys.modules if m.startswith("storbench.workloads.zz_")]:
        del sys.modules[name]


def test_every_workload_lives_under_storbench_workloads():
    for name, cls in base.all_workloads().items():
        assert cls.__module__.startswith("storbench.workloads."), (name, cls.__module__)
        assert cls.name == name


def test_every_builtin_suite_finds_its_workloads():
    workloads = base.all_workloads()
    for suite in builtin_suites():
        for entry in load_suite(suite).entries():
            assert entry.workload in workloads, (suite, entry.workload)


def test_a_new_module_is_found_without_editing_a_list(extra_package_dir):
    (extra_package_dir / "zz_extra.py").write_text(EXTRA.format(name="zz-extra"))
    workloads = base.all_workloads(rescan=True)
    assert workloads["zz-extra"].__module__ == "storbench.workloads.zz_extra"
    assert "groupby" in workloads  # the built-in families are still there


def test_a_duplicate_name_fails_naming_both_modules(extra_package_dir):
    (extra_package_dir / "zz_clash.py").write_text(EXTRA.format(name="groupby"))
    with pytest.raises(
        RuntimeError, match="'groupby' registered twice.*spark_transforms and storbench.workloads.zz_clash"
    ):
        base.all_workloads(rescan=True)
