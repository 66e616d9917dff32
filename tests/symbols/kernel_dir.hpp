// Finds the Debian kernel unpacked by tools/kernel.sh (build/kernel/<ver>/)
// without naming the version.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

namespace vtice::symbols::testing {

inline std::optional<std::filesystem::path> debian_kernel_dir()
{
	std::error_code error;
	for (const auto &entry : std::filesystem::directory_iterator(VTICE_KERNEL_DIR, error))
		if (entry.is_directory() && std::filesystem::exists(entry.path() / "vmlinux") &&
		    std::filesystem::exists(entry.path() / "vmlinuz"))
			return entry.path();
	return std::nullopt;
}

}  // namespace vtice::symbols::testing
