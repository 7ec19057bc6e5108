# numalock: the two commands of the README.
#   make run    build, run the default benchmark suite, write results/<UTC time>/
#               (JSON, PNG plots, report.md); results/latest points at it
#   make test   build and run every test: C (CTest, ThreadSanitizer build too) and Java (Maven)
# Both install what they need on a fresh Debian 12 machine.

BUILD      ?= build
TSAN_BUILD ?= build-tsan
VENV       ?= .venv
PY         := $(VENV)/bin/python3
JOBS       ?= $(shell nproc 2>/dev/null || echo 2)
NUMALOCK   := $(BUILD)/bin/numalock
CMAKE_GEN  := $(shell command -v ninja >/dev/null 2>&1 && echo "-G Ninja")
APT_PKGS   := cmake ninja-build gcc g++ make python3-venv libtsan2 valgrind maven pkg-config strace
SUDO       := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

PREFIX     ?= /usr/local

.PHONY: all build tsan deps venv test test-c test-tsan test-java test-arm verify-wmm run run-java clean install

all: build

# Install missing system packages (apt) once; quiet when everything is there.
deps:
	@missing=""; for p in $(APT_PKGS); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $$missing; \
	fi
	@for f in scripts/deps.d/*.sh; do [ -f "$$f" ] && sh "$$f" || true; done

venv: $(PY)
$(PY): scripts/requirements.txt
	@test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install -q --disable-pip-version-check -r scripts/requirements.txt
	@touch $(PY)

build: deps
	cmake -S . -B $(BUILD) $(CMAKE_GEN) -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
	cmake --build $(BUILD) -j $(JOBS)

# The library, headers, preload library, the command and its data under
# PREFIX (DESTDIR=DIR stages the same tree inside DIR, as packagers do).
install: build
	DESTDIR="$(DESTDIR)" cmake --install $(BUILD) --prefix "$(PREFIX)"

tsan: deps
	cmake -S . -B $(TSAN_BUILD) $(CMAKE_GEN) -DNL_SANITIZE_THREAD=ON >/dev/null
	cmake --build $(TSAN_BUILD) -j $(JOBS)

# TEST_NUMA= leaves out the quick qemu guests (CI: its numa-test step boots
# every guest right after)
TEST_NUMA ?= test-numa
test: deps venv
	@$(MAKE) --no-print-directory build
	@$(MAKE) --no-print-directory test-c test-tsan test-java $(TEST_NUMA)

# After each CTest run, the skipped tests with the reason their output gives
# (scripts/ctest-skips.py over the run's JUnit file).
test-c:
	cd $(BUILD) && ctest -j $(JOBS) --output-on-failure --timeout 300 --output-junit ctest.xml; \
	  rc=$$?; python3 $(CURDIR)/scripts/ctest-skips.py ctest.xml; exit $$rc

test-tsan: tsan
	cd $(TSAN_BUILD) && TSAN_OPTIONS="halt_on_error=1 exitcode=66 atexit_sleep_ms=0" ctest -j $(JOBS) --output-on-failure -LE verify \
	  --timeout 900 --output-junit ctest.xml; rc=$$?; python3 $(CURDIR)/scripts/ctest-skips.py ctest.xml; exit $$rc

# aarch64: the library, the preload library and the tests cross-built with
# Debian's gcc-aarch64-linux-gnu; the tests whose command is a test program
# run under qemu-user, each on one host CPU (behaviour only: the emulator
# does not give aarch64's memory order). docs/ARCHITECTURE.md "Tests" lists what it does not run, and why.
# The harness's watchdog waits 6 times longer, and a test that fails runs
# once more (the emulator stalls now and then under load); one that fails
# twice fails the target.
ARM_BUILD ?= build-arm
# ARM_CTEST_ARGS: more ctest options (CI: -LE robust, the signal, fork and
# allocation-failure tests, whose behaviour under qemu-user is qemu's)
test-arm: deps
	cmake -S . -B $(ARM_BUILD) $(CMAKE_GEN) -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake \
		-DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
	cmake --build $(ARM_BUILD) -j $(JOBS)
	cd $(ARM_BUILD) && NL_STRESS_WATCHDOG_SCALE=6 ctest -j $(JOBS) --output-on-failure --timeout 600 --repeat until-pass:2 \
	  $(ARM_CTEST_ARGS)

# Weak memory: GenMC model-checks the locks' own C code under RC11 and IMM
# (verify/wmm/run.sh; checks in verify/wmm/checks.sh). GenMC is built once
# into $(GENMC_DIR) (GENMC_SRC=archive of its 0.9 source, else downloaded).
GENMC_DIR ?= build-genmc
# VERIFY_WMM_OPTIONAL=1: without a way to GenMC, say so and pass (CI).
verify-wmm:
	@if genmc=$$(sh verify/wmm/genmc.sh $(GENMC_DIR)); then sh verify/wmm/run.sh "$$genmc"; \
	elif [ -n "$(VERIFY_WMM_OPTIONAL)" ]; then echo "verify-wmm skipped: GenMC could not be built (above)"; \
	else exit 1; fi

# Open POSIX Test Suite: its pthread mutex, cond and rwlock tests under glibc
# and under the preload with every interposable lock; a test that passes
# under glibc and not under a lock fails (tests/conformance/run.sh: the
# matrix; CONFORMANCE_TESTS=REGEX, CONFORMANCE_LOCKS=a,b, CONFORMANCE_RUNS=N
# for a subset). The suite's archive: OPTS_SRC, else one beside the checkout;
# CONFORMANCE_OPTIONAL=1: without one, say so and pass (CI).
# The soak: random mixes of locks, thread counts, topologies, waiting
# policies, signals, cancellation and fork for MINUTES minutes in one
# process, under the watchdog and the owner and counter checks, its resident
# set at the end within 10 % of the one after the first minute
# (tests/robust/soak.c). The seed is printed; SEED=S replays a run's mixes,
# SEED=S ROUND=R one round's.
MINUTES ?= 3
.PHONY: soak
soak: build
	$(BUILD)/bin/nl_robust_soak --minutes $(MINUTES) $(if $(SEED),--seed $(SEED)) $(if $(ROUND),--round $(ROUND))

.PHONY: conformance
conformance: build
	@BUILD="$(BUILD)" bash tests/conformance/run.sh

test-java:
	@if [ -x java/build.sh ]; then java/build.sh test; else echo "java: no module yet"; fi

# The main job: the default suite on this machine.
run: deps venv build
	@ts=$$(date -u +%Y%m%dT%H%M%SZ); out=results/$$ts; tmp=results/.$$ts.partial; \
	rm -rf $$tmp; mkdir -p $$tmp && \
	$(NUMALOCK) report --out $$tmp --no-render && \
	{ if [ -x java/build.sh ]; then java/build.sh bench $$tmp/java || echo "java benchmarks failed: report goes on without them"; fi; } && \
	$(PY) tools/report.py $$tmp >/dev/null && mv $$tmp $$out && ln -sfn $$ts results/latest && \
	echo "report: $$out/report.md (also results/latest/report.md)"

run-java:
	java/build.sh bench results/java-$$(date -u +%Y%m%dT%H%M%SZ)

clean:
	rm -rf $(BUILD) $(TSAN_BUILD) $(ARM_BUILD)

# Real NUMA nodes in qemu guests (docs/ARCHITECTURE.md "Real nodes in
# a qemu guest"). numa-test: every C test in a 2-node guest, the stress harness
# in a 4-node one, the topology's levels in a guest with sockets, a self-check
# that must fail. test-numa (in `make test`): the
# quick form. The script's status 77 means skipped; it prints why.
.PHONY: numa-test test-numa
numa-test: build
	@scripts/numa-test.sh --build $(BUILD); rc=$$?; [ $$rc -eq 77 ] && rc=0; exit $$rc

test-numa:
	@scripts/numa-test.sh --build $(BUILD) --quick; rc=$$?; [ $$rc -eq 77 ] && rc=0; exit $$rc

# The CNA slow path in the Linux qspinlock (docs/KERNEL.md): its own
# step, not part of `make test`. KERNEL_VARIANT=broken builds and tests the
# deliberately broken slow path (the test must fail).
KERNEL_VARIANT ?= normal
.PHONY: kernel kernel-test
kernel:
	kernel/build.sh $(if $(filter broken,$(KERNEL_VARIANT)),broken,normal debug)

kernel-test:
	KERNEL_VARIANT=$(KERNEL_VARIANT) kernel/test.sh
