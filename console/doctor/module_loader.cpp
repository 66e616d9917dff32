#include "module_loader.hpp"

#include <fcntl.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>
#include <thread>
#include <vector>

#include "kernel_log.hpp"
#include "vtice/read_input.hpp"

namespace vtice::console::doctor {

namespace fs = std::filesystem;

namespace {

#ifndef MODULE_INIT_COMPRESSED_FILE
#define MODULE_INIT_COMPRESSED_FILE 4  // include/uapi/linux/module.h, Linux 5.17
#endif

bool compressed(const std::string &path)
{
	for (const char *ext : {".ko.xz", ".ko.zst", ".ko.gz"})
		if (path.size() > std::strlen(ext) && path.ends_with(ext))
			return true;
	return false;
}

bool is_vtice_module(const fs::path &p)
{
	std::string name = p.filename().string();
	return name == "vtice.ko" || name == "vtice.ko.xz" || name == "vtice.ko.zst" || name == "vtice.ko.gz";
}

// Under /lib/modules/RELEASE: DKMS's updates/ first, then anywhere.
std::string installed_module()
{
	utsname u{};
	if (uname(&u))
		return "";
	fs::path base = fs::path("/lib/modules") / u.release;
	std::error_code ec;
	for (const fs::path &dir : {base / "updates", base})
		for (auto it = fs::recursive_directory_iterator(dir, fs::directory_options::skip_permission_denied, ec);
		     !ec && it != fs::recursive_directory_iterator(); it.increment(ec))
			if (it->is_regular_file(ec) && is_vtice_module(it->path()))
				return it->path().string();
	return "";
}

std::string beside_binary()
{
	std::error_code ec;
	fs::path exe = fs::read_symlink("/proc/self/exe", ec);
	if (ec)
		return "";
	for (const fs::path &candidate : {exe.parent_path() / "hypervisor/vtice.ko", exe.parent_path() / "../hypervisor/vtice.ko"})
		if (fs::is_regular_file(candidate, ec))
			return fs::weakly_canonical(candidate, ec).string();
	return "";
}

// The module's own last words, up to three lines, else where to look.
std::string refusal(const std::vector<std::string> &said)
{
	if (said.empty())
		return "; dmesg says why";
	std::string quoted;
	for (std::size_t i = said.size() > 3 ? said.size() - 3 : 0; i < said.size(); i++)
		quoted += (quoted.empty() ? "\"" : "; \"") + said[i] + "\"";
	return ": the kernel log says " + quoted;
}

std::string load_error(const std::string &path, int err, const std::vector<std::string> &said)
{
	switch (err) {
	case EPERM:
		return path + ": the kernel refused to load it (root is needed; under Secure Boot or lockdown the "
			      "module must be signed: make sign, docs/hypervisor.md)";
	case ENOEXEC:
		return path + ": not a module for this kernel (built against other headers? make module KDIR=...)";
	case EEXIST:
		return "a module named vtice is already loaded";
	case EBUSY:
	case ENODEV:
	case EIO:
		return path + ": vtice refused to start (" + std::strerror(err) + ")" + refusal(said);
	default:
		return path + ": " + std::strerror(err) + refusal(said);
	}
}

}  // namespace

bool module_loaded()
{
	std::error_code ec;
	return fs::exists("/sys/module/vtice", ec);
}

Result<std::string> find_module(const std::string &given)
{
	if (!given.empty()) {
		std::error_code ec;
		if (!fs::is_regular_file(given, ec))
			return Error{"--module " + given + ": not a regular file"};
		RunInputs::get().note_path(given);  // no output of this run may replace it
		return given;
	}
	for (const std::string &found : {installed_module(), beside_binary()}) {
		if (!found.empty()) {
			RunInputs::get().note_path(found);
			return found;
		}
	}
	return Error{"no vtice.ko: looked under /lib/modules/RELEASE (make install-module) and beside this "
		     "binary (../hypervisor/vtice.ko); build it with make module, or give --module PATH"};
}

Result<void> load_module(const std::string &path, const std::string &params)
{
	int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return Error{path + ": " + std::strerror(errno)};
	int flags = compressed(path) ? MODULE_INIT_COMPRESSED_FILE : 0;
	KernelLogTail log;
	long rc = syscall(SYS_finit_module, fd, params.c_str(), flags);
	int err = errno;
	close(fd);
	if (rc != 0)
		return Error{load_error(path, err, log.lines("vtice: "))};
	return {};
}

Result<void> unload_module(int timeout_ms)
{
	for (int waited = 0;; waited += 100) {
		if (syscall(SYS_delete_module, "vtice", O_NONBLOCK) == 0)
			return {};
		if (errno != EAGAIN && errno != EBUSY)
			return Error{std::string("rmmod vtice: ") + std::strerror(errno)};
		if (waited >= timeout_ms)
			return Error{"rmmod vtice: still in use after " + std::to_string(timeout_ms / 1000) +
				     " s (a vtice trace still running? lsof /dev/vtice)"};
		std::this_thread::sleep_for(std::chrono::milliseconds(100));
	}
}

}  // namespace vtice::console::doctor
