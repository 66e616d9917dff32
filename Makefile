# vtice top-level build. User space is CMake under build/, the fuzzers a
# second clang build under build-fuzz/, the kernel module kbuild under
# hypervisor/. Every entry point first makes sure the Debian packages exist.

BUILD      ?= build
FUZZ_BUILD ?= build-fuzz
JOBS       ?= $(shell nproc)
KERNEL_DIR := $(BUILD)/kernel
FUZZ_SECONDS ?= 300
CTEST_ARGS ?=
# Keep the nested CMake-generated makes quiet about directories.
MAKEFLAGS += --no-print-directory

.PHONY: all deps configure kernel module test unit-test fuzz-build fuzz-test fuzz bench demo clean help

all: deps configure
	cmake --build $(BUILD) -j $(JOBS)

help:
	@echo "make            build vtice (installs missing Debian packages first)"
	@echo "make deps       install the Debian packages vtice needs (idempotent)"
	@echo "make module     build hypervisor/vtice.ko (KDIR=headers to choose the kernel)"
	@echo "make test       build everything and run the whole suite"
	@echo "make bench      run the benchmarks, write figures to $(BUILD)/bench/"
	@echo "make demo       run the main job on the bundled default target"
	@echo "make fuzz       run each fuzzer for FUZZ_SECONDS ($(FUZZ_SECONDS)) seconds"
	@echo "make clean      remove the build directories"

deps:
	@tools/deps.sh

configure: deps
	@test -f $(BUILD)/CMakeCache.txt || cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo

kernel: deps
	@tools/kernel.sh $(KERNEL_DIR) >/dev/null

# vtice.ko for the running kernel, or else the newest Debian headers
# (pass KDIR=/path/to/headers for another kernel).
module: deps
	$(MAKE) -C hypervisor $(if $(KDIR),KDIR=$(KDIR))

fuzz-build: deps
	@test -f $(FUZZ_BUILD)/CMakeCache.txt || CC=clang CXX=clang++ cmake -S . -B $(FUZZ_BUILD) \
		-DVTICE_FUZZ=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo
	cmake --build $(FUZZ_BUILD) -j $(JOBS)

unit-test: all kernel
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS) $(CTEST_ARGS)

# Each fuzzer runs for a fixed time, one per core at a time.
fuzz-test: fuzz-build
	cd $(FUZZ_BUILD) && ctest --output-on-failure -j $(JOBS) -L fuzz $(CTEST_ARGS)

test: unit-test fuzz-test

fuzz: fuzz-build
	cd $(FUZZ_BUILD) && VTICE_FUZZ_SECONDS=$(FUZZ_SECONDS) ctest --output-on-failure -L fuzz \
		--timeout $$(( $(FUZZ_SECONDS) + 120 ))

bench: all kernel
	tools/bench.sh $(BUILD)

demo: all kernel
	tools/demo.sh $(BUILD)

clean:
	rm -rf $(BUILD) $(FUZZ_BUILD)
