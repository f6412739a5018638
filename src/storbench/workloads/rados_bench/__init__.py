"""rados bench workloads (paper 004): write, then sequential and random reads of what it wrote.

Paper 004 ran ``rados bench -p POOL 1800 write -b 4M -t 16`` on a single-node Ceph
with one replica and reported the average IOPS and the standard deviation of the
per-second IOPS ("10× more consistent"). Three workloads share one family:

- ``rados-bench-write``: ``rados bench SECONDS write -b OP -O OBJECT -t THREADS
  --no-cleanup --run-name storbench-<run id>-w<N>``;
- ``rados-bench-seq`` / ``rados-bench-rand``: ``rados bench SECONDS seq|rand`` on the
  objects the last write of this run left (same ``--run-name``).

The target is a pool: ``--target rados://POOL`` on storbench's own cluster
(``storbench services up ceph``) or ``rados://POOL?conf=/etc/ceph/ceph.conf``; the
``pool`` parameter overrides the pool. storbench never creates or deletes a pool.
What a run writes is its own by name: rados bench's objects are
``<Object prefix>_object<i>`` (``benchmark_data_<host>_<pid>``, recorded from the child's
PID as soon as it starts, so an interrupted write is found too) plus the ``--run-name``
metadata object; the fio driver's objects are ``storbench-<run id>-w<N>.<job>.<file>``.
``cleanup`` removes exactly those and nothing else in the pool (``rados ls`` streamed and
filtered while read), and nothing at all with ``--keep-data``.

Samples: rados bench's own summary (``rados_bw_mbps``, ``rados_avg_iops``, ``rados_stddev_iops``, ``rados_max_iops``/
``rados_min_iops``, ``rados_avg_lat_ms``, ``rados_max_lat_ms``, ``rados_ops``; MB = 10^6 bytes) and storbench's
consistency figures over the per-second IOPS and MB/s (``ps_iops_*``, ``ps_mbps_*``, see
:mod:`storbench.results.consistency`). The per-second series, the command, the raw output and the summary of every
phase are kept in ``ctx.artifacts["rados"]`` (the run's artifacts.json) — also for a phase that failed. rados bench
runs on the rados engine (``ctx.engine(RadosEngine).run(BenchSpec)``), the fio driver on the fio engine.

``driver=fio`` runs the same phases with fio's ``rados`` engine on the same pool
(``fio_objects`` objects of ``object_size``, written and re-read for the duration) and
reports the same metrics from fio's figures (unlabelled, so ``compare`` sets a rados run and
a fio run row by row; the differing ``driver`` parameter is flagged there).

Both drivers run under the same window rules (the manifest's ``window_rules``; ``compare`` calls runs
whose rules differ not comparable): ``flush=on ack`` for writes (RADOS acknowledges a write once every
replica stored it); ``cache=cold`` before each read phase (``ceph tell osd.* cache drop`` and, on
storbench's own cluster, the OSD files out of the page cache; ``warm`` with a note when the OSDs
refuse, e.g. memstore); ``timing=operations``: the window is the tool's own operation phase (rados
bench's "Total time run", fio's runtime), so neither's start-up, connect or fio's object set-up is in it.

A write never fills the cluster: it is capped at :data:`FILL_SHARE` of the pool's
free space (``ceph df`` MAX AVAIL) through ``--max-objects``, and a note says when
the cap ended it early (a full BlueStore blocks every client, deletes included).
Every rados operation has a timeout (``op_timeout_s``): a stopped OSD fails the phase
with rados's error instead of hanging, and a hard timeout bounds the whole command.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from storbench.context import RunContext
from storbench.engines import fio_results, rados, rados_output
from storbench.engines.fio import FioEngine
from storbench.engines.fio_job import FioSpec
from storbench.engines.rados import BenchSpec, RadosEngine
from storbench.errors import InputError, StorbenchError, WorkloadError
from storbench.results.model import Sample
from storbench.telemetry.machine import available_memory
from storbench.units import human_bytes
from storbench.workloads.base import Workload, register
from storbench.workloads.rados_bench.fio import fio_rados_job, require_fio_rados_engine
from storbench.workloads.rados_bench.results import METRICS, bench_figures, figure_samples, fio_figures, hint
from storbench.workloads.rados_bench.pool import (
    BUFFER_MEMORY_SHARE,
    FILL_SHARE,
    GRACE_S,
    PARAMS,
    RadosState,
    left_behind,
    probe_pool,
    cluster_of,
    owned,
    sizes,
)

METRIC_SECTION = 90  # where this section comes in reports (storbench.analysis.metrics)


class _RadosBench(Workload):
    engine = "rados"
    schemes = ("rados",)
    params = PARAMS
    metrics = METRICS
    headline = ("rados_avg_iops", "rados_stddev_iops", "rados_bw_mbps")  # paper 004's: average IOPS, per-second spread
    mode = ""

    def engines(self, params: dict[str, Any]) -> list[str]:
        return [self.engine, "fio"] if params["driver"] == "fio" else [self.engine]  # fio's rados engine

    # -- checks ---------------------------------------------------------------------------

    def check(self, ctx: RunContext, params: dict[str, Any]) -> None:
        super().check(ctx, params)
        object_size, op_size = sizes(params)
        if op_size > object_size:
            raise InputError(
                f"{self.name}: op_size={params['op_size']} is larger than object_size={params['object_size']}"
            )
        memory = available_memory()
        if memory and op_size * params["threads"] > memory * BUFFER_MEMORY_SHARE:
            raise InputError(
                f"{self.name}: threads {params['threads']} × op_size "
                f"{params['op_size'] or params['object_size']} "
                f"needs {human_bytes(op_size * params['threads'])} of buffers, more than the "
                f"{human_bytes(memory)} of memory available; lower threads or op_size"
            )
        RadosEngine.of(ctx.engines).tool_version()  # rados missing: fail before anything runs
        if params["driver"] == "fio":
            require_fio_rados_engine(FioEngine.of(ctx.engines))
        cluster = cluster_of(ctx, params)
        probed = ctx.state(RadosState).limits
        key = (cluster.conf, cluster.pool)
        if key not in probed:
            probed[key] = probe_pool(cluster)
        limits = probed[key]
        if limits["max_object_size"] and object_size > limits["max_object_size"]:
            raise InputError(
                f"{self.name}: object_size={params['object_size']} is above the OSDs' limit "
                f"osd_max_object_size={human_bytes(limits['max_object_size'])}; "
                f"use a smaller object_size"
            )
        if limits["max_write_size"] and op_size > limits["max_write_size"]:
            raise InputError(
                f"{self.name}: op_size {human_bytes(op_size)} is above the OSDs' limit "
                f"osd_max_write_size={limits['max_write_size'] // 2**20} MiB; set op_size (e.g. 4m) "
                f"below it"
            )

    # -- the same conditions for both drivers ------------------------------------------------

    def prepare(self, ctx: RunContext, params: dict[str, Any]) -> None:
        """The window rules both drivers run under (recorded in the manifest's window_rules; compare sets
        runs apart whose rules differ). A write is durable when RADOS acknowledges it (on every replica's
        store), so there is nothing to flush. A read phase starts cold for either driver: the OSDs drop their
        BlueStore caches and our own OSDs' files leave this host's page cache, so neither re-reads what
        the write just left in memory."""
        if self.mode == "write":
            ctx.window.rules["flush"] = "on ack"
            return
        why = cluster_of(ctx, params).drop_osd_caches(params["op_timeout_s"])
        evicted = ctx.target.evict(ctx.root_uri)
        ctx.window.rules["cache"] = "warm" if why else "cold"
        ctx.window.rules["cache_drop"] = "none" if why else ("osd caches, osd files" if evicted else "osd caches")
        if (
            why
            and (
                note := f"{self.name}: the OSDs kept their caches (ceph tell osd.* cache drop: {why}); the read is warm"
            )
            not in ctx.notes
        ):
            ctx.notes.append(note)

    # -- running --------------------------------------------------------------------------

    def run(self, ctx: RunContext, params: dict[str, Any]) -> list[Sample]:
        cluster = cluster_of(ctx, params)
        state = ctx.state(RadosState)
        counts = state.runs
        number = counts[self.name] = counts.get(self.name, 0) + 1
        if self.mode == "write":
            record = {
                "run_name": f"storbench-{ctx.run_id}-w{number}",
                "driver": params["driver"],
                "conf": cluster.conf,
                "pool": cluster.pool,
                "prefix": None,
                "complete": False,
                "objects": None,
                "object_size": sizes(params)[0],
            }
            state.writes.append(record)  # before anything is written: cleanup finds it after any failure
        else:
            record = state.last
            if record is None:
                raise WorkloadError(
                    f"{self.name} reads what rados-bench-write wrote earlier in this run; "
                    f"list rados-bench-write before it in the suite"
                )
            if record["driver"] != params["driver"]:
                raise WorkloadError(
                    f"{self.name}: driver={params['driver']} cannot read what driver="
                    f"{record['driver']} wrote; use one driver for the whole suite"
                )
            cluster = rados.Cluster(record["conf"], record["pool"], params["op_timeout_s"])  # where it was written
        scratch = ctx.scratch("rados")
        if params["driver"] == "fio":
            return self._run_fio(ctx, params, cluster, record, number, scratch)
        return self._run_rados(ctx, params, cluster, record, number, scratch)

    def _cap_objects(self, ctx: RunContext, cluster: rados.Cluster, object_size: int, threads: int) -> int | None:
        avail = cluster.max_avail()
        if avail is None:
            return None
        cap = int(avail * FILL_SHARE) // object_size
        if cap < threads:
            raise WorkloadError(
                f"{self.name}: pool {cluster.pool} has only {human_bytes(avail)} free; "
                f"free space or start Ceph with a larger --osd-gb"
            )
        return cap

    def _run_rados(
        self,
        ctx: RunContext,
        params: dict[str, Any],
        cluster: rados.Cluster,
        record: dict[str, Any],
        number: int,
        scratch: Path,
    ) -> list[Sample]:
        object_size, op_size = sizes(params)
        cap = None
        if self.mode == "write":
            cap = self._cap_objects(ctx, cluster, object_size, params["threads"])
            record["max_objects"] = cap
        timeout = params["duration_s"] + params["op_timeout_s"] + GRACE_S
        # The write's prefix is known from the child's PID the moment it starts: an interrupted write is
        # cleaned up too (rados bench prints its prefix, but only its output after it returns says so).
        started = (lambda pid: record.update(prefix=rados.bench_prefix(pid))) if self.mode == "write" else None
        load = (self.mode, params["duration_s"], params["threads"], record["run_name"])
        output = scratch / f"{self.name}-{number}.txt"
        spec = BenchSpec(cluster, *load, output, timeout, op_size, object_size, cap, started)
        with ctx.measure():
            done = ctx.engine(RadosEngine).run(spec)
        output = rados_output.parse_bench(done.stdout, done.stderr)
        ctx.tool_window(output.summary.get("time_s"))  # rados bench's own clock: its operations, as fio's
        if self.mode == "write":
            record["prefix"] = output.prefix or record["prefix"]
            record["complete"] = done.returncode == 0 and output.complete
            record["objects"] = int(output.summary["ops"]) if record["complete"] else None
        entry = {
            "run": number,
            "driver": "rados",
            "command": done.command,
            "run_name": record["run_name"],
            "returncode": done.returncode,
            "wall_s": round(done.wall_s, 6),
            **output.to_dict(),
            "output": done.stdout,
        }
        self._keep(ctx, cluster, entry)
        if done.returncode is None:  # it may report an error and still not exit (an OSD stopped mid-write)
            errors = "\n".join(output.errors)
            said = f" after it reported: {rados_output.first_error(errors)}" if errors else ""
            raise WorkloadError(
                f"{self.name}: rados bench {self.mode} did not finish within {timeout} s and was "
                f"killed{said}{hint(' '.join(output.errors))}"
            )
        if done.returncode != 0 or not output.complete:
            message = rados_output.first_error(done.stderr, "\n".join(output.errors), done.stdout)
            raise WorkloadError(
                f"{self.name}: rados bench {self.mode} failed (exit {done.returncode}) after "
                f"{done.wall_s:.0f} s: {message}{hint(message)}"
            )
        if self.mode == "write":
            ctx.state(RadosState).last = record
            if cap and record["objects"] >= cap:
                ctx.notes.append(
                    f"{self.name}: the write stopped after {record['objects']} objects "
                    f"({output.summary['time_s']:.1f} of {params['duration_s']} s) at "
                    f"{FILL_SHARE:.0%} of the pool's free space; start Ceph with a larger --osd-gb "
                    f"for longer writes"
                )
        return figure_samples(self.name, bench_figures(output.summary), {}, output.iops_series())

    def _keep(self, ctx: RunContext, cluster: rados.Cluster, entry: dict[str, Any]) -> None:
        record = ctx.artifacts.setdefault(
            "rados",
            {
                "version": ctx.engine(RadosEngine).tool_version(),
                "conf": cluster.conf,
                "pool": cluster.pool,
                "workloads": {},
            },
        )
        record["workloads"].setdefault(self.name, {"runs": []})["runs"].append(entry)

    # -- the fio driver ---------------------------------------------------------------------

    def _run_fio(
        self,
        ctx: RunContext,
        params: dict[str, Any],
        cluster: rados.Cluster,
        record: dict[str, Any],
        number: int,
        scratch: Path,
    ) -> list[Sample]:
        object_size, op_size = sizes(params)
        if self.mode == "write":
            objects = params["fio_objects"]
            cap = self._cap_objects(ctx, cluster, object_size, 1)
            if cap is not None and objects > cap:
                ctx.notes.append(
                    f"{self.name}: fio_objects {objects} lowered to {cap} ({FILL_SHARE:.0%} of the pool's free space)"
                )
                objects = cap
            record["objects"] = objects
        objects = record["objects"]
        rw = {"write": "write", "seq": "read", "rand": "randread"}[self.mode]
        logs = scratch / f"{self.name}-{number}-logs"
        logs.mkdir(parents=True, exist_ok=True)
        text = fio_rados_job(
            self.name,
            rw,
            cluster,
            record["run_name"],
            objects,
            object_size,
            op_size,
            params["threads"],
            params["duration_s"],
            str(logs / self.name),
        )
        timeout = params["duration_s"] + params["op_timeout_s"] + GRACE_S
        spec = FioSpec(text, scratch, f"{self.name}-{number}.fio", f"{self.name}-{number}.json", timeout)
        error = None
        with ctx.measure():
            try:
                done = ctx.engine(FioEngine).run(spec)
            except WorkloadError as exc:
                error = str(exc)
        direction = "write" if self.mode == "write" else "read"
        iops = fio_results.read_log_series(str(logs / self.name), "iops").get(direction, [])
        mbps = fio_results.read_log_series(str(logs / self.name), "bw").get(direction, [])
        entry = {
            "run": number,
            "driver": "fio",
            "job_file": text,
            "run_name": record["run_name"],
            "error": error,
            "per_second": {"iops": iops, "mbps": mbps},
        }
        if error:
            self._keep(ctx, cluster, entry)
            raise WorkloadError(f"{self.name}: {error}{hint(error)}")
        if self.mode == "write":
            record["complete"] = True
            ctx.state(RadosState).last = record
        data = done.data["jobs"][0][direction]
        # fio's own clock for the direction (its bw is bytes over it): connect and object set-up outside
        ctx.tool_window(data["runtime"] / 1000 if data.get("runtime") else None)
        entry.update(wall_s=round(done.wall_s, 6), fio_json=done.data)
        self._keep(ctx, cluster, entry)
        return figure_samples(self.name, fio_figures(data, iops), {}, iops)

    # -- cleanup ------------------------------------------------------------------------------

    def cleanup(self, ctx: RunContext, params: dict[str, Any]) -> None:
        """The write workload removes every object this run wrote (rados and fio drivers), nothing else;
        with --keep-data it leaves them and says where they are."""
        ctx.drop_scratch("rados")
        if self.mode != "write":
            return
        writes = [w for w in ctx.state(RadosState).writes if not w.get("removed")]
        if ctx.keep_data:
            for write in writes:
                ctx.notes.append(
                    f"{self.name}: --keep-data: this run's objects stay in pool {write['pool']}: {left_behind(write)}"
                )
            return
        by_pool: dict[tuple[str, str], list[dict[str, Any]]] = {}
        for write in writes:
            by_pool.setdefault((write["conf"], write["pool"]), []).append(write)
        for (conf, pool), group in by_pool.items():
            cluster = rados.Cluster(conf, pool, params["op_timeout_s"])
            try:
                cluster.remove(cluster.list_objects(lambda name: any(owned(w, name) for w in group)))
            except StorbenchError as exc:
                left = ", ".join(left_behind(w) for w in group)
                raise WorkloadError(f"{exc}; this run's objects may remain in pool {pool}: {left}") from None
            for write in group:
                write["removed"] = True


def _register(name: str, mode: str, description: str) -> type[_RadosBench]:
    cls = type(
        re.sub(r"\W", "", name.title()),
        (_RadosBench,),
        {
            "name": name,
            "mode": mode,
            "description": description,
            "__module__": __name__,
            "after": () if mode == "write" else ("rados-bench-write",),
        },
    )
    return register(cls)


RadosBenchWrite = _register(
    "rados-bench-write", "write", "rados bench write of new objects (paper 004: 4 MB objects, 16 threads, 1800 s)"
)
RadosBenchSeq = _register("rados-bench-seq", "seq", "rados bench sequential read of what rados-bench-write wrote")
RadosBenchRand = _register("rados-bench-rand", "rand", "rados bench random read of what rados-bench-write wrote")

__all__ = ["PARAMS", "RadosBenchRand", "RadosBenchSeq", "RadosBenchWrite", "RadosState", "owned"]
