# The commands of the README: `make run` (the default job), `make test` (every test) and `make test-fast`
# (the fast lane: no real service, no JVM, no child process but cheap system tools; tests/lanes.py).
# Each installs what it needs first (scripts/setup.sh is idempotent).
.PHONY: run test test-fast lint setup bench dist

run:
	@scripts/setup.sh
	.venv/bin/storbench run

# pytest keeps the test modules it rewrote (their assertions) where PYTHONDONTWRITEBYTECODE would stop it: each
# worker and each pytest a test starts collected ~5 CPU-s of rewriting, 1.6 with them kept
PYTEST = env -u PYTHONDONTWRITEBYTECODE .venv/bin/python -m pytest

# -n cores+1 --dist loadgroup: one worker more than cores (a fifth of the CPU sat idle with one per core, while
# services started and runs waited; a second extra worker took the idle tenth to 1-2%, but the lane 27:22-29:43
# against 28:47-29:40 in rehearsals: the same within their noise, and the JVMs spent more CPU at once), each
# slow service and each module's tests in one worker (tests/grouping.py);
# -rs: each skipped test and its reason in the summary
test:
	@scripts/setup.sh --test
	@$(MAKE) --no-print-directory lint
	$(PYTEST) -q -rs -n $$(( $$(nproc) + 1 )) --dist loadgroup

# The gates (make test runs them first): Python lint and layout (ruff, [tool.ruff] in pyproject.toml), Rust
# layout (native/rustfmt.toml) and clippy with warnings as errors. Each failure names its file and line.
LINTED = src tests benchmarks hatch_build.py
lint:
	.venv/bin/ruff check --quiet $(LINTED)
	.venv/bin/ruff format --check --quiet $(LINTED)
	cargo fmt --check --manifest-path native/Cargo.toml
	cargo clippy --quiet --profile unit --all-targets --manifest-path native/Cargo.toml -- -D warnings

test-fast:
	@scripts/setup.sh --test-fast
	$(PYTEST) -q -rs -m "not real"

# every benchmark at full size, one after another (benchmarks/harness.py: scope line, rotated rounds, verdicts)
bench:
	@scripts/setup.sh --test
	@for b in benchmarks/*.py; do case $$b in */harness.py|*/peers.py|*/collector_process.py|*/object_clients.py) continue;; esac; \
	  echo "== $$b"; .venv/bin/python $$b || exit 1; done

# a wheel for this platform (dist/storbench-*.whl; hatch_build.py): the native engine binary, storbench's own jars,
# the suites; the large jars it lists are fetched from Maven Central on first use (storbench fetch PART). Each part
# is built first (a fresh one is kept), since the wheel carries the clone's builds: the parts of the table of build
# parts (src/storbench/buildparts.tsv) with a classpath or a file in the wheel (buildparts.WHEEL_PARTS).
dist:
	@scripts/setup.sh
	@parts="$$(.venv/bin/python -c 'from storbench.buildparts import WHEEL_PARTS; print(*WHEEL_PARTS)')" && \
	  for part in $$parts; do scripts/setup.sh --part $$part || exit 1; done
	.venv/bin/pip wheel -q --no-deps -w dist .
	@ls dist/storbench-*.whl
