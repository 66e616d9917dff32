// SPDX-License-Identifier: GPL-2.0
/*
 * vtice_probe: the transparency fuzzer's prober (tests/transparency/README.md).
 * Loaded before vtice, it keeps the bare CPU's answers to the program and
 * compares each later state with them. Driven through /proc/vtice_probe:
 *
 *   echo bare > /proc/vtice_probe         the bare run, kept as the oracle
 *   echo bare-again > /proc/vtice_probe   again bare: what differs is volatile
 *   echo "state NAME" > /proc/vtice_probe a state compared with the bare run
 *   cat /proc/vtice_probe                 the last state's report
 *
 * An observation whose answer changed between bare runs (a counter, the
 * current task's CR3) is volatile: in later states only whether it
 * faulted, and how, is compared.
 */
#include <linux/cpu.h>
#include <linux/hashtable.h>
#include <linux/module.h>
#include <linux/proc_fs.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/smp.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>
#include "probe.h"

static ulong seed = 1;
module_param(seed, ulong, 0444);
MODULE_PARM_DESC(seed, "the program's seed (default 1)");
static ulong count = 1000000;
module_param(count, ulong, 0444);
MODULE_PARM_DESC(count, "observations per state (default 1000000)");
static bool invd;
module_param(invd, bool, 0444);
MODULE_PARM_DESC(invd, "observe INVD too: it loses the CPU's dirty cache lines, so only in an emulator (default off)");
static uint cpus;
module_param(cpus, uint, 0444);
MODULE_PARM_DESC(cpus, "the program runs on CPUs 0..cpus-1 (default 0: every online CPU)");
static bool ranges = true;
module_param(ranges, bool, 0444);
MODULE_PARM_DESC(ranges, "the sweep reads every CPUID leaf and MSR index of the architectural ranges (default on; off for a slow state, such as a stepped CPU)");
static uint chunk = OBS_CHUNK;
module_param(chunk, uint, 0444);
MODULE_PARM_DESC(chunk, "observations run in one call with interrupts off (1-256, default 256; fewer where each takes long, such as on a stepped CPU)");
static unsigned long peek[OBS_MAX_PEEK];
static int nr_peek;
module_param_array(peek, ulong, &nr_peek, 0444);
MODULE_PARM_DESC(peek, "kernel addresses whose first 16 bytes are observed at CPL 0");

#define REPORT_BYTES	(64 * 1024)
#define VOLATILE_BITS	13

enum run_mode { RUN_BARE, RUN_BARE_AGAIN, RUN_STATE };

/* Observations start.. start + n - 1 of the program, all on one CPU. */
struct chunk {
	u64 start;
	u32 n;
	struct obs obs[OBS_CHUNK];
	struct obs_result res[OBS_CHUNK];
	u64 cycles[OBS_CHUNK];
};

struct volatile_key {
	struct hlist_node node;
	u64 key;
};

static struct obs_program program;
static struct obs_result *bare;		/* [count] */
static u64 bare_cycles[OBS_KINDS], bare_runs[OBS_KINDS];
static bool have_bare;
static DEFINE_HASHTABLE(volatile_keys, VOLATILE_BITS);
static u64 nr_volatile;
static char *report;
static size_t report_len;
static DEFINE_MUTEX(lock);

static u64 key_of(const struct obs *o)
{
	return ((u64)o->kind << 56) | ((u64)o->sub << 32) | o->arg;
}

static bool is_volatile(const struct obs *o)
{
	struct volatile_key *v;
	u64 key = key_of(o);

	if (obs_is_volatile(o))
		return true;
	hash_for_each_possible(volatile_keys, v, node, key)
		if (v->key == key)
			return true;
	return false;
}

static void mark_volatile(const struct obs *o)
{
	struct volatile_key *v;

	if (is_volatile(o))
		return;
	v = kmalloc(sizeof(*v), GFP_KERNEL);
	if (!v)
		return;
	v->key = key_of(o);
	hash_add(volatile_keys, &v->node, v->key);
	nr_volatile++;
}

static void forget_volatile(void)
{
	struct volatile_key *v;
	struct hlist_node *tmp;
	int b;

	hash_for_each_safe(volatile_keys, b, tmp, v, node) {
		hash_del(&v->node);
		kfree(v);
	}
	nr_volatile = 0;
}

static bool differs(const struct obs *o, const struct obs_result *a, const struct obs_result *b)
{
	if (a->fault != b->fault)
		return true;
	return !is_volatile(o) && (a->v[0] != b->v[0] || a->v[1] != b->v[1]);
}

static void run_chunk_here(void *arg)
{
	struct chunk *c = arg;
	u32 k;

	for (k = 0; k < c->n; k++)
		c->cycles[k] = obs_run(&c->obs[k], &c->res[k], peek);
}

static void take_chunk(enum run_mode mode, const struct chunk *c, struct obs_diffs *d)
{
	u32 k;

	for (k = 0; k < c->n; k++) {
		const struct obs *o = &c->obs[k];
		u64 i = c->start + k;

		if (mode == RUN_BARE) {
			if (i < program.sweep_len)	/* CPU 0's sweep */
				obs_log_bare(o, &c->res[k], peek);
			bare[i] = c->res[k];
			bare_cycles[o->kind] += c->cycles[k];
			bare_runs[o->kind]++;
		} else if (mode == RUN_BARE_AGAIN) {
			if (differs(o, &bare[i], &c->res[k]))
				mark_volatile(o);
		} else {
			if (differs(o, &bare[i], &c->res[k]))
				obs_diffs_add(d, o, i, &bare[i], &c->res[k]);
			obs_timing_add(d, o->kind, c->cycles[k]);
		}
	}
}

/* Up to chunk= observations from start on, within one of the program's chunks (one CPU). */
static void fill_chunk(struct chunk *c, u64 start)
{
	u32 k;

	c->start = start;
	c->n = min_t(u64, min_t(u32, chunk, OBS_CHUNK - start % OBS_CHUNK), count - start);
	for (k = 0; k < c->n; k++)
		obs_at(&program, start + k, &c->obs[k]);
}

static int run_program(enum run_mode mode, const char *name, struct obs_diffs *d)
{
	struct chunk *c = kmalloc(sizeof(*c), GFP_KERNEL);
	u64 start, tenth = max_t(u64, count / 10, 1), next = tenth;
	int err = 0;

	if (!c)
		return -ENOMEM;
	for (start = 0; start < count; start += c->n) {
		fill_chunk(c, start);
		err = smp_call_function_single(c->obs[0].cpu, run_chunk_here, c, 1);
		if (err)
			break;
		take_chunk(mode, c, d);
		if (start + c->n >= next) {
			pr_info("vtice_probe: %s: %llu of %lu observations\n", name,
				start + c->n, count);
			next += tenth;
		}
		if (fatal_signal_pending(current)) {
			err = -EINTR;
			break;
		}
		cond_resched();
	}
	kfree(c);
	return err;
}

static int run_state(const char *name)
{
	struct obs_diffs *d;
	int err, k;

	if (!have_bare)
		return -ENODATA;	/* a state is compared with the bare run: that comes first */
	d = obs_diffs_new();
	if (!d)
		return -ENOMEM;
	for (k = 0; k < OBS_KINDS; k++)
		obs_timing_bare(d, k, bare_cycles[k], bare_runs[k]);
	obs_alias_walks_begin();
	err = run_program(RUN_STATE, name, d);
	obs_alias_walks_log(name);
	if (!err)
		report_len = obs_diffs_print(d, name, count, nr_volatile, report, REPORT_BYTES);
	obs_diffs_free(d);
	return err;
}

static int run_command(char *cmd)
{
	char *name;

	if (!strcmp(cmd, "bare")) {
		int err;

		forget_volatile();
		memset(bare_cycles, 0, sizeof(bare_cycles));
		memset(bare_runs, 0, sizeof(bare_runs));
		err = run_program(RUN_BARE, "bare", NULL);
		have_bare = !err;
		return err;
	}
	if (!strcmp(cmd, "bare-again"))
		return have_bare ? run_program(RUN_BARE_AGAIN, "bare-again", NULL) : -ENODATA;
	if (strncmp(cmd, "state ", 6))
		return -EINVAL;
	name = strim(cmd + 6);
	return *name ? run_state(name) : -EINVAL;
}

static ssize_t probe_write(struct file *f, const char __user *ubuf, size_t len, loff_t *off)
{
	char cmd[64];
	int err;

	if (len >= sizeof(cmd))
		return -EINVAL;
	if (copy_from_user(cmd, ubuf, len))
		return -EFAULT;
	cmd[len] = 0;
	if (mutex_lock_interruptible(&lock))
		return -EINTR;
	err = run_command(strim(cmd));
	mutex_unlock(&lock);
	return err ? err : len;
}

static ssize_t probe_read(struct file *f, char __user *ubuf, size_t len, loff_t *off)
{
	ssize_t n;

	mutex_lock(&lock);
	n = simple_read_from_buffer(ubuf, len, off, report, report_len);
	mutex_unlock(&lock);
	return n;
}

static const struct proc_ops probe_ops = {
	.proc_read = probe_read,
	.proc_write = probe_write,
	.proc_lseek = default_llseek,
};

static int __init vtice_probe_init(void)
{
	unsigned int cpu, nr = num_online_cpus();
	int err;

	for (cpu = 0; cpu < nr; cpu++)
		if (!cpu_online(cpu))
			return -EBUSY;	/* the program names CPUs 0..n-1 */
	if (!count || nr > 64 || cpus > nr || !chunk || chunk > OBS_CHUNK)
		return -EINVAL;
	obs_program_init(&program, seed, cpus ? cpus : nr, nr_peek, invd, ranges);
	bare = vmalloc(array_size(count, sizeof(*bare)));
	report = vzalloc(REPORT_BYTES);
	err = bare && report ? obs_prepare(nr, peek, nr_peek) : -ENOMEM;
	if (!err && !proc_create("vtice_probe", 0600, NULL, &probe_ops))
		err = -ENOMEM;
	if (err) {
		obs_release();
		vfree(report);
		vfree(bare);
		return err;
	}
	pr_info("vtice_probe: seed %lu, %lu observations per state on %u CPUs, %u per CPU in the sweep\n",
		seed, count, program.nr_cpus, program.sweep_len);
	return 0;
}

static void __exit vtice_probe_exit(void)
{
	remove_proc_entry("vtice_probe", NULL);
	forget_volatile();
	obs_release();
	vfree(report);
	vfree(bare);
}

module_init(vtice_probe_init);
module_exit(vtice_probe_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("vtice test: a kernel's observations of its CPU, bare and under vtice, compared");
