#!/bin/sh
# Host driver of the hvtfstep Bochs scenario (tests/hypervisor/bochs-scenarios.sh):
# real gdb drives the stub loaded with step_tf=1; checks in stub_tf.py.
here=$(dirname "$0")
PYTHONPATH="$here${PYTHONPATH:+:$PYTHONPATH}" exec gdb -nx -batch -q -x "$here/stub_tf.py"
