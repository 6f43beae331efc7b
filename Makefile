# minik8s: the two commands of the README, and the pieces they are made of.
BUILD_DIR ?= build
JOBS ?= $(shell nproc)
# Share compiler cache hits between clones at different paths (CI clones afresh).
export CCACHE_BASEDIR := $(CURDIR)
export CCACHE_NOHASHDIR := 1

.PHONY: setup configure build binary test unit-test e2e-test run stop bench format clean deb \
	build-times

setup:
	bash scripts/setup.sh

configure:
	cmake -S . -B $(BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null

build: configure
	cmake --build $(BUILD_DIR) -j $(JOBS)

# Only the minik8s binary (what `make run` needs; the images are built by `cluster up`).
binary: configure
	cmake --build $(BUILD_DIR) -j $(JOBS) --target minik8s

# Set up, build and run every test (unit and end-to-end) with ctest's summary.
test:
	bash scripts/test.sh

unit-test: build
	cd $(BUILD_DIR) && ctest --output-on-failure -L unit -j $(JOBS)

e2e-test: build
	cd $(BUILD_DIR) && ctest --output-on-failure -L e2e

# Set up, build the binary (no tests, benchmarks or fuzzers) and start a local cluster.
run: setup binary
	bash scripts/run-local.sh

# Debian packages (stripped binary, systemd units, /etc/minik8s configs; -dbgsym beside it)
# under $(BUILD_DIR)/deb: see docs/multi-machine.md.
deb: binary
	BUILD_DIR=$(BUILD_DIR) bash scripts/build-deb.sh --binary $(BUILD_DIR)/bin/minik8s

# Cold and warm build times and the slowest translation units (about 20 minutes).
build-times:
	bash scripts/build-times.sh

stop:
	bash scripts/run-local.sh stop

bench: build
	@for b in $(BUILD_DIR)/bin/*_bench; do echo "== $$b"; $$b; done

format:
	clang-format -i $$(git ls-files 'src/*.cc' 'src/*.h' 'tests/*.cc' 'bench/*.cc')

clean:
	rm -rf $(BUILD_DIR)
