// Syscall record groups -> events -> calls -> lines (syscall_events.hpp).
#include "syscall_events.hpp"

#include <cstring>

#include "record_groups.hpp"

namespace vtice::trace {

namespace {

// A fetch program's VALUE record: each slot at most once, no unknown bits.
bool apply_value(SyscallEvent &ev, const vtice_record &rec)
{
	uint64_t slot = rec.u.raw[1] & ~uint64_t{VTICE_PROBE_VALUE_UNREADABLE};
	if (slot >= VTICE_PROBE_VALUES_MAX || (ev.values_seen & (1u << slot)))
		return false;
	ev.values_seen |= 1u << slot;
	ev.values[slot] = rec.u.raw[0];
	if (rec.u.raw[1] & VTICE_PROBE_VALUE_UNREADABLE)
		ev.values_unreadable |= 1u << slot;
	return true;
}

bool apply_data(SyscallEvent &ev, const vtice_record &rec)
{
	switch (rec.flags) {
	case VTICE_SYSCALL_DATA_ARGS12:
		ev.args[1] = rec.u.raw[0];
		ev.args[2] = rec.u.raw[1];
		return ev.enter || ev.probe_hit;
	case VTICE_SYSCALL_DATA_ARGS34:
		ev.args[3] = rec.u.raw[0];
		ev.args[4] = rec.u.raw[1];
		return ev.enter || ev.probe_hit;
	case VTICE_SYSCALL_DATA_ARG5:
		ev.args[5] = rec.u.raw[0];
		if (ev.probe_hit)
			ev.ret = rec.u.raw[1];	// RAX at the hit (records.h)
		return ev.enter || ev.probe_hit;
	case VTICE_SYSCALL_DATA_TASK:
		ev.has_task = true;
		ev.pid = static_cast<uint32_t>(rec.u.raw[0]);
		ev.tgid = static_cast<uint32_t>(rec.u.raw[0] >> 32);
		ev.task = rec.u.raw[1];
		return true;
	case VTICE_SYSCALL_DATA_COMM: {
		char comm[17] = {};
		std::memcpy(comm, rec.u.raw, 16);
		ev.comm = comm;
		return true;
	}
	case VTICE_SYSCALL_DATA_REGS:
		ev.rbp = rec.u.raw[0];
		ev.rsp = rec.u.raw[1];
		return ev.probe_hit;
	case VTICE_SYSCALL_DATA_STACK:
		append_stack_words(ev.stack, rec);
		return ev.probe_hit;
	case VTICE_SYSCALL_DATA_GPRS:
		if (!ev.probe_hit || ev.more_regs_seen == VTICE_GPRS_RECORDS)
			return false;
		ev.more_regs[2 * ev.more_regs_seen] = rec.u.raw[0];
		ev.more_regs[2 * ev.more_regs_seen++ + 1] = rec.u.raw[1];
		return true;
	case VTICE_SYSCALL_DATA_WATCH:
		if (!ev.watch_access || ev.watch_seen)
			return false;
		ev.watch_seen = true;
		ev.watch_ip = rec.u.raw[0];
		ev.watch_addr = rec.u.raw[1];
		return true;
	case VTICE_SYSCALL_DATA_VALUE:
		return ev.probe_hit && apply_value(ev, rec);
	case VTICE_SYSCALL_DATA_STRING:
		ev.str.append(reinterpret_cast<const char *>(rec.u.raw), sizeof(rec.u.raw));
		return (ev.probe_hit || ev.enter) && ev.str.size() <= VTICE_PROBE_STR_MAX;
	default:
		return false;
	}
}

SyscallEvent head_event(const vtice_record &rec)
{
	SyscallEvent ev;
	ev.enter = rec.type == VTICE_REC_SYSCALL_ENTER;
	ev.probe_hit = rec.type == VTICE_REC_PROBE_HIT;
	ev.cpu = rec.cpu;
	ev.tsc = rec.tsc;
	ev.nr = rec.u.syscall.nr;
	if (ev.probe_hit)
		ev.watch_access = rec.flags & (VTICE_PROBE_HIT_READ | VTICE_PROBE_HIT_WRITE);
	if (ev.enter || ev.probe_hit)
		ev.args[0] = rec.u.syscall.arg;
	else
		ev.ret = rec.u.syscall.arg;
	return ev;
}

}  // namespace

std::vector<SyscallEvent> decode_syscall_records(std::span<const vtice_record> recs,
						 SyscallDecodeStats &stats)
{
	std::vector<SyscallEvent> out;
	size_t i = 0;
	while (i < recs.size()) {
		const vtice_record &rec = recs[i++];
		if (rec.type == VTICE_REC_LOST) {
			stats.lost += rec.u.lost.count;
			continue;
		}
		if (rec.type != VTICE_REC_SYSCALL_ENTER && rec.type != VTICE_REC_SYSCALL_EXIT &&
		    rec.type != VTICE_REC_PROBE_HIT)
			continue;
		SyscallEvent ev = head_event(rec);
		std::size_t max = ev.probe_hit ? VTICE_PROBE_GROUP_MAX : VTICE_SYSCALL_GROUP_MAX;
		// A probe hit's flags: its DATA count, and a watch hit's access bits.
		uint32_t count = rec.flags & ~(ev.probe_hit ? VTICE_PROBE_HIT_READ | VTICE_PROBE_HIT_WRITE : 0u);
		bool ok = count < max &&
			  read_group_data(recs, i, count, [&ev](const vtice_record &d) { return apply_data(ev, d); }) &&
			  ev.watch_seen == (ev.watch_access != 0);
		if (!ok) {
			stats.malformed++;
			continue;
		}
		ev.str.resize(std::strlen(ev.str.c_str()));	// to the NUL root copied, if any
		stats.events++;
		out.push_back(std::move(ev));
	}
	return out;
}

namespace {

// Without task information an event can only pair on its own CPU.
uint64_t task_key(const SyscallEvent &ev)
{
	return ev.has_task ? ev.task : (1ull << 63) | ev.cpu;
}

}  // namespace

std::vector<SyscallCall> SyscallPairer::add(const SyscallEvent &ev)
{
	std::vector<SyscallCall> done;
	uint64_t key = task_key(ev);
	auto it = open_.find(key);
	if (ev.enter) {
		if (it != open_.end()) {
			done.push_back({it->second, std::nullopt});
			open_.erase(it);
		}
		open_.emplace(key, ev);
		return done;
	}
	if (it == open_.end()) {
		done.push_back({std::nullopt, ev});
		return done;
	}
	done.push_back({it->second, ev});
	open_.erase(it);
	return done;
}

std::vector<SyscallCall> SyscallPairer::unfinished()
{
	std::vector<SyscallCall> out;
	for (auto &[key, ev] : open_)
		out.push_back({ev, std::nullopt});
	open_.clear();
	return out;
}

}  // namespace vtice::trace
