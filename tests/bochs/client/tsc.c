// SPDX-License-Identifier: GPL-2.0
/*
 * tscgap NAME DONE MAX_S: what a program sees of the TSC while the host's
 * debugger stops the machine (scenario hvtsc, tsc_offset=1). Reads RDTSC
 * back to back until the kernel's domain name becomes DONE (the host
 * writes it while the machine is stopped) or MAX_S seconds pass, and
 * prints the biggest step between two reads: without TSC offsetting it
 * holds the whole stop, with it only what ran. Also the cheapest of 1,000
 * RDTSC deltas around CPUID (a VM exit each: not hidden, tsc_hide.h), and
 * CLOCK_MONOTONIC over the whole loop (the kernel's clock follows the TSC).
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "report.h"

static int domainname_is(const char *want)
{
	char name[128] = "";

	return getdomainname(name, sizeof(name)) == 0 && !strcmp(name, want);
}

static uint64_t cpuid_cycles(void)
{
	uint64_t best = UINT64_MAX;

	for (int i = 0; i < 1000; i++) {
		uint32_t a = 0, b, c = 0, d;
		uint64_t t0 = rdtsc();

		__asm__ volatile("cpuid" : "+a"(a), "=b"(b), "+c"(c), "=d"(d));
		uint64_t t = rdtsc() - t0;
		if (t < best)
			best = t;
	}
	return best;
}

int cmd_tscgap(int argc, char **argv)
{
	uint64_t max_gap = 0, reads = 0, prev, start_ns, deadline;
	unsigned max_s;

	if (argc != 3 || sscanf(argv[2], "%u", &max_s) != 1)
		return report(argc ? argv[0] : "tscgap", FAIL, "usage: tscgap NAME DONE MAX_S");
	figure_named(argv[0], "cpuid-tsc", "%llu", (unsigned long long)cpuid_cycles());
	start_ns = now_ns();
	deadline = start_ns + (uint64_t)max_s * 1000000000ull;
	prev = rdtsc();
	for (;;) {
		uint64_t t = rdtsc();

		if (t - prev > max_gap)
			max_gap = t - prev;
		prev = t;
		if (++reads % 4096)
			continue;
		if (domainname_is(argv[1]) || now_ns() > deadline)
			break;
		prev = rdtsc();		/* the checks' own time is not a gap */
	}
	figure_named(argv[0], "max-gap", "%llu", (unsigned long long)max_gap);
	figure_named(argv[0], "monotonic-ms", "%llu", (unsigned long long)((now_ns() - start_ns) / 1000000));
	if (!domainname_is(argv[1]))
		return report(argv[0], FAIL, "the host's cue %s never came in %u s", argv[1], max_s);
	return report(argv[0], PASS, "%llu reads, biggest step %llu TSC cycles", (unsigned long long)reads,
		      (unsigned long long)max_gap);
}
