// The rig's Bochs instrumentation (docs/bochs-rig.md, "The CPU as oracle"):
// Bochs is built with --enable-instrumentation=instrument/vtice and this
// directory copied there (lib/bochs3.sh). When the environment names a file
// in VTICE_BOCHS_ORACLE, the guest can switch a log on and off with a
// CPUID of magic inputs (oracle.cc), seen at the VM exit the hypervisor
// takes for it; while it is on, every instruction the guest kernel runs
// stepped in VMX non-root operation, with its registers, and every memory
// access it makes, with the bytes, go to that file. The log is what the
// emulated CPU itself did: the oracle a recording made by the hypervisor is
// checked against. While it is off, each per-instruction hook is one
// untaken branch (a call per instruction made the rig's baseline 60 %
// slower).
#ifndef VTICE_BOCHS_ORACLE_H
#define VTICE_BOCHS_ORACLE_H

#if BX_INSTRUMENTATION

class bxInstruction_c;

extern bool vtice_oracle_enabled;  // VTICE_BOCHS_ORACLE was set
extern bool vtice_oracle_logging;  // and the guest switched the log on

void vtice_oracle_init(void);
void vtice_oracle_exit(void);
void vtice_oracle_before(unsigned cpu, bxInstruction_c *i);
void vtice_oracle_delivery(unsigned cpu, unsigned kind, unsigned vector, unsigned error_code);
void vtice_oracle_vmexit(unsigned cpu, Bit32u reason, Bit64u qualification);
void vtice_oracle_access(unsigned cpu, bx_address lin, bx_phy_address phy, unsigned len, unsigned rw);

#define VTICE_ORACLE_HOOK(call) do { if (vtice_oracle_logging) call; } while (0)

#define BX_INSTR_INIT_ENV() vtice_oracle_init()
#define BX_INSTR_EXIT_ENV() vtice_oracle_exit()
#define BX_INSTR_BEFORE_EXECUTION(cpu_id, i) VTICE_ORACLE_HOOK(vtice_oracle_before(cpu_id, i))
#define BX_INSTR_EXCEPTION(cpu_id, vector, error_code) \
	VTICE_ORACLE_HOOK(vtice_oracle_delivery(cpu_id, 2, vector, error_code))
#define BX_INSTR_INTERRUPT(cpu_id, vector) VTICE_ORACLE_HOOK(vtice_oracle_delivery(cpu_id, 3, vector, 0))
#define BX_INSTR_HWINTERRUPT(cpu_id, vector, cs, eip) VTICE_ORACLE_HOOK(vtice_oracle_delivery(cpu_id, 4, vector, 0))
#define BX_INSTR_LIN_ACCESS(cpu_id, lin, phy, len, memtype, rw) \
	VTICE_ORACLE_HOOK(vtice_oracle_access(cpu_id, lin, phy, len, rw))
#define BX_INSTR_VMEXIT(cpu_id, reason, qualification) \
	do { if (vtice_oracle_enabled) vtice_oracle_vmexit(cpu_id, reason, qualification); } while (0)

#else  // !BX_INSTRUMENTATION

#define BX_INSTR_INIT_ENV()
#define BX_INSTR_EXIT_ENV()
#define BX_INSTR_BEFORE_EXECUTION(cpu_id, i)
#define BX_INSTR_EXCEPTION(cpu_id, vector, error_code)
#define BX_INSTR_INTERRUPT(cpu_id, vector)
#define BX_INSTR_HWINTERRUPT(cpu_id, vector, cs, eip)
#define BX_INSTR_LIN_ACCESS(cpu_id, lin, phy, len, memtype, rw)
#define BX_INSTR_VMEXIT(cpu_id, reason, qualification)

#endif

// The hooks the oracle does not use.
#define BX_INSTR_INITIALIZE(cpu_id)
#define BX_INSTR_EXIT(cpu_id)
#define BX_INSTR_RESET(cpu_id, type)
#define BX_INSTR_HLT(cpu_id)
#define BX_INSTR_MWAIT(cpu_id, addr, len, flags)
#define BX_INSTR_DEBUG_PROMPT()
#define BX_INSTR_DEBUG_CMD(cmd)
#define BX_INSTR_CNEAR_BRANCH_TAKEN(cpu_id, branch_eip, new_eip)
#define BX_INSTR_CNEAR_BRANCH_NOT_TAKEN(cpu_id, branch_eip)
#define BX_INSTR_UCNEAR_BRANCH(cpu_id, what, branch_eip, new_eip)
#define BX_INSTR_FAR_BRANCH(cpu_id, what, prev_cs, prev_eip, new_cs, new_eip)
#define BX_INSTR_OPCODE(cpu_id, i, opcode, len, is32, is64)
#define BX_INSTR_CLFLUSH(cpu_id, laddr, paddr)
#define BX_INSTR_CACHE_CNTRL(cpu_id, what)
#define BX_INSTR_TLB_CNTRL(cpu_id, what, new_cr3)
#define BX_INSTR_PREFETCH_HINT(cpu_id, what, seg, offset)
#define BX_INSTR_AFTER_EXECUTION(cpu_id, i)
#define BX_INSTR_REPEAT_ITERATION(cpu_id, i)
#define BX_INSTR_PHY_ACCESS(cpu_id, phy, len, memtype, rw)
#define BX_INSTR_INP(addr, len)
#define BX_INSTR_INP2(addr, len, val)
#define BX_INSTR_OUTP(addr, len, val)
#define BX_INSTR_WRMSR(cpu_id, addr, value)

#endif
