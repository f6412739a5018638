# The commands of the README: `make run` (the default job), `make test` (every test) and `make test-fast`
# (the fast lane: no real service, no JVM, no child process but cheap system tools; tests/lanes.py).
# Each installs what it needs first (scripts/setup.sh is idempotent).
.PHONY: run test test-fast setup bench

run:
	@scripts/setup.sh
	.venv/bin/storbench run

# -n auto --dist loadgroup: one worker per core, each slow service and each module's tests in one worker
# (tests/grouping.py); -rs: each skipped test and its reason in the summary
test:
	@scripts/setup.sh --test
	.venv/bin/python -m pytest -q -rs -n auto --dist loadgroup

test-fast:
	@scripts/setup.sh --test-fast
	.venv/bin/python -m pytest -q -rs -m "not real"

bench:
	@scripts/setup.sh --test
	.venv/bin/python benchmarks/compat_vs_default.py
	.venv/bin/python benchmarks/collector_overhead.py
	.venv/bin/python benchmarks/cluster_telemetry_cost.py
	.venv/bin/python benchmarks/terasort_vs_hadoop.py
	.venv/bin/python benchmarks/dfsio_vs_fio.py
	.venv/bin/python benchmarks/objects_vs_peers.py
	.venv/bin/python benchmarks/rados_overhead.py
	.venv/bin/python benchmarks/tpcds_gen_and_overhead.py
