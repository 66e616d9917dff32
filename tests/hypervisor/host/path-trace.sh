#!/bin/sh
# Host driver of the hvpath and hvpathtf (argument tf) Bochs scenarios (tests/hypervisor/bochs-scenarios.sh):
# the guest's own `vtice trace syscall` graph against its ftrace graph;
# checks in path_trace.py.
here=$(dirname "$0")
PYTHONPATH="$here${PYTHONPATH:+:$PYTHONPATH}" exec python3 "$here/path_trace.py" "$@"
