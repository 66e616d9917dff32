// Finds the Debian kernel unpacked by tools/kernel.sh (build/kernel/<ver>/)
// without naming the version.
#pragma once

#include <cstdlib>
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

// A module's .ko in the kernel package make kernel unpacked (6.12's are .ko.xz).
inline std::optional<std::filesystem::path> debian_module(const std::filesystem::path &kernel_dir,
							  const std::string &name)
{
	std::error_code error;
	for (auto it = std::filesystem::recursive_directory_iterator(kernel_dir / "pkg" / "lib" / "modules", error);
	     it != std::filesystem::recursive_directory_iterator(); it.increment(error)) {
		std::string file = it->path().filename().string();
		if (file == name + ".ko" || file == name + ".ko.xz")
			return it->path();
	}
	return std::nullopt;
}

// The module at ko written to `to`, unpacked; whether it was.
inline bool unpack_module(const std::filesystem::path &ko, const std::string &to)
{
	std::string command = ko.extension() == ".xz" ? "xz -dc '" + ko.string() + "' > '" + to + "'"
						      : "cp '" + ko.string() + "' '" + to + "'";
	return std::system(command.c_str()) == 0;
}

}  // namespace vtice::symbols::testing
