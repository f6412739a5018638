"""Object-storage workloads on the native load engine (paper 001's COSBench stages, beyond warp).

``objects-put``, ``objects-get``, ``objects-mixed``, ``objects-list`` and ``objects-delete``
run ``storbench-load`` (storbench.engines.native) against an ``s3://bucket/prefix`` target.
Every object lives under the run-owned prefix ``<prefix>/storbench-<run-id>/objects/``;
cleanup deletes only there (the runner then deletes the run prefix, marker checked).

- ``size``: one size (``4k``, ``16m``, ``128m``: 1024-based like fio; a ``min-max`` range
  draws sizes uniformly) or a comma list of them, which runs one phase per size and labels
  samples ``size=...``.
- ``concurrency`` workers per engine process, ``drivers`` engine processes (COSBench's
  driver instances) started together, locally or as Spark barrier tasks (``fanout=spark``).
- ``rate`` > 0 switches to the open loop: requests on a fixed schedule, latency from each
  intended start (coordinated-omission safe), at most ``concurrency`` in flight per driver.
- ``sweep`` (e.g. ``1,2,4,8``) steps ``sweep_over`` (concurrency or drivers) up and reports
  the curve (samples labelled ``clients=N``) and the high-water mark: the highest
  throughput and the fewest clients that reach 95% of it.

Samples (MB = 10^6 bytes): ``obj_mbps``, ``obj_ops_per_s``, ``obj_lat_{p50,p90,p99,p99_9,max}_ms``,
``obj_ttfb_{p50,p99}_ms``, ``obj_cpu_us_per_op`` (the engine's own user+sys CPU per
operation), ``obj_ops``, ``obj_errors``; mixed adds per-operation samples labelled ``op``.
Each engine result (exact HDR histograms, per-second series, errors) is kept in
``ctx.artifacts["objects"]``; credentials never are.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from storbench.context import RunContext
from storbench.engines import native, native_job
from storbench.engines.native import NativeEngine, NativeSpec
from storbench.engines.native_fanout import require_fanouts_gone
from storbench.engines.native_results import judge_errors, result_samples
from storbench.errors import InputError
from storbench.results.model import Sample
from storbench.targets.s3 import S3Target
from storbench.workloads.base import Workload, variant
from storbench.workloads.params import FLUSH
from storbench.workloads.on_spark import spark_session
from storbench.workloads.objects.vocabulary import COMMON, METRICS, NAMES, parse_mix, size_dist

METRIC_SECTION = 110  # where this section comes in reports (storbench.analysis.metrics)

HWM_SHARE = 0.95  # the high-water mark: the fewest clients reaching this share of the best throughput


@dataclass
class ObjectsState:
    """What the objects workloads of a run share: the objects written so far by key prefix (a read of
    the same size then needs no untimed write first)."""

    written: dict[str, int] = field(default_factory=dict)


class _Objects(Workload):
    engine = "native"
    schemes = ("s3",)
    params = COMMON
    metrics = METRICS
    headline = ("obj_mbps", "obj_ops_per_s", "obj_hwm_mbps", "obj_hwm_ops_per_s", "obj_hwm_clients")  # COSBench's
    op: str  # put, get, mixed, list or delete: each variant below sets it

    # -- where --------------------------------------------------------------------------

    def check(self, ctx: RunContext, params: dict[str, Any]) -> None:
        super().check(ctx, params)
        target = ctx.target_as(S3Target)
        if params["duration_s"] <= 0 and params["ops"] <= 0 and self.op not in ("delete",):
            raise InputError(f"{self.name}: set duration_s or ops")
        if params["fanout"] == "spark" and params["drivers"] < 1:
            raise InputError(f"{self.name}: fanout=spark needs drivers >= 1")
        if params["sweep"] and self.op in ("delete", "list"):
            raise InputError(f"{self.name}: sweep applies to put, get and mixed workloads")
        if self.op == "mixed":
            parse_mix(params["mix"], f"{self.name}: mix")
        if params["bucket"] and params["bucket"] != target.bucket:
            raise InputError(
                f"{self.name}: bucket={params['bucket']} differs from the target's bucket "
                f"{target.bucket}; name the bucket in --target s3://BUCKET/"
            )
        NativeEngine.of(ctx.engines).tool_version()  # not built: fail before anything runs

    def engines(self, params: dict[str, Any]) -> list[str]:
        return [self.engine, "spark"] if params["fanout"] == "spark" else [self.engine]  # barrier tasks

    def estimated_bytes(self, params: dict[str, Any]) -> int:
        return 0  # object stores report no free space; the server's own disk is checked by telemetry

    def _prefix(self, ctx: RunContext, params: dict[str, Any], size_text: str) -> tuple[str, str]:
        """(sub-prefix relative to the run prefix, full key prefix) for one size's objects."""
        tag = re.sub(r"[^0-9a-zA-Z]+", "_", size_text)
        sub = f"{params['prefix'].strip('/') or 'objects'}/{tag}"
        return sub, ctx.target_as(S3Target).run_prefix() + sub + "/"

    def _job(
        self,
        ctx: RunContext,
        params: dict[str, Any],
        size_text: str,
        mix: list[dict[str, Any]],
        concurrency: int,
        processes: int,
        *,
        ops: int | None = None,
        duration: float | None = None,
        verify: bool | None = None,
        rate: float | None = None,
        objects: int | None = None,
    ) -> dict[str, Any]:
        target = ctx.target_as(S3Target)
        endpoint = target.endpoint
        _, key_prefix = self._prefix(ctx, params, size_text)
        s3 = {
            "endpoint": endpoint.url,
            "region": endpoint.region,
            "access_key": endpoint.access_key,
            "secret_key": endpoint.secret_key,
            "bucket": target.bucket,
            "prefix": key_prefix,
            "addressing": params["addressing"],
            "payload_signing": params["payload_signing"],
            "multipart_threshold": params["multipart_threshold"],
            "part_size": params["part_size"],
            "list_max_keys": params["list_max_keys"],
            "timeout_s": params["timeout_s"],
        }
        return native_job.job(
            "s3",
            s3,
            mix,
            params["objects"] if objects is None else objects,
            native_job.load_model(concurrency, params["rate"] if rate is None else rate),
            ops=params["ops"] if ops is None else ops,
            duration_s=params["duration_s"] if duration is None else duration,
            object_size=size_dist(size_text),
            warmup_s=params["warmup_s"] if duration is None else 0.0,
            verify=params["verify"] if verify is None else verify,
        )

    def _timeout(self, params: dict[str, Any]) -> float:
        return params["duration_s"] + params["warmup_s"] + max(600.0, params["timeout_s"] * 4)

    def _execute(self, ctx: RunContext, params: dict[str, Any], job: dict[str, Any], drivers: int) -> dict[str, Any]:
        spark = spark_session(ctx) if params["fanout"] == "spark" else None
        return ctx.engine(NativeEngine).run(NativeSpec(job, drivers, spark, self._timeout(params)))

    # -- data the timed phase needs --------------------------------------------------------

    def _populate(self, ctx: RunContext, params: dict[str, Any], size_text: str) -> None:
        """Write the key space once (untimed), unless this run already wrote it."""
        _, key_prefix = self._prefix(ctx, params, size_text)
        written = ctx.state(ObjectsState).written
        if written.get(key_prefix, 0) >= params["objects"]:
            return
        job = self._job(
            ctx,
            params,
            size_text,
            [{"op": "put", "keys": "sequential"}],
            min(max(params["concurrency"], 4), params["objects"]),
            1,
            ops=params["objects"],
            duration=0.0,
            verify=False,
            rate=0.0,
        )
        result = ctx.engine(NativeEngine).run(NativeSpec(job, 1, timeout_s=self._timeout(params)))
        if result["total"]["errors"]:
            first = next(iter(result["errors"].values()), {}).get("example", "")
            raise InputError(
                f"{self.name}: writing the {params['objects']} objects to read failed "
                f"({result['total']['errors']} errors; first: {first})"
            )
        written[key_prefix] = params["objects"]

    def prepare(self, ctx: RunContext, params: dict[str, Any]) -> None:
        if self.op in ("get", "list", "delete", "mixed"):
            for size_text in params["size"].split(","):
                self._populate(ctx, params, size_text)

    # -- the timed phases ------------------------------------------------------------------

    def _mix(self, params: dict[str, Any]) -> list[dict[str, Any]]:
        if self.op == "mixed":
            return [{"op": name, "weight": weight} for name, weight in parse_mix(params["mix"], self.name)]
        entry: dict[str, Any] = {"op": self.op}
        if self.op == "get" and params["range_bytes"]:
            entry["range_bytes"] = params["range_bytes"]
        return [entry]

    def _steps(self, params: dict[str, Any]) -> list[tuple[int, int, int | None]]:
        """(concurrency, drivers, clients label) per phase of one size."""
        if not params["sweep"]:
            return [(params["concurrency"], params["drivers"], None)]
        counts = [int(n) for n in params["sweep"].split(",")]
        if params["sweep_over"] == "drivers":
            return [(params["concurrency"], n, n) for n in counts]
        return [(n, params["drivers"], n) for n in counts]

    def run(self, ctx: RunContext, params: dict[str, Any]) -> list[Sample]:
        sizes = params["size"].split(",")
        steps = self._steps(params)
        samples: list[Sample] = []
        kept = ctx.artifacts.setdefault("objects", {"engine": native.version(), "workloads": {}})
        record = kept["workloads"].setdefault(self.name, [])
        with ctx.measure():
            phases = []
            for size_text in sizes:
                curve = []
                for concurrency, drivers, clients in steps:
                    ctx.progress(len(phases), len(sizes) * len(steps), "stages")  # cosbench-like stages
                    job = self._job(ctx, params, size_text, self._mix(params), concurrency, drivers)
                    if self.op == "delete":
                        job["ops"] = 0 if params["duration_s"] > 0 else params["objects"]
                        job["duration_s"] = params["duration_s"] or 0.0
                        if job["duration_s"] <= 0:
                            job["ops"] = params["objects"]
                    result = self._execute(ctx, params, job, drivers)
                    phases.append((size_text, concurrency, drivers, clients, result))
                    curve.append((clients, result))
                    written = ctx.state(ObjectsState).written
                    if self.op == "delete":
                        written.pop(self._prefix(ctx, params, size_text)[1], None)
                    if self.op == "put":  # a later read of the same size reuses these objects
                        key_prefix = self._prefix(ctx, params, size_text)[1]
                        share = -(-params["objects"] // drivers)  # keys each driver's stride covers
                        if all(p["ops"] >= share for p in result["per_process"]):
                            written[key_prefix] = max(written.get(key_prefix, 0), params["objects"])
                if params["sweep"]:
                    samples += hwm_samples(
                        self.name, curve, {"size": size_text} if len(sizes) > 1 else {}, params["sweep_over"]
                    )
        for size_text, concurrency, drivers, clients, result in phases:
            labels: dict[str, str] = {}
            if len(sizes) > 1:
                labels["size"] = size_text
            if clients is not None:
                labels["clients"] = str(clients)
            samples += result_samples(self.name, result, NAMES, labels, per_op=self.op == "mixed")
            record.append(
                {
                    "size": size_text,
                    "concurrency": concurrency,
                    "drivers": drivers,
                    "fanout": params["fanout"],
                    "result": result,
                }
            )
        judge_errors(self.name, [phase[-1] for phase in phases], samples, params["max_error_pct"], ctx.notes)
        return samples

    def cleanup(self, ctx: RunContext, params: dict[str, Any]) -> None:
        """This workload's objects go with the run prefix (the runner deletes it, marker checked), once no
        engine of a cancelled Spark fan-out can write there any more."""
        if params["fanout"] == "spark":
            require_fanouts_gone()


def high_water_mark(curve: list[tuple[int, float | None]]) -> tuple[float | None, int | None, int | None]:
    """(best throughput, clients at the best, fewest clients reaching HWM_SHARE of the best); a point with no
    rate (n/a: no measured time) is no point, and with none left every figure is None."""
    measured = [(clients, value) for clients, value in curve if value is not None]
    if not measured:
        return None, None, None
    best_clients, best = max(measured, key=lambda point: point[1])
    knee = min(clients for clients, value in measured if value >= HWM_SHARE * best)
    return best, best_clients, knee


def hwm_samples(
    workload: str, curve: list[tuple[int | None, dict[str, Any]]], labels: dict[str, str], over: str
) -> list[Sample]:
    mbps = [(int(c or 0), r["total"]["mb_per_s"]) for c, r in curve]
    ops = [(int(c or 0), r["total"]["ops_per_s"]) for c, r in curve]
    best, _, knee = high_water_mark(mbps)
    best_ops, _, _ = high_water_mark(ops)
    tagged = dict(labels)  # unlabelled for one size: compare makes headlines of it
    return [
        Sample(workload, "obj_hwm_mbps", best, "MB/s", labels=tagged),
        Sample(workload, "obj_hwm_ops_per_s", best_ops, "ops/s", labels=tagged),
        Sample(workload, "obj_hwm_clients", None if knee is None else float(knee), "clients", labels=tagged),
    ]


ObjectsPut = variant(
    _Objects,
    "objects-put",
    "S3 PUT of new objects (native engine; COSBench's write stage)",
    op="put",
    params=COMMON + (FLUSH,),
)  # a PUT is durable when it returns: the flush is "none"
ObjectsGet = variant(_Objects, "objects-get", "S3 GET of objects written untimed first (whole or ranged)", op="get")
ObjectsMixed = variant(
    _Objects,
    "objects-mixed",
    "S3 mixed operations by ratio (mix=get=70,put=25,head=5)",
    op="mixed",
    params=COMMON + (FLUSH,),
)
ObjectsList = variant(_Objects, "objects-list", "S3 LIST pages of the workload's prefix", op="list")
ObjectsDelete = variant(_Objects, "objects-delete", "S3 DELETE of objects written untimed first", op="delete")

__all__ = ["ObjectsDelete", "ObjectsGet", "ObjectsList", "ObjectsMixed", "ObjectsPut", "high_water_mark", "size_dist"]
