// Crash guards (hypervisor/debug/ept_bp.c, hooks.h): hidden breakpoints on
// the kernel's panic and oops paths that stop the machine as a crash,
// survive the debugger's detach, and disarm themselves when hit.
#include "hooks_fixture.hpp"

using namespace vtice::fake;

namespace {

class CrashGuard : public HooksFixture {
protected:
	const uint64_t panic_fn = kKernelBase + 7 * kPage + 0x40;
	const uint64_t user_bp = kKernelBase + 8 * kPage + 0x10;
};

TEST_F(CrashGuard, HitStopsAsACrashAndDisarms)
{
	start();
	ASSERT_EQ(vt_bp_guard(panic_fn, gpa_of(panic_fn)), 0);
	EXPECT_EQ(mapped_frame(gpa_of(panic_fn))[0x40], 0xcc);
	cpu().vmcs[GUEST_RIP] = panic_fn;
	EXPECT_EQ(vt_hooks_on_breakpoint(&vcpu, &exit, &stop), VT_HOOK_STOP);
	EXPECT_EQ(stop.reason, VT_STOP_CRASH);
	// One-shot: the CPU resumes through the kernel's own byte.
	EXPECT_EQ(leaf(gpa_of(panic_fn)), identity(gpa_of(panic_fn)));
	struct vt_hooks_stats s;
	vt_hooks_get_stats(&s);
	EXPECT_EQ(s.guards, 0u);
	EXPECT_EQ(s.guard_hits, 1u);
}

TEST_F(CrashGuard, DetachKeepsGuardsAndRemovesTheDebuggers)
{
	start();
	ASSERT_EQ(vt_bp_guard(panic_fn, gpa_of(panic_fn)), 0);
	ASSERT_EQ(vt_bp_insert(user_bp, gpa_of(user_bp)), 0);
	vt_hooks_remove_all();
	EXPECT_EQ(leaf(gpa_of(user_bp)), identity(gpa_of(user_bp)));
	EXPECT_NE(leaf(gpa_of(panic_fn)), identity(gpa_of(panic_fn)));
	struct vt_hooks_stats s;
	vt_hooks_get_stats(&s);
	EXPECT_EQ(s.bps, 0u);
	EXPECT_EQ(s.bp_pages, 0u);
	EXPECT_EQ(s.guards, 1u);
	EXPECT_EQ(s.guard_pages, 1u);
	struct vt_ept_audit audit{};
	vt_ept_audit_identity(&hv.ept, &audit);
	EXPECT_EQ(audit.off_identity, 1u) << "only the guard's execute view";
	vt_hooks_on_resume(&vcpu);
	EXPECT_TRUE(cpu().vmcs[EXCEPTION_BITMAP] & (1u << 3)) << "#BP still exits for the guard";
}

TEST_F(CrashGuard, DebuggerBreakpointOnAGuardedAddress)
{
	start();
	ASSERT_EQ(vt_bp_guard(panic_fn, gpa_of(panic_fn)), 0);
	ASSERT_EQ(vt_bp_insert(panic_fn, gpa_of(panic_fn)), 0);
	cpu().vmcs[GUEST_RIP] = panic_fn;
	EXPECT_EQ(vt_hooks_on_breakpoint(&vcpu, &exit, &stop), VT_HOOK_STOP);
	EXPECT_EQ(stop.reason, VT_STOP_SWBREAK) << "the debugger's own breakpoint reports first";
	// z0 removes the debugger's breakpoint only: the guard's 0xCC stays.
	ASSERT_EQ(vt_bp_remove(panic_fn), 0);
	EXPECT_EQ(mapped_frame(gpa_of(panic_fn))[0x40], 0xcc);
	EXPECT_EQ(vt_hooks_on_breakpoint(&vcpu, &exit, &stop), VT_HOOK_STOP);
	EXPECT_EQ(stop.reason, VT_STOP_CRASH);
}

}  // namespace
