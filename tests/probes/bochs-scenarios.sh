# vtice probe in the Bochs rig (docs/probes.md): a probe program's
# printf of openat return values, and its count() and sum() of reads,
# against the guest kernel's own syscall tracepoints in the same run, with
# the module's default parameters. hv.probe-kstack: a fn: probe's kstack
# against the kernel's own kprobe stacktrace of the same reads.
# hv.probe-str, hv.probe-ret: str(args->filename) (the argument by its BTF
# name) in fn:do_sys_openat2 and retval in
# fn:do_sys_openat2:return against the kernel's kprobe and kretprobe events;
# hv.probe-sysargs: args-> names in syscall: probes against each syscall's
# sys_enter event format in tracefs;
# hv.probe-addr: an addr: probe inside do_sys_openat2 against a kprobe at
# the same offset, and the offsets the kernel's kprobes refuse;
# hv.probe-watch: a watch: probe's hits on vm_swappiness against the
# kernel's kprobe on the function that stores it. hv.probe-fetch: reads
# through arguments (args->how->flags against the kernel's kprobe fetch of
# the same field; str(((struct file *)arg0)->f_path.dentry->d_name.name)
# against the names of the files the child read; the same names through
# retval at do_filp_open's returns). hv.probe-module: args-> of a module's
# function (Debian's msr.ko: msr_read's count and file->f_pos, typed by the
# module's BTF) against the kernel's kprobe fetch of the same registers.
# hv.probe-smc: the kernel rewrites the
# probed entry of vfs_read (ftrace, for its own kprobe there) and the new
# bytes run on both CPUs, the kprobe's hits per CPU the oracle.
# hv.probe-keys: @reads[comm] = count() at ksys_read, counted by key in
# root, against the kernel's sys_enter_read tracepoint's lines of two comms;
# hv.probe-keys-full: @sizes[arg2] = count() over more sizes than root has
# slots, the hits past them recorded, every size's count the tracepoint's;
# hv.probe-keys-func: @calls[func] = count() at ksys_read and ksys_write,
# @bytes[probe] = sum(arg2) at vfs_read and vfs_write, counted in root by
# address, against the sys_enter_read and sys_enter_write tracepoints;
# hv.probe-keys-read: @at[args->pos[0]] = count() at vfs_read (a key root
# reads through an argument) and @bytes[tid, regs->r10] = sum(regs->dx)
# at __x64_sys_pread64 (a sum keyed by the task and a value, both read), over more offsets than root has slots,
# against the sys_enter_pread64 tracepoint's pos: and count: fields.
# hv.probe-tail: reads going on while the console ends the run; the hits
# root counted (its counts) are all in the hist's buckets and the key's slot.
scenario_hvprobe() {
	vtice_at_defaults || { result hv.probe FAIL "insmod failed"; return; }
	$T probe hv.probe
	$T probe-kstack hv.probe-kstack
	$T probe-str hv.probe-str
	$T probe-sysargs hv.probe-sysargs
	$T probe-ret hv.probe-ret
	$T probe-addr hv.probe-addr
	$T probe-watch hv.probe-watch
	$T probe-fetch hv.probe-fetch
	$T probe-module hv.probe-module
	$T probe-smc hv.probe-smc
	$T probe-keys hv.probe-keys
	$T probe-tail hv.probe-tail
	rmmod_vtice
}
