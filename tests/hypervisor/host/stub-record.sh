#!/bin/sh
# Host driver of the hvrecord Bochs scenario (tests/hypervisor/bochs-scenarios.sh):
# vtice's step recorder on the hypervisor's stub, replayed through stock
# gdb and set against the stub's own answers; checks in stub_record.py.
here=$(dirname "$0")
PYTHONPATH="$here:$here/../../qemu${PYTHONPATH:+:$PYTHONPATH}" exec gdb -nx -batch -q -x "$here/stub_record.py"
