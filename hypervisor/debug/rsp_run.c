// SPDX-License-Identifier: GPL-2.0
/*
 * Resuming and stop replies: c, s, vCont, D, k, H, T and the T packet.
 * All-stop: every resume names what each CPU does (continue, step, stay),
 * and the next stop of any CPU stops all of them again (stop.c).
 */
#include "rsp_priv.h"

static const char *const vt_stop_kind[] = {
	[VT_STOP_SWBREAK] = "swbreak:;",
	[VT_STOP_HWBREAK] = "hwbreak:;",
	[VT_STOP_WATCH] = "watch:",
	[VT_STOP_RWATCH] = "rwatch:",
	[VT_STOP_AWATCH] = "awatch:",
};

/*
 * The signal gdb shows: SIGINT for a break-in, SIGSEGV for a crash,
 * SIGALRM for a hard lockup (the CPU's timer never got through), else SIGTRAP.
 */
static const char *vt_stop_signal(const struct vt_dbg_stop *stop)
{
	if (!stop || stop->reason == VT_STOP_SIGINT)
		return "T02";
	if (stop->reason == VT_STOP_CRASH)
		return "T0b";
	if (stop->reason == VT_STOP_LOCKUP)
		return "T0e";
	return "T05";
}

/*
 * The registers gdb needs first at every stop, sent with it as gdbserver
 * does ("n:r;" pairs, GDB manual "Stop Reply Packets"): RBP, RSP and RIP
 * (gdb's amd64 numbers 6, 7 and 16). With them gdb finds the frame and the
 * instruction without asking for the whole register file, which costs
 * about 1.2 KB, a tenth of a second on a 115,200-baud line, at every step.
 */
static void vt_expedite_registers(struct vt_rsp *r, u32 cpu)
{
	static const struct { const char *num; u32 gpr; } frame[] = {
		{ "06:", 6 }, { "07:", 7 },
	};
	struct vt_dbg_regs regs;
	u32 i;

	if (!vt_rsp_cpu_ok(r, (s32)cpu) || r->ops->read_regs(r->ctx, cpu, &regs))
		return;
	for (i = 0; i < VT_ARRAY_SIZE(frame); i++) {
		vt_rsp_put(r, frame[i].num);
		vt_rsp_put_le(r, regs.gpr[frame[i].gpr], 8);
		vt_rsp_put(r, ";");
	}
	vt_rsp_put(r, "10:");
	vt_rsp_put_le(r, regs.rip, 8);
	vt_rsp_put(r, ";");
}

/* T packet: signal, registers, thread and why (GDB manual "Stop Reply Packets"). */
void vt_rsp_stop_reply(struct vt_rsp *r, const struct vt_dbg_stop *stop)
{
	u32 cpu = stop ? stop->cpu : 0;

	vt_rsp_put(r, vt_stop_signal(stop));
	vt_expedite_registers(r, cpu);
	vt_rsp_put(r, "thread:");
	vt_rsp_put_hex(r, (u64)cpu + 1);
	vt_rsp_put(r, ";");
	if (!stop || stop->reason >= VT_ARRAY_SIZE(vt_stop_kind) || !vt_stop_kind[stop->reason])
		return;
	vt_rsp_put(r, vt_stop_kind[stop->reason]);
	if (stop->reason >= VT_STOP_WATCH) {
		vt_rsp_put_hex(r, stop->data_addr);
		vt_rsp_put(r, ";");
	}
}

static void vt_run_fill(struct vt_rsp *r, enum vt_dbg_run what)
{
	u32 i;

	for (i = 0; i < VT_RSP_MAX_CPUS; i++)
		r->run[i] = what;
}

static enum vt_rsp_action vt_resume(struct vt_rsp *r)
{
	if (r->ops->resume(r->ctx, r->run, vt_rsp_cpus(r))) {
		vt_rsp_error(r, 0x01);	/* e.g. no MTF to step with */
		return VT_RSP_STAY;
	}
	r->stop_wanted = true;
	return VT_RSP_RESUMED;
}

/* c [ADDR] / s [ADDR]: the Hc CPU (or the one that stopped) acts. */
static enum vt_rsp_action vt_continue_or_step(struct vt_rsp *r, u8 cmd,
					       struct vt_rsp_cursor *c)
{
	s32 cpu = vt_rsp_cpu_ok(r, r->c_cpu) ? r->c_cpu : (s32)r->last_stop.cpu;
	struct vt_dbg_regs regs;
	u64 addr;

	if (!vt_rsp_at_end(c)) {
		if (!vt_rsp_parse_hex(c, &addr) || !vt_rsp_at_end(c) ||
		    r->ops->read_regs(r->ctx, (u32)cpu, &regs)) {
			vt_rsp_error(r, 0x16);
			return VT_RSP_STAY;
		}
		regs.rip = addr;
		r->ops->write_regs(r->ctx, (u32)cpu, &regs);
	}
	if (cmd == 'c') {
		vt_run_fill(r, VT_RUN_CONTINUE);
	} else {
		vt_run_fill(r, VT_RUN_STAY);
		if (cpu >= 0 && cpu < VT_RSP_MAX_CPUS)
			r->run[cpu] = VT_RUN_STEP;
	}
	return vt_resume(r);
}

/* vCont;ACTION[:TID];... : the first action naming a CPU wins (GDB manual). */
static enum vt_rsp_action vt_vcont(struct vt_rsp *r, struct vt_rsp_cursor *c)
{
	enum vt_dbg_run fallback = VT_RUN_STAY;
	bool named[VT_RSP_MAX_CPUS] = { false };
	u32 i;

	vt_run_fill(r, VT_RUN_STAY);
	while (vt_rsp_expect(c, ';')) {
		enum vt_dbg_run act;
		u64 sig;
		s32 cpu;

		if (c->p >= c->end)
			goto bad;
		switch (*c->p++) {
		case 'c': act = VT_RUN_CONTINUE; break;
		case 's': act = VT_RUN_STEP; break;
		case 'C': act = VT_RUN_CONTINUE; if (!vt_rsp_parse_hex(c, &sig)) goto bad; break;
		case 'S': act = VT_RUN_STEP; if (!vt_rsp_parse_hex(c, &sig)) goto bad; break;
		case 't': act = VT_RUN_STAY; break;
		default: goto bad;
		}
		if (!vt_rsp_expect(c, ':')) {
			fallback = act;
			continue;
		}
		if (!vt_rsp_parse_thread(c, &cpu))
			goto bad;
		if (cpu < 0) {
			fallback = act;
		} else if (cpu < VT_RSP_MAX_CPUS && !named[cpu]) {
			named[cpu] = true;
			r->run[cpu] = act;
		}
	}
	if (!vt_rsp_at_end(c))
		goto bad;
	for (i = 0; i < VT_RSP_MAX_CPUS; i++)
		if (!named[i])
			r->run[i] = fallback;
	return vt_resume(r);
bad:
	vt_rsp_error(r, 0x16);
	return VT_RSP_STAY;
}

/* D / k: leave no trace, let the machine run, forget the debugger. */
static enum vt_rsp_action vt_detach(struct vt_rsp *r, u8 cmd)
{
	r->ops->remove_all(r->ctx);
	vt_run_fill(r, VT_RUN_CONTINUE);
	r->ops->resume(r->ctx, r->run, vt_rsp_cpus(r));
	r->stop_wanted = false;
	r->have_stop = false;
	if (cmd == 'D')
		vt_rsp_put(r, "OK");
	return VT_RSP_RESUMED;
}

enum vt_rsp_action vt_rsp_run(struct vt_rsp *r, u8 cmd, struct vt_rsp_cursor *c)
{
	switch (cmd) {
	case 'c':
	case 's':
		return vt_continue_or_step(r, cmd, c);
	case 'D':
	case 'k':
		return vt_detach(r, cmd);
	}
	/* 'v' packets */
	if (vt_rsp_prefix(c, "Cont?")) {
		vt_rsp_put(r, "vCont;c;C;s;S;t");
		return VT_RSP_STAY;
	}
	if (vt_rsp_prefix(c, "Cont"))
		return vt_vcont(r, c);
	return VT_RSP_STAY;	/* vMustReplyEmpty and the rest: empty */
}

/* Hg/Hc select a CPU; T asks whether one is alive. */
void vt_rsp_threads(struct vt_rsp *r, u8 cmd, struct vt_rsp_cursor *c)
{
	u8 which = 0;
	s32 cpu;

	if (cmd == 'H') {
		if (c->p >= c->end)
			goto bad;
		which = *c->p++;
	}
	if (!vt_rsp_parse_thread(c, &cpu) || !vt_rsp_at_end(c))
		goto bad;
	if (cpu >= 0 && !vt_rsp_cpu_ok(r, cpu)) {
		vt_rsp_error(r, 0x01);
		return;
	}
	if (cmd == 'T') {
		vt_rsp_put(r, cpu >= 0 ? "OK" : "E01");
		return;
	}
	if (which == 'g')
		r->g_cpu = cpu >= 0 ? cpu : (s32)r->last_stop.cpu;
	else if (which == 'c')
		r->c_cpu = cpu;
	else
		goto bad;
	vt_rsp_put(r, "OK");
	return;
bad:
	vt_rsp_error(r, 0x16);
}
