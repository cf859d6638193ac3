# fuseplan - thin wrapper: `make run` and `make test` are the whole set-up on a fresh Debian.
# CMake does the building; scripts/install-deps.sh installs only the Debian packages missing.

BUILD      ?= build
ASAN_BUILD ?= build-asan
JOBS       ?= $(shell nproc 2>/dev/null || echo 2)
SAMPLE     ?= models/resnet_tiny.onnx

.PHONY: all run test deps build build-asan bench clean

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

# Every test, in the Release build and again under ASan+UBSan (LeakSanitizer included).
test: build build-asan
	./$(BUILD)/fuseplan_tests
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	  LSAN_OPTIONS=suppressions=$(CURDIR)/tests/lsan.supp:print_suppressions=0 \
	  ./$(ASAN_BUILD)/fuseplan_tests

bench: build
	bench/run.sh

clean:
	rm -rf $(BUILD) $(ASAN_BUILD)
