// SPDX-License-Identifier: GPL-2.0
/*
 * I/O instructions and the VMX-preemption timer: the two exits a debug
 * stub on a serial port needs. Ports exit only where a debugger set bits
 * in the I/O bitmaps (vt_hv_intercept_ports); the timer runs only when a
 * debugger asked for it (vt_hv_enable_preempt_timer).
 */
#include "exit.h"
#include "intrin.h"

/* Exit qualification for I/O instructions, SDM Vol. 3C Table 28-5. */
#define VT_IO_SIZE_MASK		0x7ull		/* access size - 1 */
#define VT_IO_IN		VT_BIT(3)
#define VT_IO_STRING		VT_BIT(4)
#define VT_IO_PORT_SHIFT	16

/*
 * A port the hypervisor owns looks to the guest like a port where nothing
 * answers: IN reads all ones (the floating bus), OUT is dropped. A UART
 * probe then finds no UART (its scratch register does not keep a value).
 * INS/OUTS are skipped without touching guest memory: serial drivers use
 * single-byte IN/OUT on these ports.
 */
static void vt_io_float(struct vt_exit *exit)
{
	u32 size = (u32)(exit->qual & VT_IO_SIZE_MASK) + 1;
	u64 *rax = &exit->regs->rax;

	if (!(exit->qual & VT_IO_IN) || (exit->qual & VT_IO_STRING))
		return;
	if (size == 4)
		*rax = 0xffffffffull;	/* a 32-bit write zero-extends (SDM 3A 3.4.1.1) */
	else
		*rax |= size == 2 ? 0xffffull : 0xffull;
}

enum vt_exit_action vt_handle_io(struct vt_exit *exit)
{
	const struct vt_callbacks *cb = exit->vcpu->hv->cb;

	if (!(cb && cb->io && cb->io(exit->vcpu, exit)))
		vt_io_float(exit);
	if (!exit->rip_advanced)
		vt_advance_rip(exit);
	return VT_EXIT_RESUME;
}

u16 vt_io_port(const struct vt_exit *exit)
{
	return (u16)(exit->qual >> VT_IO_PORT_SHIFT);
}

/* Re-armed on every expiry (timer.c): with "save timer value" it reads 0 now (25.7.1). */
enum vt_exit_action vt_handle_preempt_timer(struct vt_exit *exit)
{
	const struct vt_callbacks *cb = exit->vcpu->hv->cb;
	u32 due = vt_timer_expired(exit->vcpu);

	if (due & VT_TIMER_SAMPLE)
		vt_profile_sample(exit->vcpu);
	if ((due & VT_TIMER_POLL) && cb && cb->preempt_timer)
		cb->preempt_timer(exit->vcpu, exit);
	return VT_EXIT_RESUME;
}
