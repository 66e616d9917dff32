// SPDX-License-Identifier: GPL-2.0
/*
 * An NMI the kernel sends itself, and a second one it sends from inside
 * the handler of the first. The CPU blocks NMIs from the delivery of one
 * until the next IRET and latches one that comes meanwhile (SDM Vol. 3A
 * 6.7.1), so the second must arrive after the kernel's NMI handler has
 * returned through IRETQ, never inside it, and neither may be lost. A
 * hypervisor that takes NMIs by NMI exiting and injects them again has to
 * keep that blocking itself (virtual-NMI blocking and NMI-window exits):
 * this is IRET with NMI blocking, observed.
 */
#include <linux/cpumask.h>
#include <linux/smp.h>
#include <asm/apic.h>
#include <asm/nmi.h>
#include "probe.h"

/* Pause loops: the handler's wait for a nested NMI, and the observation's for the second. */
#define NMI_NESTED_SPINS	2000
#define NMI_WAIT_SPINS		1000000

static int nmi_cpu = -1;	/* where an observation runs; -1: none, the NMI is not ours */
static u32 nmi_entries, nmi_depth, nmi_nested;
static bool nmi_registered;

static void nmi_self(void)
{
	apic->send_IPI_mask(cpumask_of(smp_processor_id()), NMI_VECTOR);
}

static int nmi_handler(unsigned int type, struct pt_regs *regs)
{
	u32 i;

	if (READ_ONCE(nmi_cpu) != smp_processor_id())
		return NMI_DONE;
	if (nmi_depth++)
		nmi_nested++;
	if (++nmi_entries == 1) {
		nmi_self();
		for (i = 0; i < NMI_NESTED_SPINS; i++)
			cpu_relax();
	}
	nmi_depth--;
	return NMI_HANDLED;
}

int obs_nmi_prepare(void)
{
	int err = register_nmi_handler(NMI_LOCAL, nmi_handler, 0, "vtice_probe");

	nmi_registered = !err;
	return err;
}

void obs_nmi_release(void)
{
	if (nmi_registered)
		unregister_nmi_handler(NMI_LOCAL, "vtice_probe");
	nmi_registered = false;
}

/* v[0]: how many of the two NMIs arrived; v[1]: how many of them inside the other's handler. */
void obs_nmi(struct obs_result *r)
{
	u32 i;

	nmi_entries = nmi_depth = nmi_nested = 0;
	WRITE_ONCE(nmi_cpu, smp_processor_id());
	nmi_self();
	for (i = 0; i < NMI_WAIT_SPINS && READ_ONCE(nmi_entries) < 2; i++)
		cpu_relax();
	WRITE_ONCE(nmi_cpu, -1);
	r->v[0] = READ_ONCE(nmi_entries);
	r->v[1] = READ_ONCE(nmi_nested);
}

void obs_nmi_log(const struct obs_result *r)
{
	pr_info("vtice_probe: bare nmi: arrived %llu nested %llu\n", r->v[0], r->v[1]);
}
