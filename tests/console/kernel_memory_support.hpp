// What the tests of reading kernel structures (modules' ORC tables and
// symbols) share: pahole as the oracle of a struct's layout in the host
// kernel's BTF, and a sparse guest memory to lay structures out in.
#pragma once

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <map>
#include <regex>
#include <span>
#include <string>
#include <vector>

#include "command_output.hpp"
#include "symbols/memory_reader.hpp"

namespace vtice::test {

inline constexpr const char *kHostBtf = "/sys/kernel/btf/vmlinux";

// Whether pahole can read the host kernel's BTF (else the layout tests skip).
inline bool pahole_reads_host_btf()
{
	return std::filesystem::exists(kHostBtf) && !command_output("command -v pahole").empty();
}

// pahole's offset of member in struct type ("int * orc_unwind_ip; /* 8 8 */")
// in a kernel's BTF (the host's by default), -1 if none.
inline long pahole_offset(const std::string &type, const std::string &member, const std::string &image = kHostBtf)
{
	std::string out = command_output("pahole -F btf -C " + type + " " + image + " 2>/dev/null");
	std::smatch m;
	std::regex line("[ *]" + member + ";\\s*/\\*\\s*(\\d+)\\s");
	return std::regex_search(out, m, line) ? std::stol(m[1]) : -1;
}

// Guest memory as a map of bytes: a read of any byte never put fails.
class GuestMemory {
public:
	void put(std::uint64_t address, const void *data, std::size_t len)
	{
		const auto *b = static_cast<const std::uint8_t *>(data);
		for (std::size_t i = 0; i < len; i++)
			bytes_[address + i] = b[i];
	}
	template <typename T>
	void put_value(std::uint64_t address, T value)
	{
		put(address, &value, sizeof(value));
	}
	symbols::MemoryReader reader() const
	{
		return [this](std::uint64_t address, std::span<std::uint8_t> out) {
			for (std::size_t i = 0; i < out.size(); i++) {
				auto it = bytes_.find(address + i);
				if (it == bytes_.end())
					return false;
				out[i] = it->second;
			}
			return true;
		};
	}

private:
	std::map<std::uint64_t, std::uint8_t> bytes_;
};

// A sorted ORC table of entries at ips (each s32 relative to its slot), all
// plain CALL frames in the 6.3+ encoding (sp = SP + 8; type 2).
inline void put_orc_table(GuestMemory &mem, std::uint64_t ip_table, std::uint64_t entries,
			  const std::vector<std::uint64_t> &ips)
{
	for (std::size_t i = 0; i < ips.size(); i++) {
		auto rel = static_cast<std::int32_t>(ips[i] - (ip_table + 4 * i));
		mem.put(ip_table + 4 * i, &rel, 4);
		std::uint8_t e[6] = {8, 0, 0, 0, 5, 2};	// sp_offset 8, bp_offset 0, sp_reg SP, type CALL
		mem.put(entries + 6 * i, e, 6);
	}
}

}  // namespace vtice::test
