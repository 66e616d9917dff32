// Where a session's kernel types come from, in order: a BTF file the user
// named (--btf: raw BTF such as /sys/kernel/btf/vmlinux, or an image), the
// `.BTF` section of the symbols image (vmlinux or vmlinuz), or the blob the
// running kernel carries in memory between __start_BTF and __stop_BTF.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "btf_types.hpp"

namespace vtice::dbg {
class Session;
class Output;
}

namespace vtice::dbg::btf {

// BTF from a file: an ELF vmlinux or a bzImage (its .BTF section) or raw BTF.
Result<Types> load_file(const std::string &path);
// A module's BTF from a file (raw, /sys/kernel/btf/ext4, or a .ko's .BTF),
// split on the kernel's types it was built against; kernel must outlive it.
Result<Types> load_module_file(const std::string &path, const Types &kernel);
// BTF from the stopped kernel's memory, located through the session's symbols.
Result<Types> load_guest(Session &session, Output &log);

class KernelTypes {
public:
	void set_sources(std::string btf_file, std::string image_file);
	// Types the caller loaded already (--btf is checked before connecting).
	void adopt(Types types) { types_.emplace(std::move(types)); }
	// Loads on first use and keeps the result (or the reasons none loaded).
	Result<const Types *> get(Session &session, Output &log);
	// The types if an earlier get() loaded them, else nullptr.
	const Types *loaded() const { return types_ ? &*types_ : nullptr; }

private:
	std::string btf_file_, image_file_;
	std::optional<Types> types_;
	std::optional<std::string> failure_;
};

}  // namespace vtice::dbg::btf
