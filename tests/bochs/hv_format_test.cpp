// "vtice hv" rendering from recorded status structs. The expected text is
// written by hand from the ABI (include/uapi/vtice/ioctl.h) and the SDM's
// exit reason numbers (Vol. 3D, Appendix C: 10 CPUID, 18 VMCALL, 31 RDMSR,
// 48 EPT violation), not captured from the code under test.
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "hv_format.hpp"

using vtice::console::exit_reason_name;
using vtice::console::format_caps;
using vtice::console::format_status;

namespace vtice::console {
int cmd_hv(int argc, char **argv);
}

namespace {

vtice_cpu_stats cpu_stats(unsigned cpu, bool virtualized)
{
	vtice_cpu_stats s{};
	s.size = sizeof(s);
	s.version = VTICE_ABI_VERSION;
	s.cpu = cpu;
	s.flags = virtualized ? VTICE_CPU_VIRTUALIZED : 0;
	return s;
}

TEST(HvFormat, ReasonNamesFollowTheSdmNumbering)
{
	EXPECT_EQ(exit_reason_name(10), "CPUID");
	EXPECT_EQ(exit_reason_name(18), "VMCALL");
	EXPECT_EQ(exit_reason_name(31), "MSR_READ");
	EXPECT_EQ(exit_reason_name(48), "EPT_VIOLATION");
	EXPECT_EQ(exit_reason_name(79), "REASON_79");
}

TEST(HvFormat, StatusShowsEachCpuAndOnlyReasonsSeen)
{
	vtice_status st{};
	st.nr_cpu_ids = 2;
	st.nr_virtualized = 1;
	st.ring_records = 4096;
	st.ring_mmap_size = 135168;
	st.total_exits = 1007;
	st.virtualized[0] = 0x1;
	auto c0 = cpu_stats(0, true), c1 = cpu_stats(1, false);
	c0.exits[10] = 1000;
	c0.exits[31] = 5;
	c0.exits[18] = 2;
	c0.exits_total = 1007;

	const std::string want =
		"vtice hypervisor: 1 of 2 CPUs virtualized, 1007 VM exits\n"
		"ring: 4096 records per CPU, 135168 bytes mmap per CPU\n"
		"\n"
		"EXIT REASON                      CPU0         CPU1\n"
		"state                     virtualized        plain\n"
		"CPUID (10)                       1000            0\n"
		"VMCALL (18)                         2            0\n"
		"MSR_READ (31)                       5            0\n"
		"total                            1007            0\n";
	EXPECT_EQ(format_status(st, {c0, c1}), want);
}

TEST(HvFormat, StatusMaskAndCpuFlagMustAgree)
{
	// The stats say virtualized but the status mask does not: show "plain",
	// the conservative answer, rather than trust either alone.
	vtice_status st{};
	st.nr_cpu_ids = 1;
	auto c0 = cpu_stats(0, true);
	EXPECT_NE(format_status(st, {c0}).find("state                           plain\n"),
		  std::string::npos);
}

TEST(HvFormat, StatusCountsReasonsBeyondTheTable)
{
	vtice_status st{};
	auto c0 = cpu_stats(0, true);
	c0.exits_unknown = 3;
	c0.exits_total = 3;
	EXPECT_NE(format_status(st, {c0}).find("other (>= 80)                       3\n"),
		  std::string::npos);
}

TEST(HvFormat, CapsListsFlagsAndRawMsrs)
{
	vtice_caps caps{};
	caps.flags = VTICE_CAP_VMX | VTICE_CAP_EPT | VTICE_CAP_PREEMPT_TIMER;
	caps.preempt_timer_shift = 5;
	caps.vmx_basic = 0xda040000000004ull;
	std::string text = format_caps(caps);
	EXPECT_NE(text.find("  VMX                        yes\n"), std::string::npos);
	EXPECT_NE(text.find("  EPT                        yes\n"), std::string::npos);
	EXPECT_NE(text.find("  VPID                       no\n"), std::string::npos);
	EXPECT_NE(text.find("  preemption timer rate      TSC >> 5\n"), std::string::npos);
	EXPECT_NE(text.find("  IA32_VMX_BASIC             0x00da040000000004\n"), std::string::npos);
}

// The command's error paths, on devices that exist everywhere (or nowhere).
struct HvRun {
	int code;
	std::string err;
};

HvRun run_hv(std::vector<std::string> args)
{
	std::vector<char *> argv;
	for (auto &a : args)
		argv.push_back(a.data());
	testing::internal::CaptureStderr();
	testing::internal::CaptureStdout();
	int code = vtice::console::cmd_hv(static_cast<int>(argv.size()), argv.data());
	testing::internal::GetCapturedStdout();
	return {code, testing::internal::GetCapturedStderr()};
}

TEST(HvCommand, MissingDeviceAsksWhetherTheModuleIsLoaded)
{
	auto r = run_hv({"hv", "status", "--device", "/nonexistent/vtice"});
	EXPECT_EQ(r.code, 1);
	EXPECT_NE(r.err.find("/nonexistent/vtice: no such file: is the vtice module loaded?"),
		  std::string::npos);
}

TEST(HvCommand, ForeignDeviceIsNotMistakenForVtice)
{
	auto r = run_hv({"hv", "caps", "--device", "/dev/null"});
	EXPECT_EQ(r.code, 1);
	EXPECT_NE(r.err.find("VTICE_IOC_CAPS not supported"), std::string::npos);
}

TEST(HvCommand, UnknownRequestIsAUsageError)
{
	EXPECT_EQ(run_hv({"hv", "bogus"}).code, 2);
	EXPECT_EQ(run_hv({"hv"}).code, 2);
	EXPECT_EQ(run_hv({"hv", "status", "--colour"}).code, 2);
}

}  // namespace

// "vtice hv lbr": the expected lines follow the ABI (struct vtice_lbr) and
// the seeds; the symbolizer is a two-entry table made here.
namespace {

vtice_lbr lbr_ok()
{
	vtice_lbr l{};
	l.size = sizeof(l);
	l.version = VTICE_ABI_VERSION;
	l.cpu = 1;
	l.status = VTICE_LBR_OK;
	l.entries = 32;
	l.format = 5;
	return l;
}

std::optional<vtice::SymbolHit> two_symbols(std::uint64_t a)
{
	if (a >= 0xffffffff81000000ull && a < 0xffffffff81000100ull)
		return vtice::SymbolHit{"__die", 0xffffffff81000000ull, a - 0xffffffff81000000ull};
	if (a >= 0xffffffff81000100ull && a < 0xffffffff81000200ull)
		return vtice::SymbolHit{"page_fault_oops", 0xffffffff81000100ull, a - 0xffffffff81000100ull};
	return std::nullopt;
}

TEST(HvFormatLbr, BranchesOldestFirstWithSymbols)
{
	vtice_lbr l = lbr_ok();
	l.event = VTICE_LBR_EV_OOPS;
	l.rip = 0xffffffff81000000ull;
	l.count = 2;
	l.snapshots = 1;
	l.br[0] = {0xffffffff81000110ull, 0xffffffff81000000ull, VTICE_LBR_CYCLES, 7};
	l.br[1] = {0xffffffff81000010ull, 0xffffffff90000000ull, VTICE_LBR_MISPRED, 0};
	EXPECT_EQ(vtice::console::format_lbr(l, two_symbols),
		  "cpu 1: oops at 0xffffffff81000000 <__die+0x0>, 2 branches, oldest first\n"
		  "  0xffffffff81000110 <page_fault_oops+0x10> -> 0xffffffff81000000 <__die+0x0>  [7 cycles]\n"
		  "  0xffffffff81000010 <__die+0x10> -> 0xffffffff90000000  [mispredicted]\n");
}

TEST(HvFormatLbr, NoSymbolsNoSnapshotAndGuestOwned)
{
	vtice_lbr l = lbr_ok();
	EXPECT_EQ(vtice::console::format_lbr(l, {}),
		  "cpu 1: no snapshot yet (LBR: 32 entries, format 5)\n");
	l.event = VTICE_LBR_EV_PARKED;
	l.rip = 0x1234;
	l.snapshots = 3;
	l.flags = VTICE_LBR_GUEST_OWNED | VTICE_LBR_SELECT_VALID;
	l.lbr_select = 0x1;
	EXPECT_EQ(vtice::console::format_lbr(l, {}),
		  "cpu 1: stopped while another CPU crashed at 0x0000000000001234, 0 branches, oldest "
		  "first (the last of 3 snapshots)\n"
		  "  the kernel was using LBR itself (perf): its LBR_SELECT 0x1 filtered what was kept\n");
}

TEST(HvFormatLbr, SaysPlainlyWhyThereIsNoLbr)
{
	vtice_lbr l = lbr_ok();
	l.status = VTICE_LBR_NO_DEBUGCTL;
	EXPECT_EQ(vtice::console::format_lbr(l, {}),
		  "cpu 1: this CPU has no LBR (DEBUGCTL.LBR does not stick: an emulated CPU such as "
		  "Bochs or QEMU TCG)\n");
	l.status = VTICE_LBR_UNKNOWN_MODEL;
	l.model = 0x6ff;
	EXPECT_NE(vtice::console::lbr_status_text(l).find("model 06_FFH"), std::string::npos)
		<< vtice::console::lbr_status_text(l);
	l.status = VTICE_LBR_ARCH_ONLY;
	l.arch_depth = 32;
	EXPECT_NE(vtice::console::lbr_status_text(l).find("architectural LBR (depth 32"),
		  std::string::npos);
	l.status = VTICE_LBR_NO_STUB;
	EXPECT_NE(vtice::console::lbr_status_text(l).find("debug_port="), std::string::npos);
}

TEST(HvFormatLbr, BadCpuArgumentIsAUsageError)
{
	char a0[] = "hv", a1[] = "lbr", a2[] = "--cpu", a3[] = "x", a4[] = "--device",
	     a5[] = "/nonexistent/vtice";
	char *argv[] = {a0, a1, a2, a3, a4, a5, nullptr};
	EXPECT_NE(vtice::console::cmd_hv(6, argv), 0) << "no device: an error, not a crash";
}

}  // namespace
