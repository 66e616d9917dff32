// SPDX-License-Identifier: GPL-2.0
/*
 * What a traced machine shows a program that looks for a tracer, and the
 * load that makes a trace meet interrupts (scenario hvpathtf).
 *
 * stealth: RFLAGS through PUSHF from user mode (TF is bit 8, SDM Vol. 1
 * 3.4.3) in batches, and IA32_DEBUGCTL (0x1d9; LBR bit 0, BTF bit 1, SDM
 * Vol. 3B 18.4.1) of every CPU through the kernel's msr driver, a CPL-0
 * RDMSR, on one CPU until the hostname says done. A PUSHF counts as
 * stepped when it took STEPPED_TSC cycles or more and that CPU's exit
 * count over its batch covers it (at most one stepped PUSHF per exit): the
 * proof that the probe ran while the tracer stepped it. Stepping is slow
 * (in Bochs ~15,000 steps a second), so a batch is seldom stepped whole.
 *
 * timer-load: an interval timer of PERIOD_US on one CPU, whose expiries
 * are local APIC timer interrupts there.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "device.h"
#include "report.h"

#define PUSHF_BATCH	100
#define STEPPED_TSC	1000	/* an exit's round trip: ~1 us on silicon, far more in Bochs */
#define DEBUGCTL_EVERY	50	/* batches */
#define X86_EFLAGS_TF	(1ull << 8)
#define MSR_DEBUGCTL	0x1d9
#define DEBUGCTL_LBR	(1ull << 0)
#define DEBUGCTL_BTF	(1ull << 1)

struct stealth_counts {
	unsigned long samples, tf_seen, batches, stepped_samples;
	unsigned long debugctl_reads, debugctl_seen;
	uint64_t debugctl_last;
};

static bool hostname_done(const char *want)
{
	struct utsname u;

	return !uname(&u) && !strcmp(u.nodename, want);
}

static uint64_t read_flags(void)
{
	uint64_t flags;

	__asm__ volatile("pushfq; popq %0" : "=r"(flags));
	return flags;
}

/* The CPU's exit count through a descriptor kept open: a syscall stepped costs thousands of exits. */
static void pushf_batch(struct stealth_counts *c, int vtice, int cpu)
{
	int64_t before = cpu_exits(vtice, cpu), after;
	uint64_t last = rdtsc(), now;
	unsigned long slow = 0;

	for (int i = 0; i < PUSHF_BATCH; i++) {
		c->samples++;
		if (read_flags() & X86_EFLAGS_TF)
			c->tf_seen++;
		now = rdtsc();
		slow += now - last >= STEPPED_TSC;
		last = now;
	}
	after = cpu_exits(vtice, cpu);
	c->batches++;
	if (before >= 0 && after > before)
		c->stepped_samples += slow < (unsigned long)(after - before) ? slow : (unsigned long)(after - before);
}

/* DEBUGCTL of every CPU, as the kernel's own RDMSR reads it. */
static void debugctl_round(struct stealth_counts *c)
{
	for (int cpu = 0; cpu < online_cpus(); cpu++) {
		char path[64];
		uint64_t v;
		int fd;

		snprintf(path, sizeof(path), "/dev/cpu/%d/msr", cpu);
		fd = open(path, O_RDONLY);
		if (fd < 0)
			continue;
		if (pread(fd, &v, sizeof(v), MSR_DEBUGCTL) == sizeof(v)) {
			c->debugctl_reads++;
			c->debugctl_last = v;
			if (v & (DEBUGCTL_LBR | DEBUGCTL_BTF))
				c->debugctl_seen++;
		}
		close(fd);
	}
}

int cmd_stealth(int argc, char **argv)
{
	struct stealth_counts c = { 0 };
	uint64_t deadline;
	int max_s, cpu, vtice;

	if (argc != 4 || sscanf(argv[2], "%d", &max_s) != 1 || sscanf(argv[3], "%d", &cpu) != 1)
		return report(argv[0], FAIL, "usage: stealth NAME DONE MAX_S CPU");
	/*
	 * Batches back to back on one CPU, yielding between them: a sleep would
	 * wait for a timer interrupt, which a trace lets in only now and then
	 * (its gate), so a sleeping probe would miss the trace altogether.
	 */
	if (pin_to_cpu(cpu))
		return report(argv[0], FAIL, "cannot run on CPU %d: %s", cpu, strerror(errno));
	vtice = open_vtice();
	if (vtice < 0)
		return report(argv[0], FAIL, "cannot open /dev/vtice: %s", strerror(errno));
	deadline = now_ns() + (uint64_t)max_s * 1000000000ull;
	for (unsigned long round = 0; !hostname_done(argv[1]) && now_ns() < deadline; round++) {
		pushf_batch(&c, vtice, cpu);
		if (round % DEBUGCTL_EVERY == 0)
			debugctl_round(&c);
		sched_yield();
	}
	close(vtice);
	figure_named(argv[0], "pushf_samples", "%lu", c.samples);
	figure_named(argv[0], "stepped_samples", "%lu", c.stepped_samples);
	figure_named(argv[0], "debugctl_reads", "%lu", c.debugctl_reads);
	if (c.tf_seen || c.debugctl_seen)
		return report(argv[0], FAIL, "detected: TF in %lu of %lu PUSHF images, LBR/BTF in %lu of %lu "
			      "DEBUGCTL reads (last 0x%llx)", c.tf_seen, c.samples, c.debugctl_seen,
			      c.debugctl_reads, (unsigned long long)c.debugctl_last);
	if (!c.debugctl_reads)
		return report(argv[0], FAIL, "DEBUGCTL was unreadable through the msr driver");
	if (!c.stepped_samples)
		return report(argv[0], SKIP, "no evidence either way: none of %lu PUSHF ran while stepped "
			      "(no TF in any image, no LBR/BTF in %lu DEBUGCTL reads)", c.samples,
			      c.debugctl_reads);
	return report(argv[0], PASS, "hidden: no TF in %lu PUSHF images (%lu of them stepped: an exit and "
		      "%d+ TSC cycles each), no LBR/BTF in %lu DEBUGCTL reads", c.samples, c.stepped_samples,
		      STEPPED_TSC, c.debugctl_reads);
}

static volatile sig_atomic_t expiries;

static void on_alarm(int sig)
{
	(void)sig;
	expiries++;
}

int cmd_timer_load(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_alarm };
	struct itimerval it = { 0 };
	int cpu, period_us, max_s;
	uint64_t deadline;

	if (argc != 5 || sscanf(argv[1], "%d", &cpu) != 1 || sscanf(argv[2], "%d", &period_us) != 1 ||
	    sscanf(argv[4], "%d", &max_s) != 1 || period_us <= 0)
		return report(argv[0], FAIL, "usage: timer-load NAME CPU PERIOD_US DONE MAX_S");
	if (pin_to_cpu(cpu))
		return report(argv[0], FAIL, "cannot run on CPU %d: %s", cpu, strerror(errno));
	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, NULL);
	it.it_interval.tv_usec = it.it_value.tv_usec = period_us;
	if (setitimer(ITIMER_REAL, &it, NULL))
		return report(argv[0], FAIL, "setitimer: %s", strerror(errno));
	deadline = now_ns() + (uint64_t)max_s * 1000000000ull;
	while (!hostname_done(argv[3]) && now_ns() < deadline)
		pause();
	it.it_interval.tv_usec = it.it_value.tv_usec = 0;
	setitimer(ITIMER_REAL, &it, NULL);
	figure_named(argv[0], "expiries", "%d", (int)expiries);
	return report(argv[0], hostname_done(argv[3]) ? PASS : FAIL,
		      "%d expiries of a %d us timer on CPU %d", (int)expiries, period_us, cpu);
}
