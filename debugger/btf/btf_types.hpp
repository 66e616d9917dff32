// Kernel types from BTF (the kernel's own compact type information: `.BTF`
// in vmlinux/vmlinuz, /sys/kernel/btf/vmlinux, or the blob in guest memory),
// read through libbpf (here and in btf_ptype.cpp, which walks members).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "vtice/result.hpp"

struct btf;

namespace vtice::dbg::btf {

// A member reached by a path such as "se.vruntime" or "thread.sp".
struct Member {
	std::uint32_t type_id = 0;    // the member's own type (typedefs kept)
	std::uint64_t bit_offset = 0;  // from the start of the outer type
	std::uint32_t bitfield_bits = 0;  // 0 for a whole-byte member
	std::uint64_t size = 0;        // bytes of type_id
};

class Types {
public:
	// Raw BTF bytes (a .BTF section or a /sys/kernel/btf file); `origin`
	// says where they came from ("BTF of /boot/vmlinuz-6.1.0").
	static Result<Types> parse(std::span<const std::uint8_t> bytes, std::string origin);
	// A module's BTF (/sys/kernel/btf/ext4, a .ko's .BTF): split BTF whose
	// ids go on from the kernel's, so the result answers for the kernel's
	// types too, with the same ids. `base` must outlive the result.
	static Result<Types> parse_split(std::span<const std::uint8_t> bytes, const Types &base, std::string origin);

	Types(Types &&) noexcept;
	Types &operator=(Types &&) noexcept;
	~Types();

	const std::string &origin() const { return origin_; }
	std::uint32_t count() const;
	// "struct file", "union bpf_attr", "enum pid_type", "pid_t", "int".
	Result<std::uint32_t> find(std::string_view name) const;
	Result<Member> member(std::uint32_t type_id, std::string_view path) const;
	Result<std::uint64_t> size_of(std::uint32_t type_id) const;
	// Through typedefs, const, volatile and restrict.
	std::uint32_t resolve(std::uint32_t type_id) const;
	// The pointed-to or element type, or an error when type_id is neither.
	Result<std::uint32_t> pointee(std::uint32_t type_id) const;
	Result<std::uint32_t> element(std::uint32_t type_id, std::uint64_t *count) const;
	// The "T *" type BTF has for T (kernel BTF has one for most types).
	Result<std::uint32_t> pointer_to(std::uint32_t type_id) const;
	bool is_pointer(std::uint32_t type_id) const;
	// An array of 1-byte integers (char comm[16]): printed as a string.
	bool is_char_array(std::uint32_t type_id) const;
	// Integers and enums: their width in bytes and signedness.
	struct Scalar {
		std::uint32_t bytes;
		bool is_signed;
	};
	std::optional<Scalar> scalar(std::uint32_t type_id) const;
	bool is_composite(std::uint32_t type_id) const;
	// Which function of a name a split BTF means: the first (the base's,
	// when the kernel has one) or its own only (a module's msr_read, which
	// the kernel has too).
	enum class Among { All, Own };
	// A function's parameters as its prototype names them (BTF FUNC, then
	// FUNC_PROTO), in order; a variadic function's "..." is left out.
	struct Param {
		std::string name;
		std::uint32_t type_id;
	};
	Result<std::vector<Param>> function_params(std::string_view function, Among among = Among::All) const;
	// What the function returns (its prototype's type; 0 for void).
	Result<std::uint32_t> function_return(std::string_view function, Among among = Among::All) const;
	// A C declaration of name with this type: "char comm[16]", "struct file *f".
	std::string declaration(std::uint32_t type_id, std::string_view name) const;
	// The type's name as C spells it ("struct task_struct", "u64").
	std::string name_of(std::uint32_t type_id) const;
	// libbpf's typed-data printer (the format of bpf_snprintf_btf).
	Result<std::string> format_value(std::uint32_t type_id, std::span<const std::uint8_t> bytes) const;

	const struct ::btf *raw() const { return btf_; }

private:
	Types(struct ::btf *handle, std::string origin);
	Result<Member> one_member(std::uint32_t type_id, std::string_view name) const;

	struct ::btf *btf_ = nullptr;
	std::string origin_;
};

}  // namespace vtice::dbg::btf
