// The profiler's samples as the hypervisor records them (include/uapi/vtice/
// records.h: a PROFILE_SAMPLE record, then the SYSCALL_DATA records its flags
// count: REGS, TASK, COMM and the kernel stack's STACK records), decoded.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "syscall_events.hpp"

extern "C" {
#include <vtice/records.h>
}

namespace vtice::trace {

struct ProfileSample {
	uint16_t cpu = 0;
	uint64_t tsc = 0;
	uint64_t rip = 0, rsp = 0, rbp = 0;
	bool user = false;	// the CPU ran at CPL 3
	bool halted = false;	// ...or sat in HLT
	bool has_task = false;
	uint32_t pid = 0, tgid = 0;
	std::string comm;
	std::vector<uint8_t> stack;	// the kernel stack from rsp up, as copied
};

struct ProfileDecodeStats {
	uint64_t samples = 0;
	uint64_t lost = 0;	// records the rings dropped (LOST records)
	uint64_t malformed = 0;	// groups cut short or with unknown DATA kinds
};

// One CPU's records in order (a ring never splits a group). Records of
// other types are skipped; a group whose DATA records are missing or
// unknown is counted as malformed and dropped.
std::vector<ProfileSample> decode_profile_records(std::span<const vtice_record> recs, ProfileDecodeStats &stats);

// A probe hit's copied stack as a sample's, to unwind the same way: the
// function's entry is where the CPU was.
ProfileSample probe_hit_sample(const SyscallEvent &hit);

}  // namespace vtice::trace
