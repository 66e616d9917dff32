// Z0 as an EPT split view (hypervisor/debug/ept_bp.c). Expected entries come
// from the SDM's EPT format (Vol. 3C 29.3.2): bit 0 R, bit 1 W, bit 2 X,
// bits 5:3 memory type, bits 51:12 the frame.
#include "hooks_fixture.hpp"

using namespace vtice::fake;

namespace {

class SplitView : public HooksFixture {
protected:
	const uint64_t bp = kKernelBase + 3 * kPage + 0x123;	// on RAM page 3
	uint64_t page() { return gpa_of(bp) & ~(kPage - 1); }
	uint8_t original(uint64_t gva) { return ram[gva - kKernelBase]; }
};

TEST_F(SplitView, InsertMapsAnExecuteOnlyShadowWithInt3)
{
	start();
	ASSERT_EQ(vt_bp_insert(bp, gpa_of(bp)), 0);
	uint64_t e = leaf(gpa_of(bp));
	EXPECT_EQ(leaf_level(gpa_of(bp)), 1) << "split down to a 4 KiB PTE";
	EXPECT_EQ(e & kEptRWX, kEptX) << "X=1 R=0 W=0 while executing";
	EXPECT_EQ(e & (7u << 3), kEptTypeWB) << "memory type kept";
	EXPECT_NE(e & kEptAddr, page()) << "maps a copy, not the original frame";
	const uint8_t *frame = mapped_frame(gpa_of(bp));
	EXPECT_EQ(frame[0x123], 0xcc);
	EXPECT_EQ(std::memcmp(frame, &ram[3 * kPage], 0x123), 0);
	EXPECT_EQ(std::memcmp(frame + 0x124, &ram[3 * kPage + 0x124], kPage - 0x124), 0);
	EXPECT_NE(original(bp), 0xcc) << "the guest's own bytes are untouched";
	// Neighbouring pages keep their identity entries.
	EXPECT_EQ(leaf(page() + kPage), identity(page() + kPage));
}

TEST_F(SplitView, RefusedOnTheHypervisorsOwnPagesAsAreWatchpoints)
{
	start();
	ASSERT_EQ(vt_shield_hide(&hv.shield, &hv.ept, page(), 1), 0);
	const uint64_t hidden = leaf(page());
	EXPECT_EQ(vt_bp_insert(bp, gpa_of(bp)), -VT_EACCES);
	EXPECT_EQ(vt_watch_insert(VT_POINT_WRITE, bp, 8, 0), -VT_EACCES);
	EXPECT_EQ(leaf(page()), hidden) << "the shield's leaf is left as it was";
	vt_hooks_remove_all();
	EXPECT_EQ(leaf(page()), hidden);
}

TEST_F(SplitView, ResumeInveptsOnceAndInterceptsInt3)
{
	start();
	ASSERT_EQ(vt_bp_insert(bp, gpa_of(bp)), 0);
	vt_hooks_on_resume(&vcpu);
	ASSERT_EQ(invepts(), 1u);
	// Bochs's EPT caps have bit 25: single-context INVEPT (type 1) of our EPTP.
	EXPECT_EQ(cpu().invepts[0].first, 1u);
	EXPECT_EQ(cpu().invepts[0].second, hv.ept.eptp);
	EXPECT_TRUE(cpu().vmcs[EXCEPTION_BITMAP] & (1u << 3));
	vt_hooks_on_resume(&vcpu);
	EXPECT_EQ(invepts(), 1u) << "nothing changed since";
}

TEST_F(SplitView, GlobalInveptWithoutSingleContext)
{
	start();
	hv.caps.flags &= ~VTICE_CAP_INVEPT_SINGLE;
	ASSERT_EQ(vt_bp_insert(bp, gpa_of(bp)), 0);
	vt_hooks_on_resume(&vcpu);
	ASSERT_EQ(invepts(), 1u);
	EXPECT_EQ(cpu().invepts[0].first, 2u);
}

TEST_F(SplitView, RefusedWithoutExecuteOnly)
{
	start();
	hv.caps.flags &= ~VTICE_CAP_EPT_EXEC_ONLY;
	uint64_t before = leaf(gpa_of(bp));
	EXPECT_EQ(vt_bp_insert(bp, gpa_of(bp)), -VT_EOPNOTSUPP);
	EXPECT_EQ(leaf(gpa_of(bp)), before);
}

TEST_F(SplitView, AReadFlipsToTheOriginalReadOnly)
{
	start();
	ASSERT_EQ(vt_bp_insert(bp, gpa_of(bp)), 0);
	size_t before = invepts();
	EXPECT_EQ(violation(gpa_of(bp), kQualRead | kQualWasX), VT_HOOK_HANDLED);
	uint64_t e = leaf(gpa_of(bp));
	EXPECT_EQ(e & kEptRWX, kEptR) << "R=1 W=0 X=0: a write must fault to be stepped";
	EXPECT_EQ(e & kEptAddr, page());
	EXPECT_EQ(mapped_frame(gpa_of(bp))[0x123], original(bp)) << "the guest reads its own byte";
	EXPECT_EQ(invepts(), before) << "the violation itself flushed this CPU's mapping";
	EXPECT_FALSE(mtf_armed());
	// Back to the execute view on a fetch.
	EXPECT_EQ(violation(gpa_of(bp), kQualFetch | kQualWasR), VT_HOOK_HANDLED);
	EXPECT_EQ(leaf(gpa_of(bp)) & kEptRWX, kEptX);
}

// The kernel patches text (text_poke through its alias, from code on
// another page) on a page with a breakpoint. Another CPU may still cache
// the execute view, which maps the shadow frame: the write must reach that
// frame before the guest runs on, with no fetch on this page to resync it.
TEST_F(SplitView, AWriteIsSteppedOnTheOriginalAndReachesTheShadowAtOnce)
{
	start();
	ASSERT_EQ(vt_bp_insert(bp, gpa_of(bp)), 0);
	const uint64_t shadow = leaf(gpa_of(bp)) & kEptAddr;	// what a stale CPU keeps running
	cpu().vmcs[GUEST_RIP] = kKernelBase + 40 * kPage;	// the writer runs elsewhere
	ASSERT_EQ(violation(gpa_of(bp) + 0x10, kQualWrite | kQualWasX), VT_HOOK_HANDLED);
	EXPECT_EQ(cpu_leaf(gpa_of(bp)), identity(gpa_of(bp))) << "the original frame, for one instruction";
	EXPECT_TRUE(mtf_armed());
	// The write lands on the original, even on the breakpoint's own byte.
	ram[3 * kPage + 0x10] = 0x0f;
	ram[3 * kPage + 0x123] = 0xe8;
	EXPECT_EQ(mtf(), VT_HOOK_HANDLED);
	EXPECT_FALSE(mtf_armed());
	EXPECT_TRUE(on_shared_tables());
	EXPECT_EQ(leaf(gpa_of(bp)) & kEptRWX, kEptX) << "execute view again";
	EXPECT_EQ(leaf(gpa_of(bp)) & kEptAddr, shadow) << "the same shadow frame, re-copied in place";
	const uint8_t *frame = mapped_frame(gpa_of(bp));
	EXPECT_EQ(frame[0x10], 0x0f) << "the new byte runs, on this CPU and on any that cached the view";
	EXPECT_EQ(frame[0x123], 0xcc) << "the breakpoint is re-applied";
	EXPECT_EQ(ram[3 * kPage + 0x123], 0xe8);
	// From the data view (after a read) a write is stepped the same way.
	ASSERT_EQ(violation(gpa_of(bp) + 0x400, kQualRead | kQualWasX), VT_HOOK_HANDLED);
	ASSERT_EQ(violation(gpa_of(bp) + 0x11, kQualWrite | kQualWasR), VT_HOOK_HANDLED);
	EXPECT_TRUE(mtf_armed());
	ram[3 * kPage + 0x11] = 0x1f;
	EXPECT_EQ(mtf(), VT_HOOK_HANDLED);
	EXPECT_EQ(frame[0x11], 0x1f);
	vt_hooks_stats st{};
	vt_hooks_get_stats(&st);
	EXPECT_EQ(st.text_writes, 2u);
}

// While a CPU steps an instruction on a split page's original frame (RWX),
// every other CPU must keep running the page's 0xCC bytes: one that
// fetched the original frame would cache it, and INVEPT reaches only the
// CPU that runs it (SDM 3C 29.4.3). The step runs in the stepping CPU's own
// view of the EPT; the tables the others walk never change.
TEST_F(SplitView, AStepRunsTheOriginalInItsCpusOwnViewAlone)
{
	start();
	ASSERT_EQ(vt_bp_insert(bp, gpa_of(bp)), 0);
	vt_hooks_on_resume(&vcpu);	// this CPU, standing in for another, in step with the views
	const uint64_t shared = leaf(gpa_of(bp));
	cpu().vmcs[GUEST_RIP] = kKernelBase + 40 * kPage;
	ASSERT_EQ(violation(gpa_of(bp) + 0x10, kQualWrite | kQualWasX), VT_HOOK_HANDLED);
	ASSERT_FALSE(on_shared_tables()) << "the stepping CPU walks its own PML4";
	EXPECT_EQ(cpu().vmcs[EPT_POINTER] & 0xfff, hv.ept.eptp & 0xfff) << "same memory type, walk and A/D";
	EXPECT_EQ(cpu_leaf(gpa_of(bp)), identity(gpa_of(bp)));
	EXPECT_EQ(leaf(gpa_of(bp)), shared) << "every other CPU: the shadow, execute-only";
	EXPECT_EQ(mapped_frame(gpa_of(bp))[0x123], 0xcc);
	for (uint64_t p = 0; p < kRamPages; p++) {
		if (kRamGpa + p * kPage == page())
			continue;
		ASSERT_EQ(cpu_leaf(kRamGpa + p * kPage), leaf(kRamGpa + p * kPage)) << p;
	}
	ASSERT_FALSE(cpu().invepts.empty());
	EXPECT_EQ(cpu().invepts.back().second, cpu().vmcs[EPT_POINTER])
		<< "the view's tables are reused: what this CPU cached of them goes";
	ASSERT_EQ(mtf(), VT_HOOK_HANDLED);
	EXPECT_TRUE(on_shared_tables());
	const size_t before = invepts();
	vt_hooks_on_resume(&vcpu);
	EXPECT_EQ(invepts(), before) << "no CPU cached the original frame: none needs a flush";
}

// What the shared tables change while a CPU steps (a flip it takes in the
// middle of its instruction, a breakpoint another CPU plants) reaches the
// stepping CPU's view, which holds copies of them: else it would fault on
// the page forever.
TEST_F(SplitView, ChangesToTheSharedTablesMidStepReachTheStepsView)
{
	start();
	const uint64_t next = bp + kPage;	// its own split page, under the same PT
	ASSERT_EQ(vt_bp_insert(bp, gpa_of(bp)), 0);
	ASSERT_EQ(vt_bp_insert(next, gpa_of(next)), 0);
	vt_hooks_on_resume(&vcpu);
	cpu().vmcs[GUEST_RIP] = kKernelBase + 40 * kPage;
	ASSERT_EQ(violation(gpa_of(bp) + 0x10, kQualWrite | kQualWasX), VT_HOOK_HANDLED);
	// The same instruction reads the next page: a flip to its data view.
	ASSERT_EQ(violation(gpa_of(next), kQualRead | kQualWasX), VT_HOOK_HANDLED);
	EXPECT_EQ(leaf(gpa_of(next)) & kEptRWX, kEptR);
	EXPECT_EQ(cpu_leaf(gpa_of(next)), leaf(gpa_of(next))) << "the flip reached the view";
	EXPECT_EQ(cpu_leaf(gpa_of(bp)), identity(gpa_of(bp))) << "and the step's page is still lifted";
	// Another CPU plants a breakpoint on a third page meanwhile.
	const uint64_t third = bp + 2 * kPage;
	ASSERT_EQ(vt_bp_insert(third, gpa_of(third)), 0);
	vt_hooks_on_resume(&vcpu);
	EXPECT_EQ(cpu_leaf(gpa_of(third)) & kEptRWX, kEptX) << "the new breakpoint holds on the stepping CPU";
	EXPECT_EQ(cpu_leaf(gpa_of(bp)), identity(gpa_of(bp)));
	ASSERT_EQ(mtf(), VT_HOOK_HANDLED);
	EXPECT_TRUE(on_shared_tables());
}

// Most steps are a probe's, on one page again and again: the next step of
// that page walks the view the last one built, unless a hook was inserted
// or removed since (the copies could then allow what the shared tables no
// longer do). A flip of another split page meanwhile is left in the copy:
// its fault syncs the view.
TEST_F(SplitView, TheNextStepOfThePageReusesItsViewUntilAHookChanges)
{
	start();
	const uint64_t next = bp + kPage;
	ASSERT_EQ(vt_bp_insert(bp, gpa_of(bp)), 0);
	ASSERT_EQ(vt_bp_insert(next, gpa_of(next)), 0);
	vt_hooks_on_resume(&vcpu);
	cpu().vmcs[GUEST_RIP] = kKernelBase + 40 * kPage;
	auto step_write = [&] {
		EXPECT_EQ(violation(gpa_of(bp) + 0x10, kQualWrite | kQualWasX), VT_HOOK_HANDLED);
		EXPECT_EQ(cpu_leaf(gpa_of(bp)), identity(gpa_of(bp)));
	};
	step_write();
	const uint64_t view = cpu().vmcs[EPT_POINTER];
	ASSERT_EQ(mtf(), VT_HOOK_HANDLED);
	size_t before = invepts();
	step_write();
	EXPECT_EQ(cpu().vmcs[EPT_POINTER], view);
	EXPECT_EQ(invepts(), before) << "the same view, nothing copied or flushed";
	// The next page flips to its data view while the step runs elsewhere...
	ASSERT_EQ(mtf(), VT_HOOK_HANDLED);
	ASSERT_EQ(violation(gpa_of(next), kQualRead | kQualWasX), VT_HOOK_HANDLED);
	step_write();
	EXPECT_EQ(cpu_leaf(gpa_of(next)) & kEptRWX, kEptX) << "the kept copy: the execute view, no read";
	// ...and the step's read of it faults and syncs the view.
	ASSERT_EQ(violation(gpa_of(next), kQualRead | kQualWasX), VT_HOOK_HANDLED);
	EXPECT_EQ(cpu_leaf(gpa_of(next)), leaf(gpa_of(next)));
	ASSERT_EQ(mtf(), VT_HOOK_HANDLED);
	// A breakpoint planted meanwhile: the next step rebuilds the view with it.
	const uint64_t third = bp + 2 * kPage;
	ASSERT_EQ(vt_bp_insert(third, gpa_of(third)), 0);
	vt_hooks_on_resume(&vcpu);
	before = invepts();
	step_write();
	EXPECT_EQ(invepts(), before + 1) << "rebuilt and flushed";
	EXPECT_EQ(cpu_leaf(gpa_of(third)) & kEptRWX, kEptX) << "the new breakpoint holds in the view";
	ASSERT_EQ(mtf(), VT_HOOK_HANDLED);
	vt_hooks_stats st{};
	vt_hooks_get_stats(&st);
	EXPECT_EQ(st.step_views_reused, 2u);
}

TEST_F(SplitView, StaleViolationOnlyInveptsLocally)
{
	start();
	ASSERT_EQ(vt_bp_insert(bp, gpa_of(bp)), 0);
	uint64_t e = leaf(gpa_of(bp));
	size_t before = invepts();
	// Another CPU's stale data-view translation: this fetch is already allowed.
	EXPECT_EQ(violation(gpa_of(bp), kQualFetch | kQualWasR | kQualWasW), VT_HOOK_HANDLED);
	EXPECT_EQ(leaf(gpa_of(bp)), e);
	EXPECT_EQ(invepts(), before + 1);
}

TEST_F(SplitView, AViolationOnAnotherPageIsAStaleTranslationRetried)
{
	start();
	ASSERT_EQ(vt_bp_insert(bp, gpa_of(bp)), 0);
	size_t before = invepts();
	// Its entry allows the read (SDM 3C 29.4.3: a translation cached before it did).
	EXPECT_EQ(violation(page() + kPage, kQualRead), VT_HOOK_HANDLED);
	EXPECT_EQ(invepts(), before + 1) << "flushed on this CPU, the access retried";
	EXPECT_EQ(leaf(page() + kPage) & kEptRWX, kEptRWX) << "nothing changed there";
}

TEST_F(SplitView, Int3RoutedByAddress)
{
	start();
	ASSERT_EQ(vt_bp_insert(bp, gpa_of(bp)), 0);
	cpu().vmcs[GUEST_RIP] = bp;	// a software exception exits with RIP at the INT3
	EXPECT_EQ(vt_hooks_on_breakpoint(&vcpu, &exit, &stop), VT_HOOK_STOP);
	EXPECT_EQ(stop.reason, VT_STOP_SWBREAK);
	EXPECT_EQ(stop.cpu, 0u);

	// The kernel's own int3 (text_poke, kprobes) is in its memory: not ours.
	uint64_t own = kKernelBase + 5 * kPage + 7;
	ram[own - kKernelBase] = 0xcc;
	cpu().vmcs[GUEST_RIP] = own;
	EXPECT_EQ(vt_hooks_on_breakpoint(&vcpu, &exit, &stop), VT_HOOK_NOT_MINE);
}

TEST_F(SplitView, Int3FromARemovedBreakpointIsRetried)
{
	start();
	ASSERT_EQ(vt_bp_insert(bp, gpa_of(bp)), 0);
	ASSERT_EQ(vt_bp_remove(bp), 0);
	// A CPU still executing the old shadow: the guest's memory has no int3 there.
	cpu().vmcs[GUEST_RIP] = bp;
	size_t before = invepts();
	EXPECT_EQ(vt_hooks_on_breakpoint(&vcpu, &exit, &stop), VT_HOOK_HANDLED);
	EXPECT_EQ(invepts(), before + 1);
	EXPECT_EQ(cpu().vmcs[GUEST_RIP], bp) << "the instruction is retried";
}

TEST_F(SplitView, ManyBreakpointsShareOneShadow)
{
	start(1);
	for (uint64_t off = 0; off < kPage; off += 64)
		ASSERT_EQ(vt_bp_insert(kKernelBase + 3 * kPage + off, page() + off), 0) << off;
	const uint8_t *frame = mapped_frame(page());
	for (uint64_t off = 0; off < kPage; off++)
		EXPECT_EQ(frame[off], off % 64 ? ram[3 * kPage + off] : 0xcc) << off;
	vt_hooks_stats s{};
	vt_hooks_get_stats(&s);
	EXPECT_EQ(s.bps, 64u);
	EXPECT_EQ(s.bp_pages, 1u);
}

TEST_F(SplitView, InsertAndRemoveAreIdempotent)
{
	start();
	ASSERT_EQ(vt_bp_insert(bp, gpa_of(bp)), 0);
	ASSERT_EQ(vt_bp_insert(bp, gpa_of(bp)), 0);
	ASSERT_EQ(vt_bp_remove(bp), 0);
	EXPECT_EQ(leaf(gpa_of(bp)), identity(gpa_of(bp))) << "one remove undoes a repeated insert";
	EXPECT_EQ(vt_bp_remove(bp), 0);
}

TEST_F(SplitView, RemoveRestoresBytesThenIdentity)
{
	start();
	uint64_t bp2 = bp + 0x40;
	ASSERT_EQ(vt_bp_insert(bp, gpa_of(bp)), 0);
	ASSERT_EQ(vt_bp_insert(bp2, gpa_of(bp2)), 0);
	ASSERT_EQ(vt_bp_remove(bp), 0);
	const uint8_t *frame = mapped_frame(gpa_of(bp));
	EXPECT_EQ(leaf(gpa_of(bp)) & kEptRWX, kEptX) << "still one breakpoint on the page";
	EXPECT_EQ(frame[0x123], original(bp));
	EXPECT_EQ(frame[0x163], 0xcc);
	ASSERT_EQ(vt_bp_remove(bp2), 0);
	EXPECT_EQ(leaf(gpa_of(bp)), identity(gpa_of(bp)));
	vt_hooks_on_resume(&vcpu);
	EXPECT_FALSE(cpu().vmcs[EXCEPTION_BITMAP] & (1u << 3)) << "no Z0 left: no #BP exits";
}

TEST_F(SplitView, ShadowPoolExhaustion)
{
	start(2);
	ASSERT_EQ(vt_bp_insert(kKernelBase + 1 * kPage, kRamGpa + 1 * kPage), 0);
	ASSERT_EQ(vt_bp_insert(kKernelBase + 2 * kPage, kRamGpa + 2 * kPage), 0);
	EXPECT_EQ(vt_bp_insert(kKernelBase + 3 * kPage, kRamGpa + 3 * kPage), -VT_ENOMEM);
	EXPECT_EQ(leaf(kRamGpa + 3 * kPage), identity(kRamGpa + 3 * kPage));
	// A second breakpoint on a page already split needs no new shadow.
	EXPECT_EQ(vt_bp_insert(kKernelBase + 2 * kPage + 9, kRamGpa + 2 * kPage + 9), 0);
	// Removing frees a shadow for another page.
	ASSERT_EQ(vt_bp_remove(kKernelBase + 1 * kPage), 0);
	EXPECT_EQ(vt_bp_insert(kKernelBase + 3 * kPage, kRamGpa + 3 * kPage), 0);
}

TEST_F(SplitView, NoShadowPagesNoBreakpoints)
{
	start(0);
	EXPECT_EQ(vt_bp_insert(bp, gpa_of(bp)), -VT_ENOSPC);
}

TEST_F(SplitView, DebuggerWritesKeepTheShadowCoherent)
{
	start();
	ASSERT_EQ(vt_bp_insert(bp, gpa_of(bp)), 0);
	ram[3 * kPage + 0x122] = 0x55;	// M packet through the hypervisor's mapping
	ram[3 * kPage + 0x123] = 0x48;
	vt_hooks_text_written(gpa_of(bp) - 1, 2);
	const uint8_t *frame = mapped_frame(gpa_of(bp));
	EXPECT_EQ(frame[0x122], 0x55);
	EXPECT_EQ(frame[0x123], 0xcc);
}

TEST_F(SplitView, FetchAndReadOfOnePageIsSteppedOnTheOriginal)
{
	start();
	ASSERT_EQ(vt_bp_insert(bp, gpa_of(bp)), 0);
	uint64_t insn = bp + 0x20;	// e.g. mov rax, [rip + x] with x on the same page
	cpu().vmcs[GUEST_RIP] = insn;
	ASSERT_EQ(violation(gpa_of(bp), kQualRead | kQualWasX), VT_HOOK_HANDLED);
	ASSERT_EQ(violation(gpa_of(insn), kQualFetch | kQualWasR | kQualWasW), VT_HOOK_HANDLED);
	// The same instruction reads the page again: it cannot have both views.
	ASSERT_EQ(violation(gpa_of(bp) + 0x400, kQualRead | kQualWasX), VT_HOOK_HANDLED);
	EXPECT_EQ(cpu_leaf(gpa_of(bp)), identity(gpa_of(bp))) << "original frame, RWX, for one insn";
	EXPECT_EQ(leaf(gpa_of(bp)) & kEptRWX, kEptX) << "on this CPU alone";
	EXPECT_TRUE(mtf_armed());
	EXPECT_TRUE(cpu().vmcs[GUEST_INTERRUPTIBILITY_INFO] & GUEST_INTR_STATE_STI);
	EXPECT_EQ(mtf(), VT_HOOK_HANDLED);
	EXPECT_FALSE(mtf_armed());
	EXPECT_EQ(leaf(gpa_of(bp)) & kEptRWX, kEptX) << "execute view again";
	EXPECT_EQ(mapped_frame(gpa_of(bp))[0x123], 0xcc);
}

TEST_F(SplitView, WatchAndBreakpointCannotShareAPage)
{
	start();
	ASSERT_EQ(vt_bp_insert(bp, gpa_of(bp)), 0);
	EXPECT_EQ(vt_watch_insert(VT_POINT_WRITE, bp + 0x200, 8, 0), -VT_EBUSY);
	EXPECT_EQ(leaf(gpa_of(bp)) & kEptRWX, kEptX);
	uint64_t var = kKernelBase + 9 * kPage;
	ASSERT_EQ(vt_watch_insert(VT_POINT_WRITE, var, 8, 0), 0);
	EXPECT_EQ(vt_bp_insert(var + 16, gpa_of(var + 16)), -VT_EBUSY);
}

TEST_F(SplitView, RemoveAllLeavesIdentity)
{
	start();
	for (uint64_t p = 1; p < 6; p++)
		ASSERT_EQ(vt_bp_insert(kKernelBase + p * kPage + p, kRamGpa + p * kPage + p), 0);
	vt_hooks_remove_all();
	for (uint64_t p = 1; p < 6; p++)
		EXPECT_EQ(leaf(kRamGpa + p * kPage), identity(kRamGpa + p * kPage)) << p;
	size_t before = invepts();
	vt_hooks_on_resume(&vcpu);
	EXPECT_EQ(invepts(), before + 1);
	EXPECT_FALSE(cpu().vmcs[EXCEPTION_BITMAP] & (1u << 3));
	cpu().vmcs[GUEST_RIP] = kKernelBase + kPage + 1;
	ram[kPage + 1] = 0xcc;	// only the guest's own int3 can exit now
	EXPECT_EQ(vt_hooks_on_breakpoint(&vcpu, &exit, &stop), VT_HOOK_NOT_MINE);
}

// "monitor hooks" audits the tables the CPU walks, not the hooks' records:
// after remove_all (what D does) no leaf may be left off identity.
TEST_F(SplitView, EptAuditSeesEveryHookAndNoneAfterRemoveAll)
{
	start();
	struct vt_ept_audit audit{};
	vt_ept_audit_identity(&hv.ept, &audit);
	const u64 small_before = audit.small_leaves;
	ASSERT_EQ(audit.off_identity, 0u);
	for (uint64_t p = 1; p < 4; p++)
		ASSERT_EQ(vt_bp_insert(kKernelBase + p * kPage + p, kRamGpa + p * kPage + p), 0);
	ASSERT_EQ(vt_watch_insert(VT_POINT_WRITE, kKernelBase + 9 * kPage, 8, 0), 0);
	ASSERT_EQ(vt_watch_insert(VT_POINT_ACCESS, kKernelBase + 10 * kPage, 8, 0), 0);
	vt_ept_audit_identity(&hv.ept, &audit);
	EXPECT_EQ(audit.off_identity, 5u) << "3 execute-only views, a read-only and a no-access page";
	vt_hooks_remove_all();
	vt_ept_audit_identity(&hv.ept, &audit);
	EXPECT_EQ(audit.off_identity, 0u);
	EXPECT_GE(audit.small_leaves, small_before) << "a split made for a hook stays, as identity";
}

TEST_F(SplitView, FiniPutsIdentityBackBeforeFreeingShadows)
{
	start();
	ASSERT_EQ(vt_bp_insert(bp, gpa_of(bp)), 0);
	ASSERT_EQ(vt_watch_insert(VT_POINT_WRITE, kKernelBase + 50 * kPage, 8, 0), 0);
	vt_hooks_fini();
	hooks_up = false;
	EXPECT_EQ(leaf(gpa_of(bp)), identity(gpa_of(bp)));
	EXPECT_EQ(leaf(kRamGpa + 50 * kPage), identity(kRamGpa + 50 * kPage));
}

TEST_F(SplitView, NothingBeforeInit)
{
	EXPECT_EQ(vt_bp_insert(bp, gpa_of(bp)), -VT_ENODEV);
	EXPECT_EQ(vt_watch_insert(VT_POINT_WRITE, bp, 8, 0), -VT_ENODEV);
	virtualize();
	exit.vcpu = &vcpu;
	exit.regs = &regs;
	vt_hooks_on_resume(&vcpu);
	EXPECT_EQ(vt_hooks_on_ept_violation(&vcpu, &exit, kRamGpa, kQualRead, &stop),
		  VT_HOOK_NOT_MINE);
	EXPECT_EQ(vt_hooks_on_mtf(&vcpu, &exit, &stop), VT_HOOK_NOT_MINE);
	EXPECT_EQ(vt_hooks_on_breakpoint(&vcpu, &exit, &stop), VT_HOOK_NOT_MINE);
}

}  // namespace
