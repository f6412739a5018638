"""Known-truth tests: storbench, run inside the lab guest, against devices whose behaviour QEMU or the
device mapper fixes (write limits of 20, 21, 30 and 45 MiB/s, 200 IOPS, +100 ms per write, writes failing past
a point).

Every figure checked is one storbench stored (samples.jsonl) or printed (`compare` on the host),
not fio's own output. Emulated speeds are the emulator's; only the limits are known truths.
"""

from __future__ import annotations

import functools
import json
import re

import pytest

from tests.lab.conftest import GuestRun, storbench_in_guest, storbench_on_host

pytestmark = pytest.mark.lab

MIB_S = 1048576 / 1e6  # 1 MiB/s in storbench's decimal MB/s
FIO = ["--set", "numjobs=1", "--set", "iodepth=16"]
SECTOR = 512


def values(run, metric: str) -> list[float]:
    return [s["value"] for s in run.samples if s["metric"] == metric]


def within(value: float, truth: float, tolerance: float) -> bool:
    return abs(value - truth) <= tolerance * truth


# One interleaved experiment over the write-limited devices (storbench run --target A --target B ...): repetition
# i of every device runs in round i, so compare pairs them (a paired t-test on the log ratios). Its tests read
# the runs they need by label.
WRITE_LIMITED = {"bw20": "bw20", "bw20-twin": "bw20b", "bw21": "bw21", "bw30": "bw30", "bw45": "bw45"}
# compare's paired test needs 3; the fourth keeps a true 5% difference significant when one round is disturbed
# (ci41, the host stealing 10-50% of the CPU: the third round's 21/20 ratio fell to 1.035, and three rounds,
# 2 degrees of freedom, gave p=0.025 and q=0.06: "may be noise")
REPEAT = 4


@pytest.fixture(scope="session")
def write_limited(lab, host_steal) -> dict[str, GuestRun]:
    """fio-write (256 KiB, iodepth 16, 4 s) on every write-limited device, interleaved, 4 rounds, at the
    default telemetry interval (1 s); label -> its run.

    256 KiB, not 1 MiB: at 20 MiB/s one 1 MiB write more or less in a telemetry interval is 5% of it. QEMU's
    throttle lets an idle device burst a tenth of a second of its rate (plus the write that fills its bucket)
    before holding it to the limit. fio's bandwidth over 4 s takes all of it, the same share on every device
    (+2.5%): its ratios are the limits'. Maximum write throughput is the peak over 3 s of 1 s intervals: the
    burst shows only when fio's first write lands within a tenth of a second after a telemetry tick (up to
    +3.6%), so it moves that metric by 0-3.6% from repetition to repetition, one device and not the other.
    """
    targets = [
        arg for label, serial in WRITE_LIMITED.items() for arg in ("--target", lab.device(serial), "--label", label)
    ]
    # A quiet guest first: what the tests before wrote (the guard cases' mkfs, buffered) is flushed now, not by
    # the kernel's writeback in the middle of the first repetition, which took the one emulator thread's time
    # (two CI rehearsals: the first repetition of 20 MiB/s at 19.4-19.6 MB/s, the later ones at 20.97-20.99)
    assert lab.run("sync").rc == 0
    experiment = functools.partial(
        storbench_in_guest,
        lab,
        "fio-write",
        *targets,
        "--allow-device-overwrite",
        "--repeat",
        str(REPEAT),
        "--set",
        "size=512m",
        "--set",
        "bs=256k",
        "--set",
        "runtime_s=4",
        *FIO,
        timeout_s=600,
    )
    run, span = host_steal.measure("the write-limited devices' experiment", experiment)
    assert run.rc == 0, run.stderr
    span.skip_if_stolen()  # every test of it rests on the limits holding
    runs = [GuestRun(run.rc, run.stdout, run.stderr, path) for path in run.run_dirs]
    by_label = {r.manifest["label"]: r for r in runs}
    assert set(by_label) == set(WRITE_LIMITED), sorted(by_label)
    experiments = {r.manifest["experiment"]["id"] for r in runs}
    assert len(experiments) == 1, experiments
    return by_label


def compared(lab, base: GuestRun, other: GuestRun, metric: str) -> tuple[dict, dict, str]:
    """compare (base vs other): fio-write's JSON row for ``metric`` (any phase, one row), the whole JSON, and
    the terminal text."""
    ids = base.manifest["run_id"], other.manifest["run_id"]
    done = storbench_on_host(lab, "compare", *ids, "--format", "json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    rows = [r for r in report["rows"] if r["workload"] in ("fio-write", "all operations") and r["metric"] == metric]
    assert len(rows) == 1, [(r["workload"], r["phase"], r["metric"], r["labels"]) for r in rows]
    text = storbench_on_host(lab, "compare", *ids)
    assert text.returncode == 0, text.stderr
    return rows[0], report, text.stdout


def per_round(base: GuestRun, other: GuestRun, metric: str) -> str:
    """Each round's values and ratio, for the test's output."""
    a, b = values(base, metric), values(other, metric)
    return ", ".join(f"{x:.2f}->{y:.2f} ({y / x:.4f})" for x, y in zip(a, b))


def headlines_section(text: str) -> list[str]:
    """The lines of compare's "Headlines" section."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.strip().startswith("Headlines"))
    section = []
    for line in lines[start + 1 :]:
        if not line.strip():
            break
        section.append(line.strip())
    return section


def test_a_20_mib_s_device_writes_at_20_mib_s_by_fio_and_by_device_telemetry(lab, write_limited):
    """Also what held it (issue 40's N=1): `show` says the device, which QEMU's throttle keeps busy with the
    writes it holds back, not the guest's CPU."""
    run = write_limited["bw20"]
    truth = 20 * MIB_S  # 20.97 MB/s
    bw, device = values(run, "fio_bw_mbps"), values(run, "max_write_mbps")
    assert len(bw) == len(device) == REPEAT
    print(f"known truth: 20 MiB/s = {truth:.2f} MB/s; fio_bw_mbps {bw}; max_write_mbps {device}")
    assert all(within(v, truth, 0.05) for v in bw), bw
    assert all(within(v, truth, 0.05) for v in device), device
    shown = storbench_on_host(lab, "show", run.manifest["run_id"])
    assert shown.returncode == 0, shown.stderr
    lines = [line.strip() for line in shown.stdout.splitlines()]
    said = next(line for line in lines[lines.index("fio-write") :] if line.startswith("bound by: "))
    print(f"known truth: device-bound; show: {said}")
    assert said.startswith("bound by: device (device ") and said.endswith(": the storage set this figure"), said


def test_compare_calls_a_device_5_percent_faster_significant_with_its_ratio_in_the_interval(lab, write_limited):
    """21 vs 20 MiB/s, interleaved: significant, higher, the ratio within 2 points of 1.05 and its 95% interval
    covering 1.05, in fio's bandwidth: the bytes the device took over the run's seconds, the limit's quantity.
    (Not maximum write throughput: a 3 s peak whose share of the throttle's burst after idle varies by 0-3.6%
    with where fio's first write falls between telemetry ticks, the size of the difference tested here.)"""
    metric = "fio_bw_mbps"
    base, other = write_limited["bw20"], write_limited["bw21"]
    row, _, _ = compared(lab, base, other, metric)
    delta = row["deltas"][1]
    truth = 21 / 20
    print(
        f"known truth: {truth}; {metric} per round {per_round(base, other, metric)}; compare: {delta['words']}, "
        f"ratio {delta['ratio']:.4f}, 95% CI {delta['ci_low']:.4f}..{delta['ci_high']:.4f} ({delta['test']}), "
        f"p={delta['p_value']:.3g} q={delta['q_value']:.3g}, {delta['significance']}"
    )
    assert delta["test"] == "paired", delta
    assert delta["significance"] == "significant", delta
    assert delta["verdict"] == "better" and delta["ratio"] > 1, delta
    assert abs(delta["ratio"] - truth) <= 0.02, delta
    # The interval covers 21/20 within 0.3%: the throttle's burst after idle (a tenth of a second of the rate plus
    # the write that fills its bucket) is nearly, not exactly, the same share of both devices' bytes (+2.6% and
    # +2.4% in a CI rehearsal, where three rounds at 1.0479-1.0491 gave the interval 1.0469..1.0499).
    assert delta["ci_low"] - 0.003 <= truth <= delta["ci_high"] + 0.003, delta


def test_compare_calls_two_identical_devices_interleaved_no_headline(lab, write_limited):
    base, twin = write_limited["bw20"], write_limited["bw20-twin"]
    row, report, text = compared(lab, base, twin, "fio_bw_mbps")
    delta = row["deltas"][1]
    significant = [
        (r["workload"], r["metric"], r["labels"], d["words"], d["q_value"])
        for r in report["rows"]
        for d in r["deltas"][1:]
        if d and d["significance"] == "significant"
    ]
    print(
        f"known truth: same device; fio_bw_mbps per round {per_round(base, twin, 'fio_bw_mbps')}; compare: "
        f"{delta['words']}, p={delta['p_value']:.3g}, {delta['significance']}; headlines "
        f"{[h['text'] for h in report['headlines']]}; significant rows {significant}"
    )
    assert report["headlines"] == [], report["headlines"]
    [said] = headlines_section(text)
    assert said.startswith("(no significant differences; changes under "), text
    assert delta["verdict"] == "no change", delta  # under 2%: whether or not a test calls it significant


def test_compare_says_45_mib_s_against_30_is_50_percent_more_write_throughput_at_the_default_interval(
    lab, write_limited
):
    """The headline's figure is the ratio of the two devices' maxima over their repetitions (the paper's rule),
    so one repetition whose 3 s peak caught the throttle's burst after idle (up to +3.6%, see write_limited)
    moves it by up to 5 points. Seen in 6 experiments: 48, 53, 46, 50, 54 and 52% (the paired per-round
    ratios' geometric mean 49-52%, every 95% CI covering +50%)."""
    base, other = write_limited["bw30"], write_limited["bw45"]
    assert base.manifest["config"]["telemetry_interval_s"] == 1.0  # the default, no --interval
    row, report, text = compared(lab, base, other, "max_write_mbps")
    delta = row["deltas"][1]
    said = [h for h in report["headlines"] if h["metric"] == "max_write_mbps"]
    printed = [line for line in headlines_section(text) if "maximum write throughput" in line]
    print(
        f"known truth: +50%; max_write_mbps per round {per_round(base, other, 'max_write_mbps')}; compare: "
        f"{delta['words']}, ratio {delta['ratio']:.4f}, 95% CI {delta['ci_low']:.4f}..{delta['ci_high']:.4f}; "
        f"headline {printed}"
    )
    assert len(said) == 1, report["headlines"]
    percent = int(said[0]["words"].removesuffix("% higher"))
    assert 47 <= percent <= 53, said[0]
    assert len(printed) == 1 and f"maximum write throughput {percent}% higher" in printed[0], printed


def test_compare_calls_45_mib_s_against_20_2_25_times_higher_and_significant(lab, write_limited):
    row, _, text = compared(lab, write_limited["bw20"], write_limited["bw45"], "fio_bw_mbps")
    delta = row["deltas"][1]
    ratio = delta["rel"] + 1
    print(
        f"known truth: 2.25x; compare: {delta['words']} ({delta['factor_words']}), ratio {ratio:.3f}, "
        f"p={delta['p_value']}, {delta['significance']}"
    )
    assert abs(ratio - 2.25) <= 0.1, ratio
    assert delta["significance"] == "significant", delta
    assert delta["factor_words"] == f"{ratio:.1f}× higher"  # the words say the measured ratio (within 0.1 of 2.25)
    printed = [line for line in text.splitlines() if line.strip().startswith(row["title"])]
    # "* significant", then its 95% interval: "125% higher (×2.2) * [+124%..+126%]"
    assert any(delta["words"] in line and re.search(r" \*( \[[^]]+\])?$", line) for line in printed), printed


def test_a_200_iops_device_takes_200_random_4k_writes_a_second(lab, host_steal):
    run, span = host_steal.measure(
        "the 200-IOPS device's run",
        lambda: storbench_in_guest(
            lab,
            "fio-randwrite",
            "--label",
            "iops200",
            "--target",
            lab.device("iops200"),
            "--allow-device-overwrite",
            "--set",
            "bs=4k",
            "--set",
            "size=128m",
            "--set",
            "runtime_s=4",
            *FIO,
        ),
    )
    assert run.rc == 0, run.stderr
    span.skip_if_stolen()
    iops = values(run, "fio_iops")
    print(f"known truth: 200 IOPS; fio_iops {iops}")
    assert len(iops) == 1 and within(iops[0], 200, 0.05), iops


def table(lab, name: str, spec: str) -> str:
    """Create (or replace) the device-mapper table ``name`` over the lab's plain device; its /dev/dm-N."""
    if lab.run(f"dmsetup info {name}", 30).rc == 0:
        load = f"dmsetup suspend {name} && echo '{spec}' | dmsetup reload {name} && dmsetup resume {name}"
    else:
        load = f"echo '{spec}' | dmsetup create {name}"
    lab.check(f"{load} && dmsetup mknodes", 60)  # no udev: lsblk wants /dev/mapper/NAME
    minor = lab.check(f"dmsetup info -c --noheadings -o minor {name}", 30).strip()
    return f"/dev/dm-{minor}"


def plain_sectors(lab) -> int:
    return int(lab.check(f"blockdev --getsz {lab.device('plain')}").strip())


# The guest kernel's timer runs at HZ=250: dm-delay holds a bio for its delay rounded up to whole 4 ms ticks and
# releases it at the next tick, so a 10 ms delay measured 15.7-18.8 ms here (fio and the dm device's own
# counters alike). 100 ms keeps that quantum within the ±15% the known truth allows.
DELAY_MS = 100


def test_dm_delay_adds_its_delay_to_each_write(lab, host_steal):
    plain, sectors = lab.device("plain"), plain_sectors(lab)
    latencies, spans = {}, []
    for delay_ms in (0, DELAY_MS):
        device = table(lab, "lab-delay", f"0 {sectors} delay {plain} 0 0 {plain} 0 {delay_ms}")
        run, span = host_steal.measure(
            f"the dm-delay run at +{delay_ms} ms",
            lambda device=device, delay_ms=delay_ms: storbench_in_guest(
                lab,
                "fio-randwrite",
                "--label",
                f"delay{delay_ms}",
                "--target",
                device,
                "--allow-device-overwrite",
                "--set",
                "bs=4k",
                "--set",
                "size=64m",
                "--set",
                "runtime_s=3",
                "--set",
                "numjobs=1",
                "--set",
                "iodepth=1",
            ),
        )
        assert run.rc == 0, run.stderr
        latencies[delay_ms] = values(run, "fio_lat_mean_ms") + values(run, "avg_write_latency_ms")
        spans.append(span)
    lab.check("dmsetup remove lab-delay", 60)
    for span in spans:
        span.skip_if_stolen()
    added = [after - before for before, after in zip(latencies[0], latencies[DELAY_MS])]
    print(
        f"known truth: +{DELAY_MS} ms; fio_lat_mean_ms, avg_write_latency_ms {latencies[0]} -> "
        f"{latencies[DELAY_MS]}: +{added[0]:.2f} / +{added[1]:.2f} ms"
    )
    assert len(added) == 2 and all(abs(a - DELAY_MS) <= 0.15 * DELAY_MS for a in added), latencies


def test_writes_failing_past_a_point_fail_the_run_in_one_line_and_keep_earlier_samples(lab):
    """dm-flakey (always down, error_writes) past 64 MiB: 32 MiB is written, 256 MiB fails.

    flush=false: dm-flakey fails the empty flush an fsync sends as it fails any write.
    """
    plain, sectors = lab.device("plain"), plain_sectors(lab)
    good = 64 * 1048576 // SECTOR
    device = table(
        lab,
        "lab-flakey",
        f"0 {good} linear {plain} 0\n{good} {sectors - good} flakey {plain} {good} 0 3600 1 error_writes",
    )
    run = storbench_in_guest(
        lab,
        "fio-write",
        "--label",
        "flakey",
        "--target",
        device,
        "--allow-device-overwrite",
        "--sweep",
        "size=32m,256m",
        "--set",
        "numjobs=1",
        "--set",
        "iodepth=4",
        "--set",
        "flush=false",
    )
    lab.check("dmsetup remove lab-flakey", 60)
    lines = run.stderr.strip().splitlines()
    print(
        f"known truth: writes past 64 MiB fail; exit {run.rc}; stderr: {run.stderr.strip()}; "
        f"samples: {sorted({json.dumps(s['labels']) for s in run.samples})}"
    )
    assert run.rc != 0
    assert len(lines) == 1 and f"{device}: Input/output error: write offset={good * SECTOR}" in lines[0], lines
    assert {s["labels"].get("size") for s in run.samples} == {"32m"}  # the first point's, and only them
    assert len(values(run, "fio_io_mb")) == 1 and values(run, "fio_io_mb")[0] >= 32 * 1.048576
