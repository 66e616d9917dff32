// The running kernel's BTF (/sys/kernel/btf/vmlinux, or a file the user
// names), read on first use and once: vtice probe needs it for args->NAME
// and for the layout of struct module (modules' ORC tables), and it is
// megabytes to parse.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "btf/btf_source.hpp"
#include "vtice/result.hpp"

namespace vtice::console {

class KernelBtf {
public:
	explicit KernelBtf(std::string path) : path_(std::move(path)) {}
	// Types someone else keeps (a debug session's), asked for on first use.
	using Borrow = std::function<Result<const dbg::btf::Types *>()>;
	explicit KernelBtf(Borrow borrow) : borrow_(std::move(borrow)) {}

	// The types, or why the file gave none (the same answer every time).
	Result<const dbg::btf::Types *> types();

private:
	std::string path_;
	std::optional<Result<dbg::btf::Types>> loaded_;
	Borrow borrow_;
	std::optional<Result<const dbg::btf::Types *>> borrowed_;
};

}  // namespace vtice::console
