# fuseplan - thin wrapper: `make run` and `make test` are the whole set-up on a fresh Debian.
# CMake does the building; scripts/install-deps.sh installs only the Debian packages missing: `make
# run` (and build) those that building and running need, `make test` those that testing needs too.

BUILD      ?= build
ASAN_BUILD ?= build-asan
JOBS       ?= $(shell nproc 2>/dev/null || echo 2)
SAMPLE     ?= models/resnet_tiny.onnx
# build and build-asan build the test executable too where CUnit is installed; test always does.
FP_TESTS   ?= $(shell pkg-config --exists cunit 2>/dev/null && echo ON || echo OFF)

.PHONY: all run test deps deps-test build build-asan bench fuzz python format format-check clean

all: build

deps:
	@scripts/install-deps.sh run

deps-test:
	@scripts/install-deps.sh test

# $(call cmake_build,DIR,BUILD_TYPE,FP_TESTS): configures DIR and builds everything in it.
cmake_build = cmake -S . -B $(1) -DCMAKE_BUILD_TYPE=$(2) -DFP_WERROR=ON -DFP_TESTS=$(3) >/dev/null && \
	cmake --build $(1) -j$(JOBS) -- --no-print-directory

build: deps
	@$(call cmake_build,$(BUILD),Release,$(FP_TESTS))

build-asan: deps
	@$(call cmake_build,$(ASAN_BUILD),Debug,$(FP_TESTS))

run: build
	./$(BUILD)/fuseplan report $(SAMPLE)

# Every test, in the Release build and again under ASan+UBSan (LeakSanitizer included), then the
# Python package's against the Release build's library and executable, then the scripts' own.
test: deps-test
	scripts/format.sh --check
	@$(call cmake_build,$(BUILD),Release,ON)
	@$(call cmake_build,$(ASAN_BUILD),Debug,ON)
	./$(BUILD)/fuseplan_tests
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	  LSAN_OPTIONS=suppressions=$(CURDIR)/tests/lsan.supp:print_suppressions=0 \
	  ./$(ASAN_BUILD)/fuseplan_tests
	PYTHONPATH=python FUSEPLAN_LIBRARY=$(BUILD)/libfuseplan.so.1 FUSEPLAN_CLI=$(BUILD)/fuseplan \
	  /usr/bin/python3 -m pytest -q -p no:cacheprovider python/tests
	tests/test_install_deps.sh
	tests/test_format.sh

# The Python package (python/): the library copied beside it, so that `import fuseplan` finds it
# with PYTHONPATH=python, and `pip install --no-build-isolation ./python` installs both.
python: build
	cp $(BUILD)/libfuseplan.so.1 python/fuseplan/libfuseplan.so.1

# Benchmarks (never part of make test): rewrites the measured part of docs/benchmarks.md.
# BENCH_BIG=1 adds the ~1 GB model; see bench/run.sh for the other knobs.
bench: build
	@scripts/install-deps.sh bench
	BUILD_DIR=$(BUILD) bench/run.sh

# libFuzzer targets (clang, ASan+UBSan), each run FUZZ_SECONDS on a corpus seeded from the sample
# models and test data; never part of make test (tests/fuzz/README.md).
FUZZ_BUILD   ?= build-fuzz
FUZZ_SECONDS ?= 60
FUZZ_TARGETS ?= onnx onnx_text ge ini input_spec genai_config
fuzz:
	@scripts/install-deps.sh fuzz
	@CC=clang cmake -S . -B $(FUZZ_BUILD) -DCMAKE_BUILD_TYPE=Debug -DFP_FUZZ=ON -DFP_TESTS=OFF >/dev/null
	@cmake --build $(FUZZ_BUILD) -j$(JOBS) --target $(addprefix fuzz_,$(FUZZ_TARGETS)) -- --no-print-directory
	@tests/fuzz/seeds.sh $(FUZZ_BUILD)/seeds
	tests/fuzz/run.sh $(FUZZ_BUILD) $(FUZZ_SECONDS) $(FUZZ_TARGETS)

# clang-format (.clang-format) over the tracked C sources: format rewrites them, format-check
# changes nothing and fails naming the files that format would change.
format:
	@scripts/install-deps.sh format
	@scripts/format.sh

format-check:
	@scripts/install-deps.sh format
	@scripts/format.sh --check

clean:
	rm -rf $(BUILD) $(ASAN_BUILD)
