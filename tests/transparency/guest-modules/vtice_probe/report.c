// SPDX-License-Identifier: GPL-2.0
/*
 * A state's differences from the bare run, one line per observation
 * (kind and argument) that differed, with how often and on which CPUs;
 * and the TSC cycles each kind took, bare and in the state. The format
 * is in tests/transparency/README.md; bochs-scenarios.sh reads it.
 */
#include <linux/kernel.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include "probe.h"

#define MAX_DIFFS	512

struct diff {
	u8 kind;
	u16 sub;
	u32 arg;
	u64 cpus, count, first;
	struct obs_result bare, now;
};

struct obs_diffs {
	u32 n;
	u64 total, untabled;
	u64 cycles[OBS_KINDS][2], runs[OBS_KINDS][2];	/* [kind][0 bare, 1 now] */
	struct diff d[MAX_DIFFS];
};

struct obs_diffs *obs_diffs_new(void)
{
	return vzalloc(sizeof(struct obs_diffs));
}

void obs_diffs_free(struct obs_diffs *d)
{
	vfree(d);
}

static bool same_key(const struct diff *x, const struct obs *o)
{
	return x->kind == o->kind && x->arg == o->arg && x->sub == o->sub;
}

void obs_diffs_add(struct obs_diffs *d, const struct obs *o, u64 index,
		   const struct obs_result *bare, const struct obs_result *now)
{
	struct diff *x = NULL;
	u32 i;

	d->total++;
	for (i = 0; i < d->n && !x; i++)
		if (same_key(&d->d[i], o))
			x = &d->d[i];
	if (!x) {
		if (d->n == MAX_DIFFS) {
			d->untabled++;
			return;
		}
		x = &d->d[d->n++];
		*x = (struct diff){ .kind = o->kind, .sub = o->sub, .arg = o->arg, .first = index,
				    .bare = *bare, .now = *now };
	}
	x->cpus |= BIT_ULL(o->cpu & 63);
	x->count++;
}

void obs_timing_add(struct obs_diffs *d, u8 kind, u64 cycles)
{
	if (kind >= OBS_KINDS)
		return;
	d->cycles[kind][1] += cycles;
	d->runs[kind][1]++;
}

void obs_timing_bare(struct obs_diffs *d, u8 kind, u64 cycles, u64 runs)
{
	if (kind >= OBS_KINDS)
		return;
	d->cycles[kind][0] = cycles;
	d->runs[kind][0] = runs;
}

static const char *vector_name(u32 vector)
{
	static const char *const names[] = {
		"#DE", "#DB", "NMI", "#BP", "#OF", "#BR", "#UD", "#NM", "#DF", "#9",
		"#TS", "#NP", "#SS", "#GP", "#PF", "#15", "#MF", "#AC", "#MC", "#XM",
		"#VE", "#CP",
	};

	return vector < ARRAY_SIZE(names) ? names[vector] : "#?";
}

static int print_key(char *buf, size_t len, const struct diff *x)
{
	const char *kind = obs_kind_name(x->kind);

	switch (x->kind) {
	case OBS_CPUID: return scnprintf(buf, len, "%s 0x%x.%u", kind, x->arg, x->sub);
	case OBS_READ_CR: case OBS_READ_DR: case OBS_WRITE_DR:
		return scnprintf(buf, len, "%s %s%u", kind, x->kind == OBS_READ_CR ? "cr" : "dr", x->arg);
	case OBS_WRITE_CR: return scnprintf(buf, len, "%s cr%u/%u", kind, x->arg, x->sub);
	case OBS_TOGGLE_CR: return scnprintf(buf, len, "%s cr%u.bit%u", kind, x->arg, x->sub);
	case OBS_VMX: return scnprintf(buf, len, "%s %s", kind, obs_vmx_name(x->arg));
	case OBS_DEBUG: return scnprintf(buf, len, "%s %s", kind, obs_debug_name(x->arg));
	case OBS_IRET: return scnprintf(buf, len, "%s %s", kind, obs_iret_name(x->arg));
	case OBS_ALIAS: return scnprintf(buf, len, "%s %u/%s", kind, x->arg, obs_alias_name(x->sub));
	case OBS_UD2: case OBS_RDTSCP: case OBS_INVD: case OBS_NMI: return scnprintf(buf, len, "%s -", kind);
	default: return scnprintf(buf, len, "%s 0x%x", kind, x->arg);
	}
}

static int print_result(char *buf, size_t len, u8 kind, const struct obs_result *r)
{
	if (kind == OBS_WRMSR_BAD && r->v[1])	/* its read before the write faulted */
		return scnprintf(buf, len, "%s,read-%s", r->fault ? vector_name(r->fault - 1) : "ok",
				 vector_name(r->v[1] - 1));
	if (r->fault)
		return scnprintf(buf, len, "%s", vector_name(r->fault - 1));
	if (kind == OBS_CPUID)
		return scnprintf(buf, len, "%08x.%08x.%08x.%08x", (u32)r->v[0],
				 (u32)(r->v[0] >> 32), (u32)r->v[1], (u32)(r->v[1] >> 32));
	if (r->v[1])
		return scnprintf(buf, len, "0x%llx/0x%llx", r->v[0], r->v[1]);
	return scnprintf(buf, len, "0x%llx", r->v[0]);
}

size_t obs_diffs_print(const struct obs_diffs *d, const char *state, u64 observations,
		       u64 volatiles, char *buf, size_t len)
{
	size_t at;
	u32 i, k;

	at = scnprintf(buf, len, "state %s observations %llu volatile %llu differences %llu keys %u untabled %llu\n",
		       state, observations, volatiles, d->total, d->n, d->untabled);
	for (i = 0; i < d->n; i++) {
		const struct diff *x = &d->d[i];

		at += scnprintf(buf + at, len - at, "diff ");
		at += print_key(buf + at, len - at, x);
		at += scnprintf(buf + at, len - at, ": bare ");
		at += print_result(buf + at, len - at, x->kind, &x->bare);
		at += scnprintf(buf + at, len - at, " now ");
		at += print_result(buf + at, len - at, x->kind, &x->now);
		at += scnprintf(buf + at, len - at, " (count %llu cpus 0x%llx first %llu)\n",
				x->count, x->cpus, x->first);
	}
	for (k = 0; k < OBS_KINDS; k++)
		if (d->runs[k][0] && d->runs[k][1])
			at += scnprintf(buf + at, len - at, "timing %s bare %llu now %llu cycles (%llu runs)\n",
					obs_kind_name(k), d->cycles[k][0] / d->runs[k][0],
					d->cycles[k][1] / d->runs[k][1], d->runs[k][1]);
	return at;
}
