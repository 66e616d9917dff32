#!/bin/sh
# Host driver of the hvstub Bochs scenario (tests/hypervisor/bochs-scenarios.sh):
# real gdb, no symbols, drives the hypervisor's stub over COM2. The checks
# are in stub_gdb.py, run inside gdb's own Python (rig_host.py beside it).
here=$(dirname "$0")
PYTHONPATH="$here${PYTHONPATH:+:$PYTHONPATH}" exec gdb -nx -batch -q -x "$here/stub_gdb.py"
