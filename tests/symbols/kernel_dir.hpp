// Finds the Debian kernel unpacked by tools/kernel.sh (build/kernel/<ver>/)
// without naming the version.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace vtice::symbols::testing {

// Every kernel make kernel unpacked (Debian's 6.1 and 6.12).
inline std::vector<std::filesystem::path> debian_kernel_dirs()
{
	std::vector<std::filesystem::path> dirs;
	std::error_code error;
	for (const auto &entry : std::filesystem::directory_iterator(VTICE_KERNEL_DIR, error))
		if (entry.is_directory() && std::filesystem::exists(entry.path() / "vmlinux") &&
		    std::filesystem::exists(entry.path() / "vmlinuz"))
			dirs.push_back(entry.path());
	return dirs;
}

inline std::optional<std::filesystem::path> debian_kernel_dir()
{
	auto dirs = debian_kernel_dirs();
	if (dirs.empty())
		return std::nullopt;
	return dirs.front();
}

}  // namespace vtice::symbols::testing
