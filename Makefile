# fuseplan - thin wrapper: `make run` and `make test` are the whole set-up on a fresh Debian.
# CMake does the building; scripts/install-deps.sh installs only the Debian packages missing.

BUILD      ?= build
ASAN_BUILD ?= build-asan
JOBS       ?= $(shell nproc 2>/dev/null || echo 2)
SAMPLE     ?= models/resnet_tiny.onnx

.PHONY: all run test deps build build-asan bench fuzz python clean

all: build

deps:
	@scripts/install-deps.sh

build: deps
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release -DFP_WERROR=ON >/dev/null
	@cmake --build $(BUILD) -j$(JOBS) -- --no-print-directory

build-asan: deps
	@cmake -S . -B $(ASAN_BUILD) -DCMAKE_BUILD_TYPE=Debug -DFP_WERROR=ON >/dev/null
	@cmake --build $(ASAN_BUILD) -j$(JOBS) -- --no-print-directory

run: build
	./$(BUILD)/fuseplan report $(SAMPLE)

# Every test, in the Release build and again under ASan+UBSan (LeakSanitizer included), then the
# Python package's against the Release build's library and executable.
test: build build-asan
	./$(BUILD)/fuseplan_tests
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	  LSAN_OPTIONS=suppressions=$(CURDIR)/tests/lsan.supp:print_suppressions=0 \
	  ./$(ASAN_BUILD)/fuseplan_tests
	PYTHONPATH=python FUSEPLAN_LIBRARY=$(BUILD)/libfuseplan.so.1 FUSEPLAN_CLI=$(BUILD)/fuseplan \
	  /usr/bin/python3 -m pytest -q -p no:cacheprovider python/tests

# The Python package (python/): the library copied beside it, so that `import fuseplan` finds it
# with PYTHONPATH=python, and `pip install --no-build-isolation ./python` installs both.
python: build
	cp $(BUILD)/libfuseplan.so.1 python/fuseplan/libfuseplan.so.1

# Benchmarks (never part of make test): rewrites the measured part of docs/benchmarks.md.
# BENCH_BIG=1 adds the ~1 GB model; see bench/run.sh for the other knobs.
bench: build
	BUILD_DIR=$(BUILD) bench/run.sh

# libFuzzer targets (clang, ASan+UBSan), each run FUZZ_SECONDS on a corpus seeded from the sample
# models and test data; never part of make test (tests/fuzz/README.md).
FUZZ_BUILD   ?= build-fuzz
FUZZ_SECONDS ?= 60
FUZZ_TARGETS ?= onnx onnx_text ge ini input_spec
fuzz:
	@scripts/install-deps.sh clang libclang-rt-14-dev
	@CC=clang cmake -S . -B $(FUZZ_BUILD) -DCMAKE_BUILD_TYPE=Debug -DFP_FUZZ=ON >/dev/null
	@cmake --build $(FUZZ_BUILD) -j$(JOBS) --target $(addprefix fuzz_,$(FUZZ_TARGETS)) -- --no-print-directory
	@tests/fuzz/seeds.sh $(FUZZ_BUILD)/seeds
	tests/fuzz/run.sh $(FUZZ_BUILD) $(FUZZ_SECONDS) $(FUZZ_TARGETS)

clean:
	rm -rf $(BUILD) $(ASAN_BUILD)
