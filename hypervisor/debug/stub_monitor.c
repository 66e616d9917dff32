// SPDX-License-Identifier: GPL-2.0
/*
 * gdb's "monitor" commands (qRcmd) on the hypervisor stub. The answers are
 * plain text for a person; "monitor vtice" also lets a console recognise
 * which stub it talks to (docs/debugger.md).
 */
#include "stub.h"
#include "stop.h"
#include "hooks.h"
#include "single_step.h"
#include "tracer.h"
#include "lbr.h"
#include "../core/hv.h"
#include "../core/exit.h"
#include "../core/os.h"
#include "dbg_os.h"
#include <vtice/ioctl.h>

struct vt_text {
	char *out;
	u32 len, cap;		/* cap counts the terminating NUL */
};

static void vt_put(struct vt_text *t, const char *s)
{
	while (*s && t->len + 1 < t->cap)
		t->out[t->len++] = *s++;
	t->out[t->len] = 0;
}

static void vt_put_u64(struct vt_text *t, u64 v)
{
	char digits[21];
	int i = 20;

	digits[i] = 0;
	do {
		digits[--i] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	vt_put(t, &digits[i]);
}

static void vt_put_hex(struct vt_text *t, u64 v)
{
	char digits[17];
	int i = 16;

	digits[i] = 0;
	do {
		digits[--i] = "0123456789abcdef"[v & 0xf];
		v >>= 4;
	} while (v);
	vt_put(t, &digits[i]);
}

static bool vt_starts_with(const char *s, const char *prefix)
{
	while (*prefix && *s == *prefix) {
		s++;
		prefix++;
	}
	return !*prefix;
}

static bool vt_streq(const char *a, const char *b)
{
	while (*a && *a == *b) {
		a++;
		b++;
	}
	return *a == *b;
}

/* Names for the exits a debugging session causes; others print by number. */
static const char *const vt_exit_names[VT_EXIT_SLOTS] = {
	[EXIT_REASON_EXCEPTION_NMI] = "exception/nmi",
	[EXIT_REASON_EXTERNAL_INTERRUPT] = "interrupt",
	[EXIT_REASON_INIT_SIGNAL] = "init",
	[EXIT_REASON_SIPI_SIGNAL] = "sipi",
	[EXIT_REASON_INTERRUPT_WINDOW] = "interrupt-window",
	[EXIT_REASON_NMI_WINDOW] = "nmi-window",
	[EXIT_REASON_CPUID] = "cpuid",
	[EXIT_REASON_VMCALL] = "vmcall",
	[EXIT_REASON_CR_ACCESS] = "cr",
	[EXIT_REASON_DR_ACCESS] = "dr",
	[EXIT_REASON_IO_INSTRUCTION] = "io",
	[EXIT_REASON_MSR_READ] = "rdmsr",
	[EXIT_REASON_MSR_WRITE] = "wrmsr",
	[EXIT_REASON_MONITOR_TRAP_FLAG] = "mtf",
	[EXIT_REASON_EPT_VIOLATION] = "ept-violation",
	[EXIT_REASON_PREEMPTION_TIMER] = "preemption-timer",
	[EXIT_REASON_XSETBV] = "xsetbv",
};

static void vt_monitor_cpu_exits(struct vt_text *t, u32 cpu, const struct vt_vcpu *v)
{
	u32 r;

	vt_put(t, "cpu ");
	vt_put_u64(t, cpu);
	vt_put(t, ": ");
	vt_put_u64(t, v->counts->total);
	vt_put(t, " exits");
	for (r = 0; r < VT_EXIT_SLOTS; r++) {
		if (!v->counts->by_reason[r])
			continue;
		vt_put(t, ", ");
		if (vt_exit_names[r]) {
			vt_put(t, vt_exit_names[r]);
		} else {
			vt_put(t, "reason ");
			vt_put_u64(t, r);
		}
		vt_put(t, " ");
		vt_put_u64(t, v->counts->by_reason[r]);
	}
	/* NMIs that found the CPU in VMX root (root_idt.c), not exits. */
	vt_put(t, "; NMIs in VMX root ");
	vt_put_u64(t, v->counts->root_nmis);
	vt_put(t, "\n");
}

static void vt_monitor_exits(struct vt_text *t)
{
	u32 cpu;

	for (cpu = 0; cpu < vt_stop_cpu_count(); cpu++) {
		struct vt_stop_cpu *c = vt_stop_cpu(cpu);

		/* Counters are read only from parked CPUs: they do not move. */
		if (c && c->vcpu)
			vt_monitor_cpu_exits(t, cpu, c->vcpu);
	}
}

static const struct {
	u64 flag;
	const char *name;
} vt_cap_names[] = {
	{ VTICE_CAP_EPT, "ept" }, { VTICE_CAP_EPT_EXEC_ONLY, "ept-exec-only" },
	{ VTICE_CAP_EPT_AD, "ept-ad" }, { VTICE_CAP_VPID, "vpid" },
	{ VTICE_CAP_MTF, "mtf" }, { VTICE_CAP_PREEMPT_TIMER, "preemption-timer" },
	{ VTICE_CAP_UNRESTRICTED, "unrestricted-guest" },
	{ VTICE_CAP_DEBUGCTL_BTF, "debugctl-btf" }, { VTICE_CAP_DEBUGCTL_LBR, "debugctl-lbr" },
	{ VTICE_CAP_MSR_BITMAP, "msr-bitmap" },
};

static void vt_monitor_caps(struct vt_text *t)
{
	u64 flags = vt_stub_hv()->caps.flags;
	u32 i;

	vt_put(t, "vmx");
	for (i = 0; i < VT_ARRAY_SIZE(vt_cap_names); i++) {
		if (!(flags & vt_cap_names[i].flag))
			continue;
		vt_put(t, " ");
		vt_put(t, vt_cap_names[i].name);
	}
	vt_put(t, "\n");
}

/* Each value, then the words that follow it. */
static void vt_put_counts(struct vt_text *t, const u64 *values, const char *const *after, u32 n)
{
	u32 i;

	for (i = 0; i < n; i++) {
		vt_put_u64(t, values[i]);
		vt_put(t, after[i]);
	}
}

/*
 * How often the guest met the hooks since load: split-view flips, the
 * instructions stepped on a split page's original (the kernel's text
 * writes among them) and on watched pages (the CPU's own page walks among
 * them: a watched page that holds page tables). A machine that crawls or
 * stops under a hook shows it here first.
 */
static void vt_monitor_hook_traffic(struct vt_text *t, const struct vt_hooks_stats *s)
{
	const u64 values[] = { s->exec_flips, s->data_flips, s->stale_invepts, s->split_steps, s->text_writes,
			       s->watch_steps, s->watch_walks, s->watch_hits, s->bp_hits, s->stale_int3,
			       s->step_views_reused };
	static const char *const after[] = {
		" to execute, ", " to data, ", " stale retried, ", " stepped on the original (",
		" text writes); watched pages: ", " accesses stepped (", " of them page walks), ", " hits; int3: ",
		" ours, ",
		" stale; steps in a CPU's own EPT view kept from the step before: ", "\n",
	};

	vt_put(t, "views: ");
	vt_put_counts(t, values, after, VT_ARRAY_SIZE(values));
}

/*
 * What the debugger has planted, from the hooks' own tables, and what the
 * EPT the CPUs walk actually holds: after "detach" both must say none.
 */
static void vt_monitor_hooks(struct vt_text *t)
{
	struct vt_hooks_stats s;
	struct vt_ept_audit audit;

	vt_hooks_get_stats(&s);
	vt_ept_audit_identity(&vt_stub_hv()->ept, &audit);
	vt_put(t, "hooks: ");
	vt_put_u64(t, s.bps);
	vt_put(t, " breakpoints on ");
	vt_put_u64(t, s.bp_pages);
	vt_put(t, " pages, ");
	vt_put_u64(t, s.watches);
	vt_put(t, " watchpoints on ");
	vt_put_u64(t, s.watch_pages);
	vt_put(t, " pages, ");
	vt_put_u64(t, s.hw_bps);
	vt_put(t, " debug-register breakpoints, ");
	vt_put_u64(t, s.guards);
	vt_put(t, " crash guards on ");
	vt_put_u64(t, s.guard_pages);
	vt_put(t, " pages\nept: ");
	vt_put_u64(t, audit.leaves);
	vt_put(t, " leaves (");
	vt_put_u64(t, audit.small_leaves);
	vt_put(t, " of 4 KiB), ");
	vt_put_u64(t, audit.off_identity);
	vt_put(t, " not identity with full rights, ");
	vt_put_u64(t, audit.shielded);
	vt_put(t, " shielded (the hypervisor's own pages)\nstep: ");
	vt_put(t, vt_single_step_uses_tf(vt_stub_hv()) ? "TF" : "MTF");
	vt_put(t, ", ");
	vt_put_u64(t, s.tf_steps);
	vt_put(t, " TF steps, ");
	vt_put_u64(t, s.tf_events);
	vt_put(t, " guest events delivered inside one (");
	vt_put_u64(t, s.tf_unhidden);
	vt_put(t, " with TF in the frame: no debug register free)\n");
	vt_monitor_hook_traffic(t, &s);
}

static u64 vt_ticks_to_us(u64 ticks)
{
	u64 khz = vt_stop_tsc_khz();

	return khz ? ticks * 1000 / khz : 0;
}

/* Break-in latency in guest time, from the TSC (stub.h says why a bound). */
static void vt_monitor_breakin(struct vt_text *t)
{
	struct vt_breakin_stats s;

	vt_stub_get_breakin(&s);
	vt_put(t, "break-in: ");
	vt_put_u64(t, s.count);
	vt_put(t, " measured");
	if (s.count) {
		vt_put(t, ", last <= ");
		vt_put_u64(t, vt_ticks_to_us(s.last_ticks));
		vt_put(t, " us, max <= ");
		vt_put_u64(t, vt_ticks_to_us(s.max_ticks));
		vt_put(t, " us");
	}
	vt_put(t, " of guest time (from the last poll that left the line empty to the stop reply; poll every ");
	vt_put_u64(t, VT_STUB_POLL_MS);
	vt_put(t, " ms per CPU)\n");
}

/* "btrace task ADDR|current|any": whose branches the next Qbtrace:bts records. */
static bool vt_parse_task(const char *s, u64 *task)
{
	u64 v = 0;
	int d;

	if (vt_streq(s, "any") || vt_streq(s, "current")) {
		*task = s[0] == 'a' ? 0 : VT_TRACE_TASK_CURRENT;
		return true;
	}
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		s += 2;
	if (!*s)
		return false;
	for (; *s; s++) {
		d = *s >= '0' && *s <= '9' ? *s - '0' :
		    *s >= 'a' && *s <= 'f' ? *s - 'a' + 10 :
		    *s >= 'A' && *s <= 'F' ? *s - 'A' + 10 : -1;
		if (d < 0 || v >> 60)
			return false;
		v = v << 4 | (u64)d;
	}
	*task = v;
	return true;
}

static const char *vt_monitor_mechanism(u32 mechanism)
{
	switch (mechanism) {
	case VTICE_TRACE_BTF:
		return "TF+BTF (an exit per taken branch)";
	case VTICE_TRACE_TF:
		return "TF (an exit per instruction)";
	default:
		return "MTF (an exit per instruction)";
	}
}

static void vt_monitor_btrace(struct vt_text *t)
{
	struct vt_tracer_stats s;

	if (!vt_tracer_supported()) {
		vt_put(t, "btrace: not available (no monitor trap flag, and no interrupt exiting for TF steps)\n");
		return;
	}
	vt_tracer_get_stats(&s);
	vt_put(t, "btrace: ");
	vt_put(t, vt_monitor_mechanism(vt_tracer_mechanism()));
	vt_put(t, ", ");
	vt_put_u64(t, s.cpus_on);
	vt_put(t, " CPUs tracing, filter ");
	if (vt_tracer_filter() == VT_TRACE_TASK_CURRENT) {
		vt_put(t, "the task each CPU runs when its trace starts");
	} else if (vt_tracer_filter()) {
		vt_put(t, "task 0x");
		vt_put_hex(t, vt_tracer_filter());
	} else {
		vt_put(t, "any task");
	}
	vt_put(t, "\n  ");
	vt_put_u64(t, s.records);
	vt_put(t, " records (");
	vt_put_u64(t, s.async);
	vt_put(t, " interrupts/exceptions), ");
	vt_put_u64(t, s.dropped);
	vt_put(t, " dropped (buffer: ");
	vt_put_u64(t, s.capacity);
	vt_put(t, " per CPU), ");
	vt_put_u64(t, s.steps);
	vt_put(t, " steps (");
	vt_put_u64(t, s.branch_steps);
	vt_put(t, " to a branch, BTF ignored ");
	vt_put_u64(t, s.btf_ignored);
	vt_put(t, "), ");
	vt_put_u64(t, s.filtered);
	vt_put(t, " in other tasks, ");
	vt_put_u64(t, s.undecoded);
	vt_put(t, " undecoded\n");
}

static void vt_monitor_btrace_cmd(struct vt_text *t, const char *arg)
{
	u64 task;

	if (!*arg) {
		vt_monitor_btrace(t);
		return;
	}
	if (vt_starts_with(arg, "task ") && vt_parse_task(arg + 5, &task)) {
		vt_tracer_set_filter(task);
		vt_put(t, !task ? "btrace: the next trace records every task\n" :
			  task == VT_TRACE_TASK_CURRENT ?
				"btrace: the next trace of each CPU records the task it runs then\n" :
				"btrace: the next trace records one task\n");
		return;
	}
	vt_put(t, "usage: monitor btrace [task ADDRESS|current|any]\n");
}

static const char *const vt_lbr_why_not[] = {
	[VTICE_LBR_NO_DEBUGCTL] = "DEBUGCTL.LBR does not stick: an emulated CPU such as Bochs",
	[VTICE_LBR_NOT_INTEL] = "not an Intel CPU",
	[VTICE_LBR_UNKNOWN_MODEL] = "its model's LBR MSRs are not known to vtice",
	[VTICE_LBR_ARCH_ONLY] = "architectural LBR (CPUID leaf 0x1C), which vtice does not read yet",
};

static const char *const vt_lbr_events[] = {
	[VTICE_LBR_EV_NONE] = "no snapshot",
	[VTICE_LBR_EV_OOPS] = "oops",
	[VTICE_LBR_EV_PANIC] = "panic",
	[VTICE_LBR_EV_TRIPLE_FAULT] = "triple fault",
	[VTICE_LBR_EV_LOCKUP] = "hard lockup",
	[VTICE_LBR_EV_PARKED] = "stopped while another CPU crashed",
};

static void vt_monitor_lbr_line(struct vt_text *t, u32 cpu, const struct vt_lbr_snap *s)
{
	vt_put(t, "cpu ");
	vt_put_u64(t, cpu);
	vt_put(t, ": ");
	vt_put(t, s->event < VT_ARRAY_SIZE(vt_lbr_events) ? vt_lbr_events[s->event] : "?");
	if (s->event) {
		vt_put(t, " at 0x");
		vt_put_hex(t, s->rip);
		vt_put(t, ", ");
		vt_put_u64(t, s->count);
		vt_put(t, " branches");
		if (s->flags & VTICE_LBR_GUEST_OWNED)
			vt_put(t, " (the kernel's own LBR use, its filter)");
	}
	vt_put(t, "\n");
}

/* One CPU's branches, oldest first; "M" marks a mispredicted one. */
static void vt_monitor_lbr_cpu(struct vt_text *t, u32 cpu)
{
	const struct vt_lbr_snap *s = vt_lbr_snapshot(cpu);
	u32 i;

	if (!s) {
		vt_put(t, "lbr: no such CPU\n");
		return;
	}
	vt_monitor_lbr_line(t, cpu, s);
	for (i = 0; i < s->count && i < VTICE_LBR_MAX; i++) {
		vt_put(t, "  0x");
		vt_put_hex(t, s->br[i].from);
		vt_put(t, " -> 0x");
		vt_put_hex(t, s->br[i].to);
		vt_put(t, s->br[i].flags & VTICE_LBR_MISPRED ? " M\n" : "\n");
	}
}

static void vt_monitor_lbr(struct vt_text *t, const char *arg)
{
	const struct vt_lbr_model *m = vt_lbr_get_model();
	u32 cpu = 0;

	if (m->status != VTICE_LBR_OK) {
		vt_put(t, "lbr: this CPU has no LBR (");
		vt_put(t, m->status < VT_ARRAY_SIZE(vt_lbr_why_not) && vt_lbr_why_not[m->status] ?
			  vt_lbr_why_not[m->status] : "unknown reason");
		vt_put(t, ")\n");
		return;
	}
	if (*arg) {
		for (; *arg >= '0' && *arg <= '9' && cpu < 100000; arg++)
			cpu = cpu * 10 + (u32)(*arg - '0');
		if (*arg)
			vt_put(t, "usage: monitor lbr [CPU]\n");
		else
			vt_monitor_lbr_cpu(t, cpu);
		return;
	}
	vt_put(t, "lbr: ");
	vt_put_u64(t, m->nr);
	vt_put(t, " entries, format ");
	vt_put_u64(t, m->format);
	vt_put(t, "; \"monitor lbr CPU\" lists one CPU's branches\n");
	for (cpu = 0; vt_lbr_snapshot(cpu); cpu++)
		vt_monitor_lbr_line(t, cpu, vt_lbr_snapshot(cpu));
}

static const char *const vt_stop_words[] = {
	[VT_STOP_SIGINT] = "break-in",
	[VT_STOP_STEP] = "single step",
	[VT_STOP_SWBREAK] = "breakpoint",
	[VT_STOP_HWBREAK] = "hardware breakpoint",
	[VT_STOP_WATCH] = "write watchpoint at ",
	[VT_STOP_RWATCH] = "read watchpoint at ",
	[VT_STOP_AWATCH] = "access watchpoint at ",
	[VT_STOP_CRASH] = "crash guard (panic or __die)",
	[VT_STOP_LOCKUP] = "lockup",
};

/* IDT-vectoring information's type field (SDM Vol. 3C 24.9.3, Table 24-17). */
static const char *const vt_event_types[8] = {
	"external interrupt", "reserved", "NMI", "hardware exception",
	"software interrupt", "privileged software exception", "software exception", "other",
};

static void vt_monitor_triple_fault(struct vt_text *t, const struct vt_stub_why *w)
{
	vt_put(t, " triple-faulted at 0x");
	vt_put_hex(t, w->info.rip);
	vt_put(t, " (a VM exit: the machine would have reset); ");
	if (!(w->info.vectoring & INTR_INFO_VALID_MASK)) {
		vt_put(t, "no event was being delivered\n");
		return;
	}
	vt_put(t, "it was delivering vector ");
	vt_put_u64(t, w->info.vectoring & INTR_INFO_VECTOR_MASK);
	vt_put(t, ", ");
	vt_put(t, vt_event_types[(w->info.vectoring >> 8) & 7]);
	vt_put(t, "\n");
}

static void vt_monitor_stop_cause(struct vt_text *t, const struct vt_stub_why *w)
{
	u32 r = w->stop.reason;

	vt_put(t, "why: CPU ");
	vt_put_u64(t, w->stop.cpu);
	if (w->info.cause == VT_CAUSE_TRIPLE_FAULT) {
		vt_monitor_triple_fault(t, w);
		return;
	}
	if (w->info.cause == VT_CAUSE_IRQS_OFF || w->info.cause == VT_CAUSE_TIMER_OFF) {
		vt_put(t, ": its timer could not interrupt it for ");
		vt_put_u64(t, w->lockup_secs);
		vt_put(t, w->info.cause == VT_CAUSE_IRQS_OFF ? " s: interrupts off, at 0x" :
			   " s: interrupts on, its local APIC timer masked or the APIC disabled, at 0x");
		vt_put_hex(t, w->info.rip);
		vt_put(t, "\n");
		return;
	}
	vt_put(t, ": ");
	vt_put(t, r < VT_ARRAY_SIZE(vt_stop_words) && vt_stop_words[r] ? vt_stop_words[r] : "stopped");
	if (r == VT_STOP_WATCH || r == VT_STOP_RWATCH || r == VT_STOP_AWATCH) {
		vt_put(t, "0x");
		vt_put_hex(t, w->stop.data_addr);
	}
	vt_put(t, "\n");
}

static void vt_monitor_why(struct vt_text *t)
{
	struct vt_stub_why w;

	vt_stub_get_why(&w);
	if (!w.stopped) {
		vt_put(t, "why: the machine is running\n");
		return;
	}
	vt_monitor_stop_cause(t, &w);
	if (w.reply_ticks) {
		vt_put(t, "stop reply ready ");
		vt_put_u64(t, vt_ticks_to_us(w.reply_ticks));
		vt_put(t, " us of guest time after that CPU trapped (the other CPUs parked)\n");
	}
}

static void vt_monitor_unload(struct vt_text *t)
{
	if (vt_stub_ask_unload()) {
		vt_put(t, "unload: only a stealth load (stealth=1) leaves through the stub; this one leaves "
			  "with rmmod vtice on the machine\n");
		return;
	}
	vt_put(t, "unload: at the debugger's detach every breakpoint, watchpoint, probe and trace goes, "
		  "and each CPU leaves VMX at its next VM exit in the kernel with nothing pending; the stub "
		  "then answers no more. The module's memory stays allocated until reboot (the kernel no "
		  "longer knows the module) and is ordinary memory again, its code readable.\n");
}

/*
 * The VMCALL key, for whoever checks that the kernel cannot find it (a
 * stealth load's memory scan, docs/transparency.md). The debugger can
 * already do anything the key allows.
 */
static void vt_monitor_key(struct vt_text *t)
{
	vt_put(t, "key: 0x");
	vt_put_hex(t, vt_stub_hv()->key);
	vt_put(t, VT_LOAD_ACQUIRE(vt_stub_hv()->sealed) ? " (sealed: no VMCALL is vtice's any more)\n" :
			 " (opens vtice's VMCALLs from ring 0)\n");
}

int vt_stub_monitor(void *ctx, const char *cmd, char *out, u32 out_len)
{
	struct vt_text t = { out, 0, out_len };

	if (!out_len)
		return -VT_EINVAL;
	out[0] = 0;
	if (vt_streq(cmd, "vtice"))
		vt_put(&t, "vtice hypervisor stub, ABI 1\n");
	else if (vt_streq(cmd, "exits"))
		vt_monitor_exits(&t);
	else if (vt_streq(cmd, "caps"))
		vt_monitor_caps(&t);
	else if (vt_streq(cmd, "hooks"))
		vt_monitor_hooks(&t);
	else if (vt_streq(cmd, "breakin"))
		vt_monitor_breakin(&t);
	else if (vt_streq(cmd, "btrace"))
		vt_monitor_btrace_cmd(&t, "");
	else if (vt_starts_with(cmd, "btrace "))
		vt_monitor_btrace_cmd(&t, cmd + 7);
	else if (vt_streq(cmd, "why"))
		vt_monitor_why(&t);
	else if (vt_streq(cmd, "lbr"))
		vt_monitor_lbr(&t, "");
	else if (vt_starts_with(cmd, "lbr "))
		vt_monitor_lbr(&t, cmd + 4);
	else if (vt_streq(cmd, "unload"))
		vt_monitor_unload(&t);
	else if (vt_streq(cmd, "key"))
		vt_monitor_key(&t);
	else if (vt_streq(cmd, "help") || !*cmd)
		vt_put(&t, "monitor commands: exits (VM exits per CPU and reason), "
			   "caps (VMX features), hooks (breakpoints, watchpoints and the EPT's state), "
			   "breakin (break-in latency in guest time), "
			   "btrace [task ADDRESS|current|any] (the branch tracer; whose branches it records), "
			   "lbr [CPU] (the last branches each CPU took before a crash), "
			   "why (why the machine stopped: a triple fault's event, a lockup's cause), "
			   "unload (a stealth load leaves VMX at the detach), "
			   "key (the VMCALL key, to search memory for), "
			   "vtice (identify the stub)\n");
	else
		vt_put(&t, "unknown monitor command; try \"monitor help\"\n");
	return 0;
}
