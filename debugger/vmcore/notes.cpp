#include "notes.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>

#include <elf.h>

#include "elf_core.hpp"

namespace vtice::dbg::vmcore {

namespace {

// Offsets in x86-64's struct elf_prstatus (include/uapi/linux/elfcore.h):
// elf_siginfo (12), pr_cursig (2, padded), pr_sigpend, pr_sighold, then
// pr_pid at 32, four timevals from 48, pr_reg at 112, pr_fpvalid at 328.
constexpr std::size_t kPrstatusSize = 336;
constexpr std::size_t kPidOffset = 32;
constexpr std::size_t kRegistersOffset = 112;

// The kernel caps the text at a page (VMCOREINFO_BYTES).
constexpr std::size_t kVmcoreinfoMax = 4096;

}  // namespace

std::vector<std::uint8_t> prstatus_note(const PrstatusRegisters &registers, std::int32_t pid)
{
	std::vector<std::uint8_t> desc(kPrstatusSize, 0);
	std::memcpy(desc.data() + kPidOffset, &pid, sizeof pid);
	std::memcpy(desc.data() + kRegistersOffset, registers.data(), sizeof registers);
	return elf_note("CORE", NT_PRSTATUS, desc);
}

Result<void> check_vmcoreinfo(std::string_view text)
{
	if (text.empty())
		return make_error("the kernel's vmcoreinfo is empty");
	if (text.size() > kVmcoreinfoMax)
		return make_error("the kernel's vmcoreinfo is " + std::to_string(text.size()) + " bytes, over the " +
				  std::to_string(kVmcoreinfoMax) + " the kernel allows");
	std::size_t line = 1;
	for (std::size_t i = 0; i < text.size(); ++i) {
		unsigned char c = static_cast<unsigned char>(text[i]);
		if (c == '\n')
			++line;
		else if (c < 0x20 || c > 0x7e) {
			char byte[8];
			std::snprintf(byte, sizeof byte, "0x%02x", c);
			return make_error(std::string("the kernel's vmcoreinfo has byte ") + byte + " on line " +
					  std::to_string(line) + ": not text");
		}
	}
	for (const char *key : {"OSRELEASE", "PAGESIZE"})
		if (vmcoreinfo_value(text, key).empty())
			return make_error(std::string("the kernel's vmcoreinfo has no ") + key + "=");
	return {};
}

std::vector<std::uint8_t> vmcoreinfo_note(std::string_view text)
{
	return elf_note("VMCOREINFO", 0, std::span(reinterpret_cast<const std::uint8_t *>(text.data()), text.size()));
}

std::string vmcoreinfo_value(std::string_view text, std::string_view key)
{
	std::size_t at = 0;
	while (at < text.size()) {
		std::size_t end = std::min(text.find('\n', at), text.size());
		std::string_view line = text.substr(at, end - at);
		if (line.size() > key.size() && line.substr(0, key.size()) == key && line[key.size()] == '=')
			return std::string(line.substr(key.size() + 1));
		at = end + 1;
	}
	return {};
}

}  // namespace vtice::dbg::vmcore
