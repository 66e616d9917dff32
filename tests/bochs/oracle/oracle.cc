// The rig's Bochs instrumentation: a log of what the emulated CPU did while
// the guest asked for it (instrument.h says why). Records are fixed-size
// and little endian, read by tests/hypervisor/host/root_oracle.py:
//   kind 1  an instruction the guest kernel is about to run stepped (CPL 0,
//           VMX non-root, the VMCS's monitor trap flag set): rip, rflags,
//           the 16 GPRs in Bochs's order (rax rcx rdx rbx rsp rbp rsi rdi
//           r8..r15), fs_base, gs_base
//   kind 2  an exception, 3 a software interrupt, 4 an external interrupt
//           or NMI delivered to it: vector, error code
//   kind 5  a read it made: linear address, length, the bytes
//   kind 6  a write (or a read-modify-write): address, length, the bytes
//           before, then after (taken when that CPU next runs or takes an
//           event, so the store has landed)
//   kind 7  before a CPU's next stepped instruction: how many CPL-0
//           instructions it ran unstepped since its last stepped one
//   kind 8  a VM exit of a stepped CPU: basic reason, qualification, and
//           RFLAGS as the CPU had it then (what the VMCS saves, but for RF
//           on the exits SDM Vol. 3C 28.3.3 gives their own rule)
// Only a stepped CPU's work is logged: a recording is made by stepping, and
// the rest of the kernel runs at full speed (the console loading symbols
// alone filled 4 GiB). Unstepped instructions are counted, so a step the
// hypervisor lost inside a recorded call still shows.
// An access reports at most 64 bytes of data (Bochs splits wider ones).
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "bochs.h"
#include "cpu/cpu.h"
#include "memory/memory-bochs.h"

bool vtice_oracle_enabled = false;
bool vtice_oracle_logging = false;

namespace {

enum Kind : Bit32u {
	INSTRUCTION = 1,
	EXCEPTION = 2,
	SOFT_INTERRUPT = 3,
	EXTERNAL_INTERRUPT = 4,
	READ = 5,
	WRITE = 6,
	UNSTEPPED = 7,
	VM_EXIT = 8,
};

constexpr unsigned kData = 64;

struct Record {
	Bit32u kind;
	Bit32u cpu;
	union {
		struct {
			Bit64u rip, rflags, gpr[16], fs_base, gs_base;
		} insn;
		struct {
			Bit64u vector, error_code;
		} delivery;
		struct {
			Bit64u count;
		} unstepped;
		struct {
			Bit64u reason, qualification, rflags;
		} exit;
		struct {
			Bit64u lin, len;
			Bit8u before[kData], after[kData];
		} access;
	};
};
static_assert(sizeof(Record) == 168, "the reader's record size");

// The guest's switch: CPUID with these three inputs, ECX 1 on and 0 off,
// seen at its VM exit (CPUID always exits, SDM Vol. 3C 26.1.2): the hooks
// that run for every instruction stay off until then. EBX is not an input
// of CPUID, so no program that sweeps leaves and subleaves (the
// transparency prober) sets it by chance.
constexpr Bit32u kMagicEax = 0x56544943;  // "VTIC"
constexpr Bit32u kMagicEbx = 0x4f524143;  // "ORAC"

// Stores wait for their after-bytes until the CPU's next hook.
constexpr unsigned kPendingMax = 64;
struct Pending {
	struct {
		Record record;
		bx_phy_address phy;
	} writes[kPendingMax];
	unsigned count = 0;
};

const char *log_path;
FILE *log_file;
bool &logging = vtice_oracle_logging;
Bit64u bytes_written;
// Against a guest that never switches it off. A recorded openat of 82,822
// steps, both CPUs stepped, logged 532 MB; the longest seen, 214,080 steps,
// would take ~1.4 GB.
constexpr Bit64u kMaxBytes = Bit64u(4) << 30;
Pending pending[64];
Bit64u unstepped[64];  // per CPU, since its last stepped instruction

void emit(const Record &r)
{
	if (bytes_written >= kMaxBytes) {
		if (logging)
			fprintf(stderr, "vtice oracle: %s reached %llu bytes; the rest is not logged\n", log_path,
				(unsigned long long)bytes_written);
		logging = false;
		return;
	}
	fwrite(&r, sizeof(r), 1, log_file);
	bytes_written += sizeof(r);
}

// Guest RAM only: a device's registers (the local APIC's page) are not read
// behind the guest's back, since a read can have effects there.
bool fetch(unsigned cpu, bx_phy_address phy, unsigned len, Bit8u *out)
{
	bool ram = phy + len <= BX_MEM(0)->get_memory_len() && !(phy < 0x100000 && phy + len > 0xa0000);
	if (!ram || !BX_MEM(0)->dbg_fetch_mem(BX_CPU(cpu), phy, len, out)) {
		memset(out, 0, len);
		return false;
	}
	return true;
}

void flush_pending(unsigned cpu)
{
	Pending &p = pending[cpu];
	for (unsigned k = 0; k < p.count; k++) {
		Record &r = p.writes[k].record;
		unsigned n = r.access.len < kData ? unsigned(r.access.len) : kData;
		fetch(cpu, p.writes[k].phy, n, r.access.after);
		emit(r);
	}
	p.count = 0;
}

bool guest_kernel(unsigned cpu)
{
	BX_CPU_C *c = BX_CPU(cpu);
	return c->in_vmx_guest && c->sregs[BX_SEG_REG_CS].selector.rpl == 0;
}

bool stepped(unsigned cpu)
{
	return BX_CPU(cpu)->vmcs.vmexec_ctrls1.MONITOR_TRAP_FLAG();
}

void switch_by_cpuid(unsigned cpu)
{
	BX_CPU_C *c = BX_CPU(cpu);
	if (c->gen_reg[BX_64BIT_REG_RAX].dword.erx != kMagicEax || c->gen_reg[BX_64BIT_REG_RBX].dword.erx != kMagicEbx)
		return;
	bool on = c->gen_reg[BX_64BIT_REG_RCX].dword.erx == 1;
	if (on && !log_file) {
		log_file = fopen(log_path, "wb");
		if (!log_file) {
			fprintf(stderr, "vtice oracle: cannot write %s\n", log_path);
			vtice_oracle_enabled = false;
			return;
		}
		setvbuf(log_file, nullptr, _IOFBF, 1 << 20);
	}
	if (!on && logging) {
		for (unsigned k = 0; k < BX_SMP_PROCESSORS; k++)
			flush_pending(k);
		fflush(log_file);
	}
	if (on)
		memset(unstepped, 0, sizeof(unstepped));
	logging = on;
}

}  // namespace

void vtice_oracle_init(void)
{
	log_path = getenv("VTICE_BOCHS_ORACLE");
	vtice_oracle_enabled = log_path && *log_path && BX_SMP_PROCESSORS <= 64;
}

void vtice_oracle_exit(void)
{
	if (log_file)
		fclose(log_file);
	log_file = nullptr;
	logging = false;
}

void vtice_oracle_before(unsigned cpu, bxInstruction_c *)
{
	if (!logging || !guest_kernel(cpu))
		return;
	flush_pending(cpu);
	if (!stepped(cpu)) {
		unstepped[cpu]++;
		return;
	}
	Record r = {};
	if (unstepped[cpu]) {
		r.kind = UNSTEPPED;
		r.cpu = cpu;
		r.unstepped.count = unstepped[cpu];
		emit(r);
		unstepped[cpu] = 0;
		r = {};
	}
	BX_CPU_C *c = BX_CPU(cpu);
	r.kind = INSTRUCTION;
	r.cpu = cpu;
	r.insn.rip = c->gen_reg[BX_64BIT_REG_RIP].rrx;
	r.insn.rflags = c->read_eflags();
	for (unsigned k = 0; k < 16; k++)
		r.insn.gpr[k] = c->gen_reg[k].rrx;
	r.insn.fs_base = c->sregs[BX_SEG_REG_FS].cache.u.segment.base;
	r.insn.gs_base = c->sregs[BX_SEG_REG_GS].cache.u.segment.base;
	emit(r);
}

void vtice_oracle_delivery(unsigned cpu, unsigned kind, unsigned vector, unsigned error_code)
{
	if (!logging || !BX_CPU(cpu)->in_vmx_guest || !stepped(cpu))
		return;
	flush_pending(cpu);
	Record r = {};
	r.kind = kind;
	r.cpu = cpu;
	r.delivery.vector = vector;
	r.delivery.error_code = error_code;
	emit(r);
}

void vtice_oracle_vmexit(unsigned cpu, Bit32u reason, Bit64u qualification)
{
	if ((reason & 0xffff) == VMX_VMEXIT_CPUID)
		switch_by_cpuid(cpu);	// the guest's registers are still in place here
	if (!logging || !stepped(cpu))
		return;
	flush_pending(cpu);
	Record r = {};
	r.kind = VM_EXIT;
	r.cpu = cpu;
	r.exit.reason = reason & 0xffff;
	r.exit.qualification = qualification;
	r.exit.rflags = BX_CPU(cpu)->read_eflags();
	emit(r);
}

void vtice_oracle_access(unsigned cpu, bx_address lin, bx_phy_address phy, unsigned len, unsigned rw)
{
	if (!logging || !guest_kernel(cpu) || !stepped(cpu) || rw == BX_EXECUTE || len == 0)
		return;
	Record r = {};
	r.cpu = cpu;
	r.access.lin = lin;
	r.access.len = len;
	unsigned n = len < kData ? len : kData;
	fetch(cpu, phy, n, r.access.before);
	if (!(rw & 1)) {
		r.kind = READ;
		emit(r);
		return;
	}
	r.kind = WRITE;
	Pending &p = pending[cpu];
	if (p.count == kPendingMax)
		flush_pending(cpu);
	p.writes[p.count].record = r;
	p.writes[p.count++].phy = phy;
}
