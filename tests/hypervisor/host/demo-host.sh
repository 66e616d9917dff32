#!/bin/sh
# Host driver of the demo Bochs scenario (tests/hypervisor/bochs-scenarios.sh),
# the hypervisor half of make demo: checks in demo_host.py.
here=$(dirname "$0")
PYTHONPATH="$here${PYTHONPATH:+:$PYTHONPATH}" exec python3 "$here/demo_host.py" "$@"
