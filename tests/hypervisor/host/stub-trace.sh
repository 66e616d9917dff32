#!/bin/sh
# Host driver of the hvtrace Bochs scenario (tests/hypervisor/bochs-scenarios.sh):
# real gdb's record btrace, then vtice's trace, on the hypervisor's tracer;
# checks in stub_trace.py.
here=$(dirname "$0")
PYTHONPATH="$here${PYTHONPATH:+:$PYTHONPATH}" exec gdb -nx -batch -q -x "$here/stub_trace.py"
