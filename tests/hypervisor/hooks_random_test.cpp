// Random interleavings of inserts, removes, violations and MTF exits on two
// CPUs, checked against invariants from the SDM and the hooks' contract:
//  - no leaf is ever R=0 W=1 (an EPT misconfiguration, SDM 3C 29.3.3.1);
//  - in the tables every CPU walks, at every moment, steps pending or not
//    (a step lifts a page in the stepping CPU's own view alone), a page with
//    breakpoints shows either the execute view (X only, a copy with 0xCC at
//    each breakpoint) or the data view (R only, the original frame); a
//    watched page has exactly the rights its ranges leave; every other page
//    has its identity entry;
//  - remove_all puts every page back to identity.
#include <cstdio>
#include <random>
#include <set>

#include "hooks_fixture.hpp"

using namespace vtice::fake;

namespace {

constexpr uint64_t kPages = 24;	// pages 0..23 of the guest RAM take part

struct Model {
	std::map<uint64_t, std::set<uint64_t>> bps;		// page -> offsets
	std::map<uint64_t, std::map<vt_dbg_point, int>> watches;	// page -> type -> count
	std::set<std::tuple<int, uint64_t, uint64_t>> ranges;	// (type, gva, len)
};

class RandomHooks : public HooksFixture {
protected:
	vt_vcpu cpu1{};
	vt_exit exit1{};
	std::mt19937_64 rng{12345};
	Model m;
	int pending[2] = {0, 0};	// violations since that CPU's last MTF exit

	uint64_t pick(uint64_t n) { return rng() % n; }

	void check_leaf_is_sane(uint64_t page)
	{
		uint64_t e = leaf(kRamGpa + page * kPage);
		ASSERT_FALSE((e & kEptW) && !(e & kEptR)) << "misconfigured leaf, page " << page;
	}

	// bytes: the shadow's bytes too (the costly part, so not at every step).
	void check_settled(uint64_t page, bool bytes = true)
	{
		uint64_t gpa = kRamGpa + page * kPage;
		uint64_t e = leaf(gpa);
		if (m.bps.count(page)) {
			if ((e & kEptRWX) == kEptX) {
				const uint8_t *f = mapped_frame(gpa);
				ASSERT_NE(e & kEptAddr, gpa);
				for (uint64_t off = 0; bytes && off < kPage; off++)
					ASSERT_EQ(f[off], m.bps[page].count(off) ? 0xcc : ram[page * kPage + off])
						<< "page " << page << " offset " << off;
			} else {
				ASSERT_EQ(e & kEptRWX, kEptR) << "page " << page << ": the data view is read-only";
				ASSERT_EQ(e & kEptAddr, gpa);
			}
			return;
		}
		if (m.watches.count(page)) {
			bool need_r = false;
			for (auto &[type, n] : m.watches[page])
				need_r |= n > 0 && type != VT_POINT_WRITE;
			uint64_t rights = need_r ? kEptX : kEptR | kEptX;
			ASSERT_EQ(e, (identity(gpa) & ~kEptRWX) | rights) << "page " << page;
			return;
		}
		ASSERT_TRUE(maps_identity(gpa)) << "page " << page << " leaf " << std::hex << e;
	}

	// Unhooked: RWX, write-back, frame == gpa, through a 4 KiB leaf or a
	// large one not yet split (bit 7; its frame is the large page's base).
	bool maps_identity(uint64_t gpa)
	{
		int level = 0;
		uint64_t e = leaf(gpa, &level);
		uint64_t size = 1ull << (12 + 9 * (level - 1));
		return (e & kEptRWX) == kEptRWX && (e & (7u << 3)) == kEptTypeWB &&
		       (level == 1 || (e & (1u << 7))) &&
		       (e & kEptAddr & ~(size - 1)) == (gpa & ~(size - 1));
	}

	void drain()
	{
		mtf_on(false);
		mtf_on(true);
	}

	void insert_bp()
	{
		uint64_t page = pick(kPages), off = pick(kPage);
		int ret = vt_bp_insert(kKernelBase + page * kPage + off, kRamGpa + page * kPage + off);
		bool watched = m.watches.count(page) != 0;
		ASSERT_EQ(ret, watched ? -VT_EBUSY : 0) << "page " << page;
		if (!ret)
			m.bps[page].insert(off);
	}

	void remove_bp()
	{
		if (m.bps.empty())
			return;
		auto it = std::next(m.bps.begin(), pick(m.bps.size()));
		uint64_t page = it->first, off = *std::next(it->second.begin(), pick(it->second.size()));
		ASSERT_EQ(vt_bp_remove(kKernelBase + page * kPage + off), 0);
		it->second.erase(off);
		if (it->second.empty())
			m.bps.erase(it);
	}

	void insert_watch()
	{
		auto type = static_cast<vt_dbg_point>(2 + pick(3));
		uint64_t page = pick(kPages), off = pick(kPage), len = 1 + pick(2 * kPage);
		if (page * kPage + off + len > kPages * kPage)
			len = kPages * kPage - page * kPage - off;
		uint64_t gva = kKernelBase + page * kPage + off;
		if (m.ranges.count({type, gva, len}))
			return;
		uint64_t first = page, last = (page * kPage + off + len - 1) / kPage;
		bool busy = false;
		for (uint64_t p = first; p <= last; p++)
			busy |= m.bps.count(p) != 0;
		ASSERT_EQ(vt_watch_insert(type, gva, len, 0), busy ? -VT_EBUSY : 0);
		if (busy)
			return;
		m.ranges.insert({type, gva, len});
		for (uint64_t p = first; p <= last; p++)
			m.watches[p][type]++;
	}

	void remove_watch()
	{
		if (m.ranges.empty())
			return;
		auto r = *std::next(m.ranges.begin(), pick(m.ranges.size()));
		auto [type, gva, len] = r;
		ASSERT_EQ(vt_watch_remove(static_cast<vt_dbg_point>(type), gva, len), 0);
		m.ranges.erase(r);
		uint64_t first = (gva - kKernelBase) / kPage, last = (gva - kKernelBase + len - 1) / kPage;
		for (uint64_t p = first; p <= last; p++) {
			if (--m.watches[p][static_cast<vt_dbg_point>(type)] == 0)
				m.watches[p].erase(static_cast<vt_dbg_point>(type));
			if (m.watches[p].empty())
				m.watches.erase(p);
		}
	}

	void guest_access()
	{
		static const uint64_t kinds[] = {kQualRead, kQualWrite, kQualFetch, kQualRead | kQualWrite};
		uint64_t page = pick(kPages), off = pick(kPage), kind = kinds[pick(4)];
		uint64_t gpa = kRamGpa + page * kPage + off;
		uint64_t e = leaf(gpa);
		bool denied = ((kind & kQualRead) && !(e & kEptR)) || ((kind & kQualWrite) && !(e & kEptW)) ||
			      ((kind & kQualFetch) && !(e & kEptX));
		if (!denied && pick(4))
			return;		// no violation: the access was allowed (mostly)
		bool on_cpu1 = pick(2);
		// One instruction touches a few pages at most before its MTF exit.
		if (pending[on_cpu1] == 4)
			mtf_on(on_cpu1);
		if (pick(3))	// else the same instruction again (fetch, then its data access)
			cpu().vmcs[GUEST_RIP] = kKernelBase + pick(kPages) * kPage + pick(16);
		cpu().vmcs[GUEST_PHYSICAL_ADDRESS] = gpa;
		cpu().vmcs[GUEST_LINEAR_ADDRESS] = kKernelBase + page * kPage + off;
		uint64_t qual = kind | ((e & kEptRWX) << 3) | kQualGlaValid | kQualGlaTranslated;
		if (!denied && !pick(2))	// a stale translation elsewhere
			qual &= ~(kQualGlaValid | kQualGlaTranslated);
		vt_exit &x = on_cpu1 ? exit1 : exit;
		x.qual = qual;
		auto r = vt_hooks_on_ept_violation(on_cpu1 ? &cpu1 : &vcpu, &x, gpa, qual, &stop);
		bool hooked = m.bps.count(page) || m.watches.count(page);
		// An allowed access elsewhere is a stale translation: flushed and retried.
		ASSERT_EQ(r != VT_HOOK_NOT_MINE, hooked || !denied) << "page " << page;
		ASSERT_NE(r, VT_HOOK_STOP) << "violations never stop by themselves";
		pending[on_cpu1] += hooked && r == VT_HOOK_HANDLED;
		if (pick(4))
			mtf_on(on_cpu1);
	}

	void mtf_on(bool on_cpu1)
	{
		vt_hooks_on_mtf(on_cpu1 ? &cpu1 : &vcpu, on_cpu1 ? &exit1 : &exit, &stop);
		pending[on_cpu1] = 0;
	}
};

TEST_F(RandomHooks, InvariantsHoldUnderRandomInterleavings)
{
	start(32);
	cpu1.hv = &hv;
	cpu1.cpu = 1;
	exit1.vcpu = &cpu1;
	exit1.regs = &regs;
	for (int step = 0; step < 20000; step++) {
		switch (pick(10)) {
		case 0: insert_bp(); break;
		case 1: remove_bp(); break;
		case 2: insert_watch(); break;
		case 3: remove_watch(); break;
		case 4: mtf_on(pick(2)); break;
		default: guest_access(); break;
		}
		if (HasFatalFailure())
			return;
		for (uint64_t p = 0; p < kPages; p++) {
			check_leaf_is_sane(p);
			check_settled(p, step % 50 == 0);
		}
		if (HasFatalFailure())
			return;
		if (step % 50 == 0)
			drain();
	}
	// The walk reached every path it is meant to exercise.
	vt_hooks_stats st{};
	vt_hooks_get_stats(&st);
	EXPECT_GT(st.exec_flips, 100u);
	EXPECT_GT(st.data_flips, 100u);
	EXPECT_GT(st.stale_invepts, 10u);
	EXPECT_GT(st.watch_steps, 100u);
	EXPECT_GT(st.watch_hits, 10u);
	EXPECT_GT(st.split_steps, 0u);
	EXPECT_GT(st.text_writes, 0u);
	std::printf("flips %llu/%llu stale %llu split steps %llu watch steps %llu hits %llu\n",
		    (unsigned long long)st.exec_flips, (unsigned long long)st.data_flips,
		    (unsigned long long)st.stale_invepts, (unsigned long long)st.split_steps,
		    (unsigned long long)st.watch_steps, (unsigned long long)st.watch_hits);
	vt_hooks_remove_all();
	drain();
	for (uint64_t p = 0; p < kPages; p++)
		EXPECT_TRUE(maps_identity(kRamGpa + p * kPage)) << p;
}

}  // namespace
