// SPDX-License-Identifier: GPL-2.0
/*
 * vtice-test: the static test client that runs inside the Bochs guest.
 * One subcommand per check; each prints its own VTICE-TEST marker and exits
 * 0 (pass), 1 (fail) or 77 (skip) so /init can also branch on it.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "report.h"

static const char *const outcome_names[] = {
	[PASS] = "PASS", [FAIL] = "FAIL", [SKIP] = "SKIP",
};

int report(const char *name, enum outcome outcome, const char *fmt, ...)
{
	char details[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(details, sizeof(details), fmt, ap);
	va_end(ap);
	/* One write per line so kernel console output cannot split it. */
	printf("VTICE-TEST %s %s %s\n", name, outcome_names[outcome], details);
	fflush(stdout);
	return outcome;
}

void figure_named(const char *test, const char *key, const char *fmt, ...)
{
	char value[128];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(value, sizeof(value), fmt, ap);
	va_end(ap);
	printf("VTICE-FIGURE %s.%s=%s\n", test, key, value);
	fflush(stdout);
}

int online_cpus(void)
{
	return (int)sysconf(_SC_NPROCESSORS_ONLN);
}

int pin_to_cpu(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set);
}

uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/*
 * Wait until the console UART has sent everything user space wrote: echo
 * returns once its line is in the tty buffer, and a poweroff -f right after
 * loses whatever the UART had not sent yet (seen after CPU hotplug, when the
 * UART drained slowly). Bounded, so a stuck UART cannot hang the run.
 */
static int cmd_drain(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	alarm(120);
	return tcdrain(STDOUT_FILENO) == 0 ? 0 : 1;
}

struct command {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *usage;
};

static const struct command commands[] = {
	{ "cpuid", cmd_cpuid, "NAME vmx|novmx|cpuinfo|any  CPUID works on every CPU; VMX bit as expected" },
	{ "oracle", cmd_oracle, "NAME on|off  switch the rig's Bochs log of the guest kernel's instructions (tests/bochs/oracle)" },
	{ "vmcall", cmd_vmcall, "NAME  user-mode VMCALL must raise SIGILL" },
	{ "msr", cmd_msr, "NAME readable|as-bare  VMX MSRs via /dev/cpu/N/msr (kept, or as kept); TSC/APIC_BASE read" },
	{ "getpid", cmd_getpid, "NAME N [BASE_NS]  time N getpid calls (and VM exits, ratio to BASE_NS)" },
	{ "stress", cmd_stress, "NAME SECONDS  fork/exec/syscall workload (0: until SIGTERM)" },
	{ "status", cmd_status, "NAME  every CPU virtualized, exits counted; prints the table" },
	{ "devnode", cmd_devnode, "NAME  /dev/vtice is 0600 root and refuses non-root" },
	{ "fuzz", cmd_fuzz, "NAME N SEED  N random ioctls on /dev/vtice" },
	{ "heartbeat", cmd_heartbeat, "WHAT  'VTICE-ALIVE Ns into: WHAT' every 30 s of the guest's clock until killed" },
	{ "drain", cmd_drain, "NAME  wait until the console has sent all output (max 120 s)" },
	{ "kcore", cmd_kcore, "NAME SYMBOL LEN [HEX]  SYMBOL's bytes via /proc/kcore (as expected)" },
	{ "modallocs", cmd_modallocs, "FILE  the module area's allocations now (/proc/vmallocinfo), for modtext" },
	{ "modtext", cmd_modtext, "NAME KO FILE present|absent  KO's code in what the module area gained since FILE (/proc/kcore)" },
	{ "keyscan", cmd_keyscan, "NAME HASH FIRST_BYTE present|absent  the VMCALL key (given as a hash) in all RAM (/proc/kcore)" },
	{ "kwatch", cmd_kwatch, "NAME SYMBOL LEN DONE MAX_S  SYMBOL's bytes never change until hostname is DONE" },
	{ "com2", cmd_com2, "NAME DEVICE  serve tests/bochs/host/com2-check.py on a 115200 raw line" },
	{ "gdbwire", cmd_gdbwire, "NAME DEVICE  first RSP steps with gdb on the host (host/gdb-wire.py)" },
	{ "ftrace-openat", cmd_ftrace_openat, "NAME PATH  the kernel's function_graph of one openat(PATH)" },
	{ "openat-cost", cmd_openat_cost, "NAME PATH N  the fastest of N untraced openat(PATH), in TSC cycles" },
	{ "openat-loop", cmd_openat_loop, "NAME PATH DONE MAX_S  openat(PATH) each second as vtopen until hostname is DONE" },
	{ "move-loop", cmd_move_loop, "NAME DONE MAX_S  as vtmove, each second sched_setaffinity to the other CPU, until hostname is DONE" },
	{ "nap", cmd_nap, "NAME COMM SECONDS  one sleep of SECONDS as COMM" },
	{ "syscalls", cmd_syscalls, "NAME  vtice trace syscalls shows exactly the syscalls a child makes" },
	{ "probe", cmd_probe, "NAME  vtice probe's counts and return values equal the syscall tracepoints'" },
	{ "probe-ret", cmd_probe_ret, "NAME  a fn:NAME:return probe's retval is what the kernel's kretprobe $retval gives" },
	{ "probe-addr", cmd_probe_addr, "NAME  an addr: probe's hits are the kernel's kprobe's at the same offset; the offsets it refuses, refused" },
	{ "probe-sysargs", cmd_probe_sysargs, "NAME  args-> in syscall: probes takes the names of each syscall's sys_enter event's format, in order" },
	{ "probe-str", cmd_probe_str, "NAME  a fn: probe's str(args->filename) prints the paths the kernel's kprobe ustring fetch gives" },
	{ "probe-fetch", cmd_probe_fetch, "NAME  reads through arguments (args->how->flags, a file's name) are what the kernel's kprobe and the files read give" },
	{ "probe-module", cmd_probe_module, "NAME  args-> of a module's function (msr_ioctl, typed by msr's BTF) are what the kernel's kprobe fetches" },
	{ "probe-watch", cmd_probe_watch, "NAME  a watch: probe's writes are the stores the kernel's kprobe sees, in the function that makes them" },
	{ "probe-smc", cmd_probe_smc, "NAME  text the kernel rewrites under a hidden probe (ftrace's kprobe on vfs_read) runs on every CPU, and the probe counts on" },
	{ "probe-keys", cmd_probe_keys, "NAME  @reads[comm] = count(), counted by key in root, holds the kernel's syscall tracepoint's reads of each comm" },
	{ "probe-kstack", cmd_probe_kstack, "NAME  a fn: probe's kstack names the callers the kernel's kprobe stacktrace names" },
	{ "probe-tail", cmd_probe_tail, "NAME  the hits root counted as the probes went are all in the map's buckets and keys" },
	{ "path-cost", cmd_path_cost, "NAME  getpid exits unarmed, while trace syscall is armed, after kill -9" },
	{ "path-kill", cmd_path_kill, "NAME [CPU [interrupt-record]]  kill -9 trace syscall mid-call (its reader on CPU, default 1), or SIGINT a recording one: nothing left stepping" },
	{ "stealth", cmd_stealth, "NAME DONE MAX_S CPU  no TF in PUSHF images, no LBR/BTF in DEBUGCTL, on CPU, until hostname is DONE" },
	{ "timer-load", cmd_timer_load, "NAME CPU PERIOD_US DONE MAX_S  an interval timer on CPU until hostname is DONE" },
	{ "user-probe", cmd_user_probe, "NAME SEED COUNT FILE  the transparency fuzzer's CPL-3 observations, one line each, into FILE" },
	{ "hwbp-settle", cmd_hwbp_settle, "NAME  every CPU's debug registers as a breakpoint of user-probe's leaves them" },
	{ "tscgap", cmd_tscgap, "NAME DONE MAX_S  the biggest step between RDTSC reads until the domain name is DONE" },
	{ "ring", cmd_ring, "NAME  NAME.order: EMIT_TEST records in order; NAME.overflow: drops counted" },
};

static void usage(void)
{
	fprintf(stderr, "usage: vtice-test COMMAND NAME [ARGS]\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(stderr, "  %-8s %s\n", commands[i].name, commands[i].usage);
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc < 3) {
		usage();
		return 2;
	}
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(argv[1], commands[i].name))
			return commands[i].run(argc - 2, argv + 2);
	usage();
	return 2;
}
