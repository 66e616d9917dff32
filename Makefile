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

.PHONY: all deps configure kernel kernel-debug module install-module sign test unit-test test-matrix test-transparency fuzz-build fuzz-test fuzz bench demo clean help

all: deps configure
	cmake --build $(BUILD) -j $(JOBS)

help:
	@echo "make            build vtice (installs missing Debian packages first)"
	@echo "make deps       install the Debian packages vtice needs (idempotent)"
	@echo "make module     build hypervisor/vtice.ko (KDIR=headers to choose the kernel; any distribution)"
	@echo "make install-module  install vtice.ko with DKMS (KVER=version, default the running kernel)"
	@echo "make sign       sign vtice.ko for Secure Boot (KEY=mok.priv CERT=mok.der)"
	@echo "make test       build everything and run the whole suite"
	@echo "make test-matrix  the hypervisor on each kernel x CPU cell in Bochs (MATRIX_ARGS=--quick: ~20 min)"
	@echo "make test-transparency  the transparency fuzzer on Skylake-X and Sapphire Rapids in Bochs, a fresh seed (~20 min)"
	@echo "make bench      run the benchmarks, write figures to $(BUILD)/bench/"
	@echo "make demo       run the main job on the bundled default target"
	@echo "make kernel-debug  the rig kernel's vmlinux with debug info, for crash and drgn (~860 MB)"
	@echo "make fuzz       run each fuzzer for FUZZ_SECONDS ($(FUZZ_SECONDS)) seconds"
	@echo "make clean      remove the build directories"

deps:
	@tools/deps.sh

configure: deps
	@test -f $(BUILD)/CMakeCache.txt || cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo

# The Debian kernel the rigs boot, and 6.12 (bookworm-backports) with its
# headers for the build and install tests on a newer kernel.
kernel: deps
	@tools/kernel.sh $(KERNEL_DIR) >/dev/null
	@tools/kernel.sh --suite bookworm-backports --headers $(KERNEL_DIR) >/dev/null

# The rig kernel's vmlinux with debug info (linux-image-VERSION-dbg, ~860 MB
# download): crash and drgn need it to open vtice's vmcores (qemu.vmcore).
kernel-debug: kernel
	@tools/kernel.sh --debug $(KERNEL_DIR) >/dev/null

# vtice.ko for the running kernel, or else the newest Debian headers
# (pass KDIR=/path/to/headers for another kernel). Needs only the kernel's
# headers and its compiler, on any distribution: no package is installed.
module:
	$(MAKE) -C hypervisor $(if $(KDIR),KDIR=$(KDIR))

install-module:
	$(MAKE) -C hypervisor dkms-install $(if $(KVER),KVER=$(KVER))

sign:
	$(MAKE) -C hypervisor sign $(if $(KDIR),KDIR=$(KDIR)) KEY=$(KEY) CERT=$(CERT)

# -O1 with line tables, asserts on (no NDEBUG): what libFuzzer advises,
# and 3.4 min to build on 2 cores against 5.3 at -O2 -g.
FUZZ_FLAGS := -O1 -gline-tables-only
fuzz-build: deps
	@test -f $(FUZZ_BUILD)/CMakeCache.txt || CC=clang CXX=clang++ cmake -S . -B $(FUZZ_BUILD) \
		-DVTICE_FUZZ=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo \
		-DCMAKE_C_FLAGS_RELWITHDEBINFO="$(FUZZ_FLAGS)" -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="$(FUZZ_FLAGS)"
	cmake --build $(FUZZ_BUILD) -j $(JOBS)

# The kernels' downloads (~1 GB, network-bound) go on beside the build
# (CPU-bound) instead of after it.
unit-test: deps
	@$(MAKE) -j3 all kernel kernel-debug
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS) $(CTEST_ARGS) || \
		{ cd $(CURDIR) && sh tests/failure-digest.sh $(BUILD); exit 1; }

# Each fuzzer runs for a fixed time, one per core at a time.
fuzz-test: fuzz-build
	cd $(FUZZ_BUILD) && ctest --output-on-failure -j $(JOBS) -L fuzz $(CTEST_ARGS)

test: unit-test fuzz-test

# One Bochs run per kernel x CPU cell (tests/bochs/matrix.sh --help); the
# table goes to $(BUILD)/matrix/matrix.md.
MATRIX_ARGS ?=
test-matrix: all kernel
	tests/bochs/matrix.sh --out $(BUILD)/matrix --vtice $(BUILD)/vtice $(MATRIX_ARGS)

test-transparency: all kernel
	tests/transparency/long-run.sh --out $(BUILD)/transparency --vtice $(BUILD)/vtice

fuzz: fuzz-build
	cd $(FUZZ_BUILD) && VTICE_FUZZ_SECONDS=$(FUZZ_SECONDS) ctest --output-on-failure -L fuzz \
		--timeout $$(( $(FUZZ_SECONDS) + 120 ))

bench: all kernel
	tools/bench.sh $(BUILD)

demo: all kernel
	tools/demo.sh $(BUILD)

clean:
	rm -rf $(BUILD) $(FUZZ_BUILD)
