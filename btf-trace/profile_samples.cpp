// PROFILE_SAMPLE groups -> samples (profile_samples.hpp).
#include "profile_samples.hpp"

#include <cstring>

#include "record_groups.hpp"

namespace vtice::trace {

namespace {

bool apply_data(ProfileSample &s, const vtice_record &rec)
{
	switch (rec.flags) {
	case VTICE_SYSCALL_DATA_REGS:
		s.rbp = rec.u.raw[0];
		return true;
	case VTICE_SYSCALL_DATA_TASK:
		s.has_task = true;
		s.pid = static_cast<uint32_t>(rec.u.raw[0]);
		s.tgid = static_cast<uint32_t>(rec.u.raw[0] >> 32);
		return true;
	case VTICE_SYSCALL_DATA_COMM: {
		char comm[17] = {};
		std::memcpy(comm, rec.u.raw, 16);
		s.comm = comm;
		return true;
	}
	case VTICE_SYSCALL_DATA_STACK:
		append_stack_words(s.stack, rec);
		return !s.user;
	default:
		return false;
	}
}

ProfileSample head_sample(const vtice_record &rec)
{
	ProfileSample s;
	s.cpu = rec.cpu;
	s.tsc = rec.tsc;
	s.rip = rec.u.raw[0];
	s.rsp = rec.u.raw[1];
	s.user = rec.flags & VTICE_PROFILE_USER;
	s.halted = rec.flags & VTICE_PROFILE_HALTED;
	return s;
}

}  // namespace

std::vector<ProfileSample> decode_profile_records(std::span<const vtice_record> recs, ProfileDecodeStats &stats)
{
	std::vector<ProfileSample> out;
	size_t i = 0;
	while (i < recs.size()) {
		const vtice_record &rec = recs[i++];
		if (rec.type == VTICE_REC_LOST) {
			stats.lost += rec.u.lost.count;
			continue;
		}
		if (rec.type != VTICE_REC_PROFILE_SAMPLE)
			continue;
		ProfileSample s = head_sample(rec);
		size_t n = rec.flags & VTICE_PROFILE_COUNT_MASK;
		if (!read_group_data(recs, i, n, [&s](const vtice_record &d) { return apply_data(s, d); })) {
			stats.malformed++;
			continue;
		}
		stats.samples++;
		out.push_back(std::move(s));
	}
	return out;
}

ProfileSample probe_hit_sample(const SyscallEvent &hit)
{
	ProfileSample s;
	s.cpu = hit.cpu;
	s.tsc = hit.tsc;
	s.rip = hit.nr;
	s.rsp = hit.rsp;
	s.rbp = hit.rbp;
	s.stack = hit.stack;
	s.has_task = hit.has_task;
	s.pid = hit.pid;
	s.tgid = hit.tgid;
	s.comm = hit.comm;
	return s;
}

}  // namespace vtice::trace
