# vtice probe in the Bochs rig (docs/probes.md): a probe program's
# printf of openat return values, and its count() and sum() of reads,
# against the guest kernel's own syscall tracepoints in the same run, with
# the module's default parameters. hv.probe-kstack: a fn: probe's kstack
# against the kernel's own kprobe stacktrace of the same reads.
scenario_hvprobe() {
	vtice_at_defaults || { result hv.probe FAIL "insmod failed"; return; }
	$T probe hv.probe
	$T probe-kstack hv.probe-kstack
	$T probe-str hv.probe-str
	rmmod_vtice
}
