// The one rule for every file vtice writes (-o of report, trace, trace
// syscall, trace syscalls; the debugger's trace -o):
// - it is never an input of the same run (vtice/read_input.hpp remembers
//   them by device and inode, so a hard link, a symlink or ./x is caught);
// - a directory is refused;
// - a regular file (or a new one) is written beside its place under a
//   temporary name and renamed over it only when every byte was written:
//   an interrupted or failed write leaves the old file;
// - a device or FIFO (/dev/stdout, a pipe) is written directly;
// - every write is checked, the flush and the close too: /dev/full fails.
#pragma once

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <span>
#include <string>
#include <string_view>

#include "vtice/interrupts.hpp"
#include "vtice/read_input.hpp"
#include "vtice/result.hpp"

namespace vtice {

inline Result<void> check_output_path(const std::string &path)
{
	if (path.empty())
		return make_error("the output file name is empty");
	if (auto input = RunInputs::get().named_by(path))
		return make_error(path + " is " + (*input == path ? std::string("an input") : "the same file as " + *input) +
				  " of this run; refusing to write over it");
	struct stat info;
	if (::stat(path.c_str(), &info) == 0 && S_ISDIR(info.st_mode))
		return make_error(path + " is a directory");
	return {};
}

// A file being written: to a temporary beside the target, renamed into
// place by commit(); dropped unless committed.
class OutputFile {
public:
	static Result<OutputFile> open(const std::string &path)
	{
		if (auto ok = check_output_path(path); !ok)
			return ok.error();
		OutputFile out;
		out.path_ = path;
		struct stat info;
		bool special = ::stat(path.c_str(), &info) == 0 && !S_ISREG(info.st_mode);
		if (!special) {
			out.temp_ = path + ".vtice-tmp." + std::to_string(::getpid());
			out.temp_slot_ = interrupts::register_temp(out.temp_);
		}
		const std::string &where = special ? path : out.temp_;
		out.file_ = std::fopen(where.c_str(), "wb");
		if (!out.file_)
			return make_error("cannot write " + where + ": " + std::strerror(errno));
		return out;
	}
	OutputFile(OutputFile &&other) noexcept { *this = std::move(other); }
	OutputFile &operator=(OutputFile &&other) noexcept
	{
		std::swap(file_, other.file_);
		std::swap(path_, other.path_);
		std::swap(temp_, other.temp_);
		std::swap(failed_, other.failed_);
		std::swap(temp_slot_, other.temp_slot_);
		return *this;
	}
	OutputFile(const OutputFile &) = delete;
	~OutputFile() { discard(); }

	std::FILE *stream() { return file_; }
	void write(std::string_view text)
	{
		if (file_ && std::fwrite(text.data(), 1, text.size(), file_) != text.size())
			failed_ = errno ? errno : EIO;
	}
	// Every byte out, then into place.
	Result<void> commit()
	{
		if (!file_)
			return make_error("cannot write " + path_ + ": not open");
		bool ok = !failed_ && std::fflush(file_) == 0 && !std::ferror(file_);
		int err = failed_ ? failed_ : errno;
		ok = std::fclose(file_) == 0 && ok;
		err = err ? err : errno;
		file_ = nullptr;
		if (!ok) {
			remove_temp();
			return make_error("writing " + path_ + " failed: " + std::strerror(err ? err : EIO));
		}
		if (!temp_.empty() && std::rename(temp_.c_str(), path_.c_str()) != 0) {
			int why = errno;
			remove_temp();
			return make_error("cannot replace " + path_ + ": " + std::strerror(why));
		}
		temp_.clear();
		interrupts::unregister_temp(temp_slot_);
		temp_slot_ = -1;
		return {};
	}

private:
	OutputFile() = default;
	void discard()
	{
		if (file_)
			std::fclose(file_);
		file_ = nullptr;
		remove_temp();
	}
	void remove_temp()
	{
		if (!temp_.empty())
			std::remove(temp_.c_str());
		temp_.clear();
		interrupts::unregister_temp(temp_slot_);
		temp_slot_ = -1;
	}

	std::FILE *file_ = nullptr;
	std::string path_, temp_;
	int failed_ = 0;
	int temp_slot_ = -1;	// the signal handler's note of temp_
};

inline Result<void> write_output_file(const std::string &path, std::span<const std::uint8_t> bytes)
{
	auto out = OutputFile::open(path);
	if (!out)
		return out.error();
	out->write(std::string_view(reinterpret_cast<const char *>(bytes.data()), bytes.size()));
	return out->commit();
}

}  // namespace vtice
