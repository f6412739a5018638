"""storbench: storage benchmarks for distributed-analytics workloads.

Layers, lowest first. A module imports only from its own layer and the ones below it, inside
functions too, and no import circle spans two packages (tests/test_layers.py checks both and
reads this table). One line a layer: its name, then its packages and top-level modules:

    base       __init__ errors redaction interrupts scratch
    tools      units keyvalue binaries buildparts fetch doctor s3client cassandra_cql progress
    results    results
    telemetry  telemetry
    services   services
    lab        lab
    targets    targets
    engines    engines
    context    context
    workloads  workloads
    suites     suites baselines
    run        run
    analysis   analysis
    report     report
    api        api
    cli        cli __main__

- base, tools: errors, units, redaction and clients that know nothing of a run.
- results: what a run measured (``Sample``, ``Run``, the store) and the metric vocabulary
  (``results.metrics``: ``MetricSpec``, ``metric_table``) every producer declares its metrics in.
- telemetry, services, targets, engines: the producers and what they run on; a target is
  storage, an engine binds itself to one.
  ``lab`` makes hosts with known limits for services to run on (``--lab-cluster``: api hands a
  service its lab placement).
- context, workloads, suites: what a workload sees of a run, the workloads, the suites naming them.
- run: the run core (plan, session, loop); it speaks only the engine and target protocols.
- analysis, report: the comparison stage (it gathers the metric catalog from every workload's
  declarations) and its renderings; api and cli on top.
"""

__version__ = "0.1.0"
