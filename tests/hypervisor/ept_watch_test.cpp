// Z2/Z3/Z4 as EPT protections completed under MTF (hypervisor/debug/ept_watch.c,
// step.c). Entries are checked against the SDM's EPT format (Vol. 3C 29.3.2)
// and the rule that R=0 W=1 is a misconfiguration (29.3.3.1).
#include "hooks_fixture.hpp"

using namespace vtice::fake;

namespace {

class Watch : public HooksFixture {
protected:
	const uint64_t var = kKernelBase + 20 * kPage + 0x80;	// a kernel variable

	// A data access by a linear address the CPU reported (qual bits 7 and 8).
	vt_hook_result access(uint64_t gva, uint64_t kind)
	{
		uint64_t was = leaf(gpa_of(gva)) & kEptRWX;
		return violation(gpa_of(gva), kind | (was << 3) | kQualGlaValid | kQualGlaTranslated,
				 gva);
	}

	static vt_hooks_stats stats()
	{
		vt_hooks_stats s{};
		vt_hooks_get_stats(&s);
		return s;
	}

	void expect_protected(uint64_t gpa, uint64_t rights)
	{
		EXPECT_EQ(leaf(gpa), (identity(gpa) & ~kEptRWX) | rights) << std::hex << gpa;
	}
};

TEST_F(Watch, ProtectionPerType)
{
	start();
	ASSERT_EQ(vt_watch_insert(VT_POINT_WRITE, var, 8, 0), 0);
	expect_protected(gpa_of(var), kEptR | kEptX);
	ASSERT_EQ(vt_watch_insert(VT_POINT_READ, var + kPage, 4, 0), 0);
	expect_protected(gpa_of(var + kPage), kEptX);
	ASSERT_EQ(vt_watch_insert(VT_POINT_ACCESS, var + 2 * kPage, 1, 0), 0);
	expect_protected(gpa_of(var + 2 * kPage), kEptX);
	// Z3 on the Z2 page: the union, never R=0 W=1.
	ASSERT_EQ(vt_watch_insert(VT_POINT_READ, var + 64, 8, 0), 0);
	expect_protected(gpa_of(var), kEptX);
	ASSERT_EQ(vt_watch_remove(VT_POINT_READ, var + 64, 8), 0);
	expect_protected(gpa_of(var), kEptR | kEptX);
	EXPECT_EQ(leaf(gpa_of(var) + kPage * 3), identity(gpa_of(var) + kPage * 3));
}

TEST_F(Watch, ReadWatchWithoutExecuteOnlyRemovesExecuteToo)
{
	start();
	hv.caps.flags &= ~VTICE_CAP_EPT_EXEC_ONLY;
	ASSERT_EQ(vt_watch_insert(VT_POINT_READ, var, 8, 0), 0);
	expect_protected(gpa_of(var), 0);
	ASSERT_EQ(vt_watch_insert(VT_POINT_WRITE, var + kPage, 8, 0), 0);
	expect_protected(gpa_of(var + kPage), kEptR | kEptX);
	// A fetch from that page is completed like any other access.
	EXPECT_EQ(violation(gpa_of(var), kQualFetch), VT_HOOK_HANDLED);
	EXPECT_EQ(mtf(), VT_HOOK_HANDLED);
	expect_protected(gpa_of(var), 0);
}

TEST_F(Watch, WriteHitIsReportedAfterTheInstruction)
{
	start();
	ASSERT_EQ(vt_watch_insert(VT_POINT_WRITE, var, 8, 0), 0);
	vt_hooks_on_resume(&vcpu);
	size_t before = invepts();
	EXPECT_EQ(access(var, kQualWrite), VT_HOOK_HANDLED);
	EXPECT_EQ(cpu_leaf(gpa_of(var)), identity(gpa_of(var))) << "lifted for one instruction";
	expect_protected(gpa_of(var), kEptR | kEptX);	// for every other CPU
	EXPECT_TRUE(mtf_armed());
	EXPECT_TRUE(cpu().vmcs[GUEST_INTERRUPTIBILITY_INFO] & GUEST_INTR_STATE_STI)
		<< "IF=1: interrupts held off for that instruction";
	cpu().vmcs[GUEST_RIP] += 3;	// the instruction ran
	ASSERT_EQ(mtf(), VT_HOOK_STOP);
	EXPECT_EQ(stop.reason, VT_STOP_WATCH);
	EXPECT_EQ(stop.data_addr, var);
	EXPECT_EQ(stop.cpu, 0u);
	EXPECT_FALSE(mtf_armed());
	EXPECT_TRUE(on_shared_tables());
	expect_protected(gpa_of(var), kEptR | kEptX);
	EXPECT_EQ(invepts(), before + 1) << "the view's, before the step: it cached an earlier step's lift";
}

TEST_F(Watch, NoInterruptBlockingWhenInterruptsAreOff)
{
	start();
	ASSERT_EQ(vt_watch_insert(VT_POINT_WRITE, var, 8, 0), 0);
	cpu().vmcs[GUEST_RFLAGS] = 0x2;
	EXPECT_EQ(access(var, kQualWrite), VT_HOOK_HANDLED);
	// SDM 26.3.1.5: blocking by STI must be 0 when RFLAGS.IF is 0.
	EXPECT_FALSE(cpu().vmcs[GUEST_INTERRUPTIBILITY_INFO] & GUEST_INTR_STATE_STI);
	EXPECT_EQ(mtf(), VT_HOOK_STOP);
}

TEST_F(Watch, NoInterruptBlockingWhileAnEventIsRedelivered)
{
	start();
	ASSERT_EQ(vt_watch_insert(VT_POINT_WRITE, var, 8, 0), 0);
	cpu().vmcs[IDT_VECTORING_INFO_FIELD] = 0x80000020;	// external interrupt 0x20
	EXPECT_EQ(access(var, kQualWrite), VT_HOOK_HANDLED);
	EXPECT_FALSE(cpu().vmcs[GUEST_INTERRUPTIBILITY_INFO] & GUEST_INTR_STATE_STI);
}

TEST_F(Watch, TypesMatchTheAccess)
{
	start();
	ASSERT_EQ(vt_watch_insert(VT_POINT_READ, var, 8, 0), 0);
	ASSERT_EQ(vt_watch_insert(VT_POINT_ACCESS, var + kPage, 8, 0), 0);

	EXPECT_EQ(access(var, kQualRead), VT_HOOK_HANDLED);
	ASSERT_EQ(mtf(), VT_HOOK_STOP);
	EXPECT_EQ(stop.reason, VT_STOP_RWATCH);
	EXPECT_EQ(stop.data_addr, var);

	// A write to a read watch completes silently.
	EXPECT_EQ(access(var + 4, kQualWrite), VT_HOOK_HANDLED);
	EXPECT_EQ(mtf(), VT_HOOK_HANDLED);

	EXPECT_EQ(access(var + kPage + 2, kQualRead), VT_HOOK_HANDLED);
	ASSERT_EQ(mtf(), VT_HOOK_STOP);
	EXPECT_EQ(stop.reason, VT_STOP_AWATCH);
	EXPECT_EQ(stop.data_addr, var + kPage + 2);
	EXPECT_EQ(access(var + kPage + 7, kQualWrite), VT_HOOK_HANDLED);
	ASSERT_EQ(mtf(), VT_HOOK_STOP);
	EXPECT_EQ(stop.reason, VT_STOP_AWATCH);
}

TEST_F(Watch, OtherBytesOfThePageCompleteSilently)
{
	start();
	ASSERT_EQ(vt_watch_insert(VT_POINT_ACCESS, var, 8, 0), 0);
	for (uint64_t gva : {var - 0x80, var - 8, var + 8, var + 0x100, var + 0xf00}) {
		EXPECT_EQ(access(gva, kQualWrite), VT_HOOK_HANDLED) << std::hex << gva;
		EXPECT_TRUE(mtf_armed());
		EXPECT_EQ(mtf(), VT_HOOK_HANDLED) << std::hex << gva;
		EXPECT_FALSE(mtf_armed());
		expect_protected(gpa_of(var), kEptX);
	}
	vt_hooks_stats s = stats();
	EXPECT_EQ(s.watch_steps, 5u);
	EXPECT_EQ(s.watch_hits, 0u);
}

TEST_F(Watch, AnAccessStartingJustBelowTheRangeTouchesIt)
{
	start();
	ASSERT_EQ(vt_watch_insert(VT_POINT_WRITE, var, 4, 0), 0);
	EXPECT_EQ(access(var - 4, kQualWrite), VT_HOOK_HANDLED);	// an 8-byte store
	ASSERT_EQ(mtf(), VT_HOOK_STOP);
	EXPECT_EQ(stop.data_addr, var) << "the first watched byte";
}

TEST_F(Watch, RangeSpanningPages)
{
	start();
	uint64_t start_gva = kKernelBase + 31 * kPage - 4;
	ASSERT_EQ(vt_watch_insert(VT_POINT_WRITE, start_gva, 2 * kPage + 8, 0), 0);
	for (uint64_t p = 30; p <= 33; p++)
		expect_protected(kRamGpa + p * kPage, kEptR | kEptX);
	EXPECT_EQ(leaf(kRamGpa + 34 * kPage), identity(kRamGpa + 34 * kPage));
	uint64_t second = kKernelBase + 32 * kPage + 0x10;
	EXPECT_EQ(access(second, kQualWrite), VT_HOOK_HANDLED);
	ASSERT_EQ(mtf(), VT_HOOK_STOP);
	EXPECT_EQ(stop.data_addr, second);
	ASSERT_EQ(vt_watch_remove(VT_POINT_WRITE, start_gva, 2 * kPage + 8), 0);
	for (uint64_t p = 30; p <= 33; p++)
		EXPECT_EQ(leaf(kRamGpa + p * kPage), identity(kRamGpa + p * kPage)) << p;
}

TEST_F(Watch, AnInstructionTouchingTwoWatchedPages)
{
	start();
	uint64_t edge = kKernelBase + 41 * kPage - 4;
	ASSERT_EQ(vt_watch_insert(VT_POINT_WRITE, edge, 8, 0), 0);
	// A misaligned 8-byte store: the second page faults after the first was lifted.
	EXPECT_EQ(access(edge, kQualWrite), VT_HOOK_HANDLED);
	const size_t before = invepts();
	EXPECT_EQ(access(edge + 4, kQualWrite), VT_HOOK_HANDLED);
	EXPECT_EQ(invepts(), before + 1) << "the step's view rebuilt once for its second page";
	EXPECT_EQ(cpu_leaf(gpa_of(edge)), identity(gpa_of(edge)));
	EXPECT_EQ(cpu_leaf(gpa_of(edge + 4)), identity(gpa_of(edge + 4)));
	expect_protected(gpa_of(edge), kEptR | kEptX);
	expect_protected(gpa_of(edge + 4), kEptR | kEptX);
	ASSERT_EQ(mtf(), VT_HOOK_STOP);
	EXPECT_EQ(stop.data_addr, edge);
	expect_protected(gpa_of(edge), kEptR | kEptX);
	expect_protected(gpa_of(edge + 4), kEptR | kEptX);
}

TEST_F(Watch, WithoutTheLinearAddressTheFrameOffsetDecides)
{
	start();
	ASSERT_EQ(vt_watch_insert(VT_POINT_WRITE, var, 8, 0), 0);
	EXPECT_EQ(violation(gpa_of(var) + 2, kQualWrite | kQualWasR | kQualWasX), VT_HOOK_HANDLED);
	ASSERT_EQ(mtf(), VT_HOOK_STOP);
	EXPECT_EQ(stop.data_addr, var + 2);
}

TEST_F(Watch, GuestPageWalksAreSilent)
{
	start();
	ASSERT_EQ(vt_watch_insert(VT_POINT_WRITE, var, 8, 0), 0);
	// The CPU setting an A/D bit in a guest page table on the watched page
	// (bit 7 = 1, bit 8 = 0), even at the watched offset.
	EXPECT_EQ(violation(gpa_of(var), kQualWrite | kQualWasR | kQualGlaValid, 0x7fff0000),
		  VT_HOOK_HANDLED);
	EXPECT_EQ(mtf(), VT_HOOK_HANDLED);
	// A program's access to the page is not one: monitor hooks tells them apart.
	EXPECT_EQ(access(var + 0x100, kQualWrite), VT_HOOK_HANDLED);
	EXPECT_EQ(mtf(), VT_HOOK_HANDLED);
	vt_hooks_stats s = stats();
	EXPECT_EQ(s.watch_steps, 2u);
	EXPECT_EQ(s.watch_walks, 1u);
	EXPECT_EQ(s.watch_hits, 0u);
}

TEST_F(Watch, AliasedLinearPagesShareTheFrame)
{
	start();
	uint64_t alias = 0xffff888001000000ull;	// the direct map of the same frame
	translations()[alias] = gpa_of(var) & ~(kPage - 1);
	ASSERT_EQ(vt_watch_insert(VT_POINT_WRITE, var, 8, 0), 0);
	ASSERT_EQ(vt_watch_insert(VT_POINT_WRITE, alias + 0x800, 8, 0), 0);
	// Without a linear address, the frame offset matches the alias's range.
	EXPECT_EQ(violation(gpa_of(var) + 0x800 - 0x80, kQualWrite | kQualWasR | kQualWasX),
		  VT_HOOK_HANDLED);
	ASSERT_EQ(mtf(), VT_HOOK_STOP);
	EXPECT_EQ(stop.data_addr, alias + 0x800);
	ASSERT_EQ(vt_watch_remove(VT_POINT_WRITE, var, 8), 0);
	expect_protected(gpa_of(var), kEptR | kEptX);	// the alias still needs it
	ASSERT_EQ(vt_watch_remove(VT_POINT_WRITE, alias + 0x800, 8), 0);
	EXPECT_EQ(leaf(gpa_of(var)), identity(gpa_of(var)));
}

TEST_F(Watch, MtfThatIsNotOursIsLeftToTheStepper)
{
	start();
	ASSERT_EQ(vt_watch_insert(VT_POINT_WRITE, var, 8, 0), 0);
	EXPECT_EQ(mtf(), VT_HOOK_NOT_MINE);
	// Not a watched page, and its entry allows the write: a translation this
	// CPU cached before a lift ended (SDM 3C 29.4.3), flushed and retried.
	size_t before = invepts();
	EXPECT_EQ(violation(kRamGpa + 90 * kPage, kQualWrite), VT_HOOK_HANDLED);
	EXPECT_EQ(invepts(), before + 1);
	EXPECT_FALSE(mtf_armed()) << "no step: the watch code never saw it";
}

TEST_F(Watch, HundredWatchpoints)
{
	start();
	std::vector<uint64_t> vars;
	for (uint64_t i = 0; i < 100; i++)
		vars.push_back(kKernelBase + (i + 10) * kPage + 8 * (i % 16));
	for (uint64_t v : vars)
		ASSERT_EQ(vt_watch_insert(VT_POINT_WRITE, v, 8, 0), 0) << std::hex << v;
	for (uint64_t v : vars)
		expect_protected(gpa_of(v), kEptR | kEptX);
	uint64_t hit = vars[57];
	EXPECT_EQ(access(hit, kQualWrite), VT_HOOK_HANDLED);
	ASSERT_EQ(mtf(), VT_HOOK_STOP);
	EXPECT_EQ(stop.data_addr, hit);
	EXPECT_EQ(access(hit + 0x100, kQualWrite), VT_HOOK_HANDLED);
	EXPECT_EQ(mtf(), VT_HOOK_HANDLED);
	vt_hooks_stats s = stats();
	EXPECT_EQ(s.watches, 100u);
	EXPECT_EQ(s.watch_pages, 100u);
	vt_hooks_remove_all();
	for (uint64_t v : vars)
		EXPECT_EQ(leaf(gpa_of(v)), identity(gpa_of(v))) << std::hex << v;
}

TEST_F(Watch, RefusalsLeaveNothingBehind)
{
	start(8, false);
	// Neither MTF nor the external-interrupt exiting a TF step needs.
	hv.caps.pin &= ~(uint64_t(PIN_BASED_EXT_INTR_MASK) << 32);
	EXPECT_EQ(vt_watch_insert(VT_POINT_WRITE, var, 8, 0), -VT_EOPNOTSUPP) << "no way to single-step";
	hv.caps.flags |= VTICE_CAP_MTF;
	EXPECT_EQ(vt_watch_insert(VT_POINT_SW, var, 8, 0), -VT_EINVAL);
	EXPECT_EQ(vt_watch_insert(VT_POINT_WRITE, var, 0, 0), -VT_EINVAL);
	EXPECT_EQ(vt_watch_insert(VT_POINT_WRITE, ~0ull - 3, 8, 0), -VT_EINVAL);
	// The range runs off the end of the mapped RAM: its first pages are undone.
	uint64_t last = kKernelBase + (kRamPages - 1) * kPage;
	EXPECT_EQ(vt_watch_insert(VT_POINT_WRITE, last, 2 * kPage, 0), -VT_EINVAL);
	EXPECT_EQ(leaf(gpa_of(last)), identity(gpa_of(last)));
	vt_hooks_stats s = stats();
	EXPECT_EQ(s.watches, 0u);
	EXPECT_EQ(s.watch_pages, 0u);
}

TEST_F(Watch, RemovalWhileAnotherCpuStepsLeavesItsStepAlone)
{
	start();
	ASSERT_EQ(vt_watch_insert(VT_POINT_WRITE, var, 8, 0), 0);
	ASSERT_EQ(vt_watch_insert(VT_POINT_WRITE, var + 16, 8, 0), 0);
	// CPU 1 takes the violation and is then parked before its MTF exit.
	vt_vcpu other{};
	other.hv = &hv;
	other.cpu = 1;
	vt_exit oexit{};
	oexit.vcpu = &other;
	oexit.regs = &regs;
	cpu().vmcs[GUEST_LINEAR_ADDRESS] = var;
	ASSERT_EQ(vt_hooks_on_ept_violation(&other, &oexit, gpa_of(var),
					    kQualWrite | kQualGlaValid | kQualGlaTranslated, &stop),
		  VT_HOOK_HANDLED);
	ASSERT_EQ(vt_watch_remove(VT_POINT_WRITE, var + 16, 8), 0);
	expect_protected(gpa_of(var), kEptR | kEptX);	// var is still watched, for every CPU
	EXPECT_EQ(cpu_leaf(gpa_of(var)), identity(gpa_of(var))) << "CPU 1 is still mid-instruction";
	EXPECT_NE(vt_hooks_on_mtf(&other, &oexit, &stop), VT_HOOK_NOT_MINE);
	EXPECT_TRUE(on_shared_tables());
	expect_protected(gpa_of(var), kEptR | kEptX);
}

bool ept_violation_cb(vt_vcpu *v, vt_exit *e, u64 gpa, u64 qual)
{
	vt_dbg_stop s{};
	return vt_hooks_on_ept_violation(v, e, gpa, qual, &s) != VT_HOOK_NOT_MINE;
}

TEST_F(Watch, AnEventInterruptedByTheViolationIsDeliveredAgain)
{
	start();
	ASSERT_EQ(vt_watch_insert(VT_POINT_WRITE, var, 8, 0), 0);
	vt_callbacks cb{};
	cb.ept_violation = ept_violation_cb;
	vt_hv_set_callbacks(&hv, &cb);
	auto &c = cpu();
	// A #PF whose frame push hit the watched page (SDM 3C 28.2.4): vector 14,
	// hardware exception, with error code 2, valid.
	const uint64_t pf = 14 | (3u << 8) | (1u << 11) | (1u << 31);
	c.vmcs[IDT_VECTORING_INFO_FIELD] = pf;
	c.vmcs[IDT_VECTORING_ERROR_CODE] = 2;
	c.vmcs[GUEST_PHYSICAL_ADDRESS] = gpa_of(var);
	c.vmcs[GUEST_LINEAR_ADDRESS] = var;
	vt_guest_regs r{};
	EXPECT_TRUE(vm_exit(EXIT_REASON_EPT_VIOLATION,
			    kQualWrite | kQualWasR | kQualWasX | kQualGlaValid | kQualGlaTranslated, r));
	EXPECT_EQ(entry_event(), pf);
	EXPECT_EQ(c.vmcs[VM_ENTRY_EXCEPTION_ERROR_CODE], 2u);
	EXPECT_TRUE(mtf_armed());
	EXPECT_FALSE(c.vmcs[GUEST_INTERRUPTIBILITY_INFO] & GUEST_INTR_STATE_STI);
	ASSERT_EQ(mtf(), VT_HOOK_STOP);
	EXPECT_EQ(stop.data_addr, var);
	vt_hv_set_callbacks(&hv, nullptr);
}

// The lift is the stepping CPU's alone: no other CPU saw the page
// writable, so none has anything to flush (INVEPT on every CPU's next exit
// would cost each of them a TLB refill per watched access).
TEST_F(Watch, ALiftLeavesOtherCpusNothingToFlush)
{
	start();
	ASSERT_EQ(vt_watch_insert(VT_POINT_WRITE, var, 8, 0), 0);
	vt_hooks_on_resume(&vcpu);
	vt_vcpu other{};
	other.hv = &hv;
	other.cpu = 1;
	vt_hooks_on_resume(&other);
	size_t before = invepts();
	EXPECT_EQ(access(var + 0x200, kQualWrite), VT_HOOK_HANDLED);
	EXPECT_EQ(mtf(), VT_HOOK_HANDLED);
	vt_hooks_on_resume(&other);
	EXPECT_EQ(invepts(), before + 1) << "the stepping CPU's view, before its step; CPU 1 none";
}

}  // namespace
