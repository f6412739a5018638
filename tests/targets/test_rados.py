"""rados:// targets: the pool, the cluster's conf (named or storbench's own) and the run root that names both."""

import re

import pytest

from storbench.errors import InputError, TargetError
from storbench.targets import TargetOptions, parse_target
from storbench.targets import rados as rados_module
from storbench.targets.rados import RadosTarget


def test_pool_on_our_own_cluster(tmp_path, monkeypatch):
    state = {"conf": "/srv/ceph/ceph.conf", "osd_root": "/srv/ceph/osd"}
    monkeypatch.setattr(rados_module, "service_status", lambda name, home: state)
    target = parse_target("rados://storbench", TargetOptions(home=tmp_path))
    assert isinstance(target, RadosTarget)
    assert (target.uri, target.pool, target.conf()) == ("rados://storbench", "storbench", "/srv/ceph/ceph.conf")
    assert str(target.local_path()) == "/srv/ceph/osd"
    target.precheck(0)
    assert target.claim("r1") == "rados://storbench?conf=/srv/ceph/ceph.conf"
    assert not target.release()  # a pool holds no marker: the workloads remove their own objects


def test_pool_on_a_named_cluster(tmp_path):
    conf = tmp_path / "ceph.conf"
    conf.write_text("[global]\n")
    target = parse_target(f"rados://data_1?conf={conf}")
    assert isinstance(target, RadosTarget)
    assert (target.uri, target.conf(), target.local_path()) == (f"rados://data_1?conf={conf}", str(conf), None)
    assert target.claim("r1") == f"rados://data_1?conf={conf}"


def test_no_cluster_to_reach_is_refused_before_anything_starts():
    with pytest.raises(
        TargetError,
        match=r"storbench's Ceph is not running; start it with `storbench services up "
        r"ceph` or name a cluster's conf: rados://pool\?conf=PATH",
    ):
        parse_target("rados://pool").precheck(0)


@pytest.mark.parametrize("text", ["rados://", "rados://pool/sub", "rados://po!ol", "rados://pool?user=admin"])
def test_bad_forms(text):
    with pytest.raises(
        InputError,
        match=r"a rados:// target is rados://POOL \(on `storbench services up ceph`\) "
        r"or rados://POOL\?conf=/etc/ceph/ceph.conf",
    ):
        parse_target(text)


@pytest.mark.parametrize("conf", ["", "/nonexistent/ceph.conf"])
def test_a_named_conf_must_be_a_file(conf):
    with pytest.raises(TargetError, match=re.escape(f"the Ceph conf {conf or '(empty)'} is not a file")):
        parse_target(f"rados://pool?conf={conf}")
