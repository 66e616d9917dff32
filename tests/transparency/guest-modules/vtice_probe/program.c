// SPDX-License-Identifier: GPL-2.0
/*
 * The program: the same observations in the same order on the same CPUs in
 * every state, from the seed alone. Each CPU first runs the sweep (every
 * CPUID leaf and MSR index of the architectural ranges, and each register,
 * instruction and write class once), then the rest is random, in chunks
 * of OBS_CHUNK observations on a CPU the seed picks.
 */
#include <linux/kernel.h>
#include <linux/string.h>
#include "probe.h"

struct msr_range {
	u32 first, count;
};

/* The architectural ranges, Hyper-V's and AMD's (read as bare: #GP on Intel). */
static const struct msr_range msr_ranges[] = {
	{ 0x00000000, 0x2000 }, { 0xc0000000, 0x2000 },
	{ 0x40000000, 0x100 }, { 0xc0010000, 0x100 },
};

struct cpuid_range {
	u32 first, count, subleaves;
};

static const struct cpuid_range cpuid_ranges[] = {
	{ 0x00000000, 0x40, 8 }, { 0x40000000, 0x100, 1 }, { 0x80000000, 0x40, 4 },
};

/* CR0: NE, WP, AM, a reserved bit writes ignore, NW without CD (#GP), bit 32 (#GP). */
static const u8 cr0_bits[] = { 5, 10, 16, 18, 29, 32 };
/* CR4: TSD, DE, PCE, UMIP, VMXE, SMXE, and reserved bits 15, 26, 40. */
static const u8 cr4_bits[] = { 2, 3, 8, 11, 13, 14, 15, 26, 40 };
static const u8 read_crs[] = { 0, 2, 3, 4, 8 };
static const u8 read_drs[] = { 0, 1, 2, 3, 6, 7 };
static const u8 write_drs[] = { 0, 1, 2, 3, 6, 7, 8 };
static const u32 pmcs[] = { 0, 1, 2, 3, 8, 0x40000000, 0x40000001, 0x40000002 };
/* MSRs vtice intercepts or could: drawn often in the random part. */
static const u32 hot_msrs[] = {
	0x3a, 0x1d9, 0x1db, 0x1dc, 0x1dd, 0x1de, 0x1c8, 0x1c9, 0x38f, 0x390, 0x345,
	0xc0000080, 0xc0000081, 0xc0000082, 0xc0000083, 0xc0000084, 0x174, 0x175, 0x176,
	0x6a0, 0x6a2, 0x6a4, 0x6a8, 0x2ff, 0x277, 0xfe, 0x48, 0x10a,
};

static u64 mix(u64 x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

static u64 canonical(u64 r)
{
	return (r & 0x7ffffffffff0ull) | ((r & 1) ? 0xffff800000000000ull : 0);
}

/* ---- the sweep ---- */

static u32 cpuid_count_all(void)
{
	u32 i, n = 0;

	for (i = 0; i < ARRAY_SIZE(cpuid_ranges); i++)
		n += cpuid_ranges[i].count * cpuid_ranges[i].subleaves;
	return n;
}

static u32 msr_count_all(void)
{
	u32 i, n = 0;

	for (i = 0; i < ARRAY_SIZE(msr_ranges); i++)
		n += msr_ranges[i].count;
	return n;
}

static u32 msr_nth(u32 j)
{
	u32 i;

	for (i = 0; i < ARRAY_SIZE(msr_ranges); i++) {
		if (j < msr_ranges[i].count)
			return msr_ranges[i].first + j;
		j -= msr_ranges[i].count;
	}
	return 0;
}

static void cpuid_nth(u32 j, struct obs *o)
{
	u32 i;

	for (i = 0; i < ARRAY_SIZE(cpuid_ranges); i++) {
		u32 n = cpuid_ranges[i].count * cpuid_ranges[i].subleaves;

		if (j < n) {
			o->arg = cpuid_ranges[i].first + j / cpuid_ranges[i].subleaves;
			o->sub = j % cpuid_ranges[i].subleaves;
			return;
		}
		j -= n;
	}
}

/* The sweep's groups, in order: kind, how many. */
struct group {
	u8 kind;
	u32 count;
};

static u32 groups_of(const struct obs_program *p, struct group *g)
{
	u32 n = 0;

	g[n++] = (struct group){ OBS_CPUID, p->ranges ? cpuid_count_all() : 0 };
	g[n++] = (struct group){ OBS_RDMSR, p->ranges ? msr_count_all() : 0 };
	g[n++] = (struct group){ OBS_WRMSR_SAME, p->ranges ? msr_count_all() : 0 };
	g[n++] = (struct group){ OBS_WRMSR_BAD, obs_bad_writes() };
	g[n++] = (struct group){ OBS_READ_CR, ARRAY_SIZE(read_crs) };
	g[n++] = (struct group){ OBS_WRITE_CR, 2 + 16 };
	g[n++] = (struct group){ OBS_TOGGLE_CR, ARRAY_SIZE(cr0_bits) + ARRAY_SIZE(cr4_bits) };
	g[n++] = (struct group){ OBS_READ_DR, ARRAY_SIZE(read_drs) };
	g[n++] = (struct group){ OBS_WRITE_DR, ARRAY_SIZE(write_drs) };
	g[n++] = (struct group){ OBS_XGETBV, 4 };
	g[n++] = (struct group){ OBS_XSETBV, 3 };
	g[n++] = (struct group){ OBS_VMX, VMX_KINDS };
	g[n++] = (struct group){ OBS_UD2, 1 };
	g[n++] = (struct group){ OBS_RDPMC, ARRAY_SIZE(pmcs) };
	g[n++] = (struct group){ OBS_RDTSCP, 1 };
	g[n++] = (struct group){ OBS_INVD, p->invd ? 1 : 0 };
	g[n++] = (struct group){ OBS_PEEK, p->nr_peek };
	g[n++] = (struct group){ OBS_DEBUG, DEBUG_KINDS };
	g[n++] = (struct group){ OBS_ALIAS, ALIAS_KINDS * p->nr_peek };
	g[n++] = (struct group){ OBS_NMI, 1 };
	g[n++] = (struct group){ OBS_IRET, IRET_KINDS };
	g[n++] = (struct group){ OBS_SMC, 1 };
	return n;
}

/* The j-th of a kind's sweep, or with j random, one drawn at random. */
static void obs_of_kind(const struct obs_program *p, u8 kind, u32 j, u64 r, struct obs *o)
{
	o->kind = kind;
	o->val = canonical(r >> 8);
	switch (kind) {
	case OBS_CPUID: cpuid_nth(j % cpuid_count_all(), o); break;
	case OBS_RDMSR:
	case OBS_WRMSR_SAME: o->arg = msr_nth(j % msr_count_all()); break;
	case OBS_WRMSR_BAD: o->arg = j % obs_bad_writes(); break;
	case OBS_READ_CR: o->arg = read_crs[j % ARRAY_SIZE(read_crs)]; break;
	case OBS_WRITE_CR:
		j %= 18;
		o->arg = j == 0 ? 0 : j == 1 ? 4 : 8;
		o->sub = j >= 2 ? j - 2 : 0;
		break;
	case OBS_TOGGLE_CR:
		j %= ARRAY_SIZE(cr0_bits) + ARRAY_SIZE(cr4_bits);
		o->arg = j < ARRAY_SIZE(cr0_bits) ? 0 : 4;
		o->sub = j < ARRAY_SIZE(cr0_bits) ? cr0_bits[j] : cr4_bits[j - ARRAY_SIZE(cr0_bits)];
		break;
	case OBS_READ_DR: o->arg = read_drs[j % ARRAY_SIZE(read_drs)]; break;
	case OBS_WRITE_DR: o->arg = write_drs[j % ARRAY_SIZE(write_drs)]; break;
	case OBS_XGETBV: o->arg = j % 4; break;
	case OBS_XSETBV: o->arg = j % 3; break;
	case OBS_VMX: o->arg = j % VMX_KINDS; break;
	case OBS_RDPMC: o->arg = pmcs[j % ARRAY_SIZE(pmcs)]; break;
	case OBS_PEEK: o->arg = p->nr_peek ? j % p->nr_peek : 0; break;
	case OBS_DEBUG: o->arg = j % DEBUG_KINDS; break;
	case OBS_IRET: o->arg = j % IRET_KINDS; break;
	case OBS_ALIAS:
		o->arg = p->nr_peek ? j / ALIAS_KINDS % p->nr_peek : 0;
		o->sub = j % ALIAS_KINDS;
		break;
	}
}

static void sweep_at(const struct obs_program *p, u32 j, u64 r, struct obs *o)
{
	struct group g[OBS_KINDS];
	u32 i, n = groups_of(p, g);

	for (i = 0; i < n; i++) {
		if (j < g[i].count) {
			obs_of_kind(p, g[i].kind, j, r, o);
			return;
		}
		j -= g[i].count;
	}
	obs_of_kind(p, OBS_CPUID, 0, r, o);	/* the padding to a whole chunk */
}

/* ---- the random part ---- */

/* Weights per kind, out of 100. */
static const u8 weights[OBS_KINDS] = {
	[OBS_CPUID] = 18, [OBS_RDMSR] = 20, [OBS_WRMSR_SAME] = 10, [OBS_WRMSR_BAD] = 5,
	[OBS_READ_CR] = 4, [OBS_WRITE_CR] = 4, [OBS_TOGGLE_CR] = 5, [OBS_READ_DR] = 4,
	[OBS_WRITE_DR] = 4, [OBS_XGETBV] = 3, [OBS_XSETBV] = 3, [OBS_VMX] = 6, [OBS_UD2] = 2,
	[OBS_RDPMC] = 2, [OBS_RDTSCP] = 2, [OBS_INVD] = 1, [OBS_PEEK] = 1, [OBS_DEBUG] = 2,
	[OBS_ALIAS] = 1, [OBS_NMI] = 1, [OBS_IRET] = 1,
	[OBS_SMC] = 1,
};

static u8 random_kind(const struct obs_program *p, u64 r)
{
	u32 pick = r % 100, k;

	for (k = 0; k < OBS_KINDS; k++) {
		if (pick < weights[k])
			break;
		pick -= weights[k];
	}
	if (k >= OBS_KINDS || (k == OBS_INVD && !p->invd))
		return OBS_CPUID;
	if ((k == OBS_PEEK || k == OBS_ALIAS) && !p->nr_peek)
		return OBS_CPUID;
	return k;
}

static void random_at(const struct obs_program *p, u64 r, struct obs *o)
{
	u64 r2 = mix(r);
	u8 kind = random_kind(p, r);

	obs_of_kind(p, kind, (u32)(r2 >> 32), r2, o);
	if ((kind == OBS_RDMSR || kind == OBS_WRMSR_SAME) && (r2 & 3) == 0)
		o->arg = hot_msrs[(r2 >> 2) % ARRAY_SIZE(hot_msrs)];
	else if (kind == OBS_RDMSR && (r2 & 15) == 1)
		o->arg = (u32)(r2 >> 16);	/* anywhere */
	else if (kind == OBS_CPUID && (r2 & 7) == 0)
		o->sub = (u16)(r2 >> 16);
}

void obs_program_init(struct obs_program *p, u64 seed, u32 nr_cpus, u32 nr_peek, bool invd,
		      bool ranges)
{
	struct group g[OBS_KINDS];
	u32 i, n;

	*p = (struct obs_program){ .seed = seed, .nr_cpus = nr_cpus, .nr_peek = nr_peek,
				   .invd = invd, .ranges = ranges };
	n = groups_of(p, g);
	for (i = 0; i < n; i++)
		p->sweep_len += g[i].count;
	if (nr_cpus > 1)	/* whole chunks: none holds two CPUs' sweeps */
		p->sweep_len = roundup(p->sweep_len, OBS_CHUNK);
}

void obs_at(const struct obs_program *p, u64 i, struct obs *o)
{
	u64 sweeps = (u64)p->sweep_len * p->nr_cpus, r = mix(p->seed ^ mix(i));

	memset(o, 0, sizeof(*o));
	if (i < sweeps) {
		sweep_at(p, i % p->sweep_len, r, o);
		o->cpu = i / p->sweep_len;
		return;
	}
	random_at(p, r, o);
	o->cpu = mix(p->seed + (i - sweeps) / OBS_CHUNK) % p->nr_cpus;
}
