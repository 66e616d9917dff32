#!/bin/busybox sh
# /init of the QEMU rig's initramfs.
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
echo "vtice marker file" > /etc/vtice-marker
# The symbol table for tests, from the running kernel itself (an independent
# source: the kernel's own kallsyms), on the second serial port.
# run.sh caches it per kernel version (no KASLR on the PVH path: the
# addresses do not change between boots) and then asks us to skip it.
grep -q vtice.nokallsyms /proc/cmdline || cat /proc/kallsyms > /dev/ttyS1
echo "VTICE-KALLSYMS-DONE"
# The kernel's own log as its syslog(2) shows it (busybox dmesg), the oracle
# for vtice's dmesg from memory; one line of ours in it first, with control
# bytes the reader must escape.
printf 'vtice-rig: a line from /init, with a tab\there and \001\n' > /dev/kmsg
echo "VTICE-DMESG-BEGIN"
dmesg
echo "VTICE-DMESG-END"
/workload &
workload=$!
# The oracle for vtice's function graph: the kernel's own ftrace
# function_graph of the workload's openat calls (run.sh --ftrace), recorded
# and switched off again before any debugger attaches, so vtice traces
# unpatched text. Interrupts are left out, as vtice's QEMU trace has none.
if grep -q vtice.ftrace /proc/cmdline; then
	t=/sys/kernel/tracing
	mount -t tracefs nodev $t
	echo do_sys_openat2 > $t/set_graph_function
	echo $workload > $t/set_ftrace_pid
	echo 0 > $t/options/funcgraph-irqs
	echo function_graph > $t/current_tracer
	sleep 1
	echo 0 > $t/tracing_on
	echo "VTICE-FTRACE-BEGIN"
	cat $t/trace
	echo "VTICE-FTRACE-END"
	echo nop > $t/current_tracer
fi
echo "VTICE-READY pid $workload"
# The crash-dump rig (run.sh --panic): the guest's own view of its tasks and
# RAM, the oracle for what crash and drgn read from vtice's vmcore, then a
# panic through sysrq (panic=0 on the command line keeps it stopped).
if grep -q vtice.panic /proc/cmdline; then
	sleep 1
	echo "VTICE-TASKS-BEGIN"
	# A task that exits between the glob and the read is left out quietly:
	# the shell's "can't open" would land in the list (CI, 2026-12-02).
	for d in /proc/[0-9]*; do { read -r c < "$d/comm"; } 2>/dev/null && echo "${d#/proc/} $c"; done
	echo "VTICE-TASKS-END"
	echo "VTICE-IOMEM-BEGIN"
	grep "System RAM" /proc/iomem
	echo "VTICE-IOMEM-END"
	# The console's tty drains before the kernel's own lines can cut in.
	sleep 1
	echo c > /proc/sysrq-trigger
fi
while true; do sleep 3600; done
