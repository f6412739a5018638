"""A direct scrape is timed by the node's own clock (node_time_seconds, the exporter's time collector), offset to
this machine's once: the answer's arrival, moved by a loaded machine's delays, no longer moves a rate."""

from storbench.telemetry.exporter import ExporterReader


def _at(node_time: float) -> dict:
    return {"node_time_seconds": [({}, node_time)]}


def test_intervals_are_the_nodes_own_whatever_the_round_trip():
    reader = ExporterReader("http://127.0.0.1:1/metrics")
    first = reader._when(_at(5000.0), 10.0, 10.2)  # anchored at the first scrape's middle
    # the next answer arrived 0.4 s late (a loaded scraper): the node collected exactly 1 s after the first
    second = reader._when(_at(5001.0), 11.0, 11.6)
    assert abs(first - 10.1) < 1e-9 and abs((second - first) - 1.0) < 1e-9


def test_a_step_of_the_nodes_clock_takes_the_offset_again_and_no_stamp_falls_back_to_arrival():
    reader = ExporterReader("http://127.0.0.1:1/metrics")
    reader._when(_at(5000.0), 10.0, 10.2)
    stepped = reader._when(_at(9000.0), 11.0, 11.2)  # the node's clock jumped an hour: re-anchored
    assert abs(stepped - 11.1) < 1e-9
    assert reader._when({}, 12.0, 12.4) == 12.2
