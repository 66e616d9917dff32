#!/usr/bin/env bash
# Stock gdb single-stepping through the hypervisor stub's RSP engine over a
# paced 115,200-baud line (tools/bench_stub_step.py): steps per second, and
# with VTICE_PEER_SIM=path the ratio against another build of the engine.
# Usage: tools/bench-stub-step.sh [BUILD]
set -euo pipefail
build=${1:-build}
sim=$build/tests/hypervisor/vtice-rsp-sim
[[ -x $sim ]] || { echo "bench-stub-step: $sim is not built"; exit 0; }
exec python3 "$(dirname "$0")/bench_stub_step.py" "$sim" --steps 200 ${VTICE_PEER_SIM:+--peer "$VTICE_PEER_SIM"}
