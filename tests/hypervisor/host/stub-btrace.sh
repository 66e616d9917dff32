#!/bin/sh
# Host driver of the hvbtrace Bochs scenario (tests/hypervisor/bochs-scenarios.sh):
# real gdb's record btrace on the hypervisor's tracer; checks in stub_trace.py.
here=$(dirname "$0")
VTICE_TRACE_PART=gdb PYTHONPATH="$here${PYTHONPATH:+:$PYTHONPATH}" exec gdb -nx -batch -q -x "$here/stub_trace.py"
