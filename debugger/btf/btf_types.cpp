#include "btf_types.hpp"

#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdarg>
#include <cstring>

#include "output.hpp"

namespace vtice::dbg::btf {

namespace {

constexpr std::size_t kMaxMemberDepth = 8;  // anonymous unions within structs...

void append_printf(void *ctx, const char *fmt, va_list args)
{
	*static_cast<std::string *>(ctx) += vformat(fmt, args);
}

// A btf_dump writing into a string, freed with the object.
class Dumper {
public:
	Dumper(const struct ::btf *types, std::string &out) : dump_(btf_dump__new(types, append_printf, &out, nullptr))
	{
	}
	~Dumper() { btf_dump__free(dump_); }
	Dumper(const Dumper &) = delete;
	Dumper &operator=(const Dumper &) = delete;
	struct btf_dump *get() const { return libbpf_get_error(dump_) ? nullptr : dump_; }

private:
	struct btf_dump *dump_;
};

struct NamedKind {
	std::string_view prefix;
	int kind;
};

constexpr NamedKind kTagged[] = {
	{"struct ", BTF_KIND_STRUCT}, {"union ", BTF_KIND_UNION}, {"enum ", BTF_KIND_ENUM}};
constexpr int kBare[] = {BTF_KIND_TYPEDEF, BTF_KIND_INT, BTF_KIND_STRUCT, BTF_KIND_UNION, BTF_KIND_ENUM,
			 BTF_KIND_FLOAT};

std::string_view trim(std::string_view s)
{
	while (!s.empty() && s.front() == ' ')
		s.remove_prefix(1);
	while (!s.empty() && s.back() == ' ')
		s.remove_suffix(1);
	return s;
}

}  // namespace

Types::Types(struct ::btf *handle, std::string origin) : btf_(handle), origin_(std::move(origin)) {}

Types::Types(Types &&other) noexcept : btf_(other.btf_), origin_(std::move(other.origin_))
{
	other.btf_ = nullptr;
}

Types &Types::operator=(Types &&other) noexcept
{
	if (this != &other) {
		btf__free(btf_);
		btf_ = other.btf_;
		origin_ = std::move(other.origin_);
		other.btf_ = nullptr;
	}
	return *this;
}

Types::~Types()
{
	btf__free(btf_);
}

namespace {

// Over libbpf's answer: the handle, or why there is none.
Result<struct ::btf *> checked(struct ::btf *handle, std::uint32_t first_id, const std::string &origin)
{
	if (libbpf_get_error(handle)) {
		int err = errno;
		return make_error(origin + ": not valid BTF (" + std::strerror(err) + ")" +
				  (first_id > 1 ? " on the kernel's" : ""));
	}
	if (btf__type_cnt(handle) <= first_id) {
		btf__free(handle);
		return make_error(origin + ": BTF holds no types");
	}
	return handle;
}

bool blob_size_ok(std::span<const std::uint8_t> bytes)
{
	return bytes.size() >= 24 && bytes.size() <= UINT32_MAX;
}

std::string not_a_blob(std::span<const std::uint8_t> bytes, const std::string &origin)
{
	return origin + ": " + std::to_string(bytes.size()) + " bytes is not a BTF blob";
}

// Debian 12's libbpf (1.1) parses split BTF from a file only
// (btf__new_split came in 1.2): the bytes go through an anonymous file.
struct ::btf *new_split_btf(std::span<const std::uint8_t> bytes, struct ::btf *base)
{
	int fd = memfd_create("vtice-btf", MFD_CLOEXEC);
	if (fd < 0)
		return nullptr;	// errno says why, as libbpf's own failures do
	std::size_t done = 0;
	while (done < bytes.size()) {
		ssize_t n = write(fd, bytes.data() + done, bytes.size() - done);
		if (n <= 0) {
			int err = n < 0 ? errno : EIO;
			close(fd);
			errno = err;
			return nullptr;
		}
		done += static_cast<std::size_t>(n);
	}
	std::string path = "/proc/self/fd/" + std::to_string(fd);
	struct ::btf *handle = btf__parse_raw_split(path.c_str(), base);
	int err = errno;
	close(fd);
	errno = err;
	return handle;
}

}  // namespace

Result<Types> Types::parse(std::span<const std::uint8_t> bytes, std::string origin)
{
	if (!blob_size_ok(bytes))
		return make_error(not_a_blob(bytes, origin));
	auto handle = checked(btf__new(bytes.data(), static_cast<std::uint32_t>(bytes.size())), 1, origin);
	if (!handle)
		return handle.error();
	return Types(*handle, std::move(origin));
}

Result<Types> Types::parse_split(std::span<const std::uint8_t> bytes, const Types &base, std::string origin)
{
	if (!blob_size_ok(bytes))
		return make_error(not_a_blob(bytes, origin));
	// libbpf takes base as non-const but only reads it.
	auto *kernel = const_cast<struct ::btf *>(base.btf_);
	auto handle = checked(new_split_btf(bytes, kernel), btf__type_cnt(kernel), origin);
	if (!handle)
		return handle.error();
	return Types(*handle, std::move(origin));
}

std::uint32_t Types::count() const
{
	return btf__type_cnt(btf_);
}

Result<std::uint32_t> Types::find(std::string_view name) const
{
	name = trim(name);
	for (const auto &tagged : kTagged) {
		if (name.substr(0, tagged.prefix.size()) != tagged.prefix)
			continue;
		std::string bare(trim(name.substr(tagged.prefix.size())));
		int id = btf__find_by_name_kind(btf_, bare.c_str(), tagged.kind);
		if (id <= 0)
			return make_error("no " + std::string(name) + " in " + origin_);
		return static_cast<std::uint32_t>(id);
	}
	std::string bare(name);
	for (int kind : kBare) {
		int id = btf__find_by_name_kind(btf_, bare.c_str(), kind);
		if (id > 0)
			return static_cast<std::uint32_t>(id);
	}
	return make_error("no type named '" + bare + "' in " + origin_);
}

std::uint32_t Types::resolve(std::uint32_t type_id) const
{
	int id = btf__resolve_type(btf_, type_id);
	return id < 0 ? type_id : static_cast<std::uint32_t>(id);
}

Result<std::uint64_t> Types::size_of(std::uint32_t type_id) const
{
	std::int64_t size = btf__resolve_size(btf_, type_id);
	if (size < 0)
		return make_error(name_of(type_id) + " has no size");
	return static_cast<std::uint64_t>(size);
}

bool Types::is_pointer(std::uint32_t type_id) const
{
	const btf_type *t = btf__type_by_id(btf_, resolve(type_id));
	return t && btf_is_ptr(t);
}

Result<std::uint32_t> Types::pointer_to(std::uint32_t type_id) const
{
	for (std::uint32_t id = 1; id < count(); id++) {
		const btf_type *t = btf__type_by_id(btf_, id);
		if (btf_is_ptr(t) && t->type == type_id)
			return id;
	}
	return make_error("the BTF has no pointer type to " + name_of(type_id));
}

bool Types::is_char_array(std::uint32_t type_id) const
{
	const btf_type *t = btf__type_by_id(btf_, resolve(type_id));
	if (!t || !btf_is_array(t))
		return false;
	const btf_type *e = btf__type_by_id(btf_, resolve(btf_array(t)->type));
	return e && btf_is_int(e) && e->size == 1;
}

std::optional<Types::Scalar> Types::scalar(std::uint32_t type_id) const
{
	const btf_type *t = btf__type_by_id(btf_, resolve(type_id));
	if (!t)
		return std::nullopt;
	if (btf_is_int(t))
		return Scalar{t->size, (btf_int_encoding(t) & BTF_INT_SIGNED) != 0};
	if (btf_is_enum(t))
		return Scalar{t->size, btf_kflag(t)};
	return std::nullopt;
}

namespace {

// The FUNC of that name among a split BTF's own types (libbpf 1.1 exports
// no lookup that skips the base's); 0 when none.
std::uint32_t own_function(const struct ::btf *btf, const std::string &name)
{
	const struct ::btf *base = btf__base_btf(btf);
	for (std::uint32_t id = base ? btf__type_cnt(base) : 1; id < btf__type_cnt(btf); id++) {
		const btf_type *t = btf__type_by_id(btf, id);
		const char *n = t && btf_is_func(t) ? btf__name_by_offset(btf, t->name_off) : nullptr;
		if (n && name == n)
			return id;
	}
	return 0;
}

Result<const btf_type *> function_proto(const struct ::btf *btf, std::string_view function, Types::Among among,
					const std::string &origin)
{
	std::string name(function);
	int id = among == Types::Among::Own ? static_cast<int>(own_function(btf, name))
					    : btf__find_by_name_kind(btf, name.c_str(), BTF_KIND_FUNC);
	if (id <= 0)
		return make_error("no function " + name + " in " + origin);
	const btf_type *func = btf__type_by_id(btf, static_cast<std::uint32_t>(id));
	const btf_type *proto = func ? btf__type_by_id(btf, func->type) : nullptr;
	if (!proto || !btf_is_func_proto(proto))
		return make_error("function " + name + " has no prototype in " + origin);
	return proto;
}

}  // namespace

Result<std::uint32_t> Types::function_return(std::string_view function, Among among) const
{
	auto proto = function_proto(btf_, function, among, origin_);
	if (!proto)
		return proto.error();
	return (*proto)->type;
}

Result<std::vector<Types::Param>> Types::function_params(std::string_view function, Among among) const
{
	auto proto = function_proto(btf_, function, among, origin_);
	if (!proto)
		return proto.error();
	std::vector<Param> params;
	const btf_param *p = btf_params(*proto);
	for (std::uint16_t i = 0; i < btf_vlen(*proto); i++) {
		if (p[i].type == 0)
			break;	// "...": BTF's variadic marker
		const char *param_name = btf__name_by_offset(btf_, p[i].name_off);
		params.push_back({param_name ? param_name : "", p[i].type});
	}
	return params;
}

bool Types::is_composite(std::uint32_t type_id) const
{
	const btf_type *t = btf__type_by_id(btf_, resolve(type_id));
	return t && btf_is_composite(t);
}

Result<std::uint32_t> Types::pointee(std::uint32_t type_id) const
{
	const btf_type *t = btf__type_by_id(btf_, resolve(type_id));
	if (!t || !btf_is_ptr(t))
		return make_error(name_of(type_id) + " is not a pointer");
	return t->type;
}

Result<std::uint32_t> Types::element(std::uint32_t type_id, std::uint64_t *count) const
{
	const btf_type *t = btf__type_by_id(btf_, resolve(type_id));
	if (!t || !btf_is_array(t))
		return make_error(name_of(type_id) + " is not an array");
	if (count)
		*count = btf_array(t)->nelems;
	return btf_array(t)->type;
}

// One member by name; anonymous struct and union members are searched
// through, as C lets their members be named directly.
Result<Member> Types::one_member(std::uint32_t type_id, std::string_view name) const
{
	struct Frame {
		std::uint32_t id;
		std::uint64_t base;
	};
	Frame stack[kMaxMemberDepth];
	std::size_t depth = 0;
	stack[depth++] = {resolve(type_id), 0};
	while (depth) {
		Frame f = stack[--depth];
		const btf_type *t = btf__type_by_id(btf_, f.id);
		if (!t || !btf_is_composite(t))
			continue;
		const btf_member *m = btf_members(t);
		for (std::uint32_t i = 0; i < btf_vlen(t); i++, m++) {
			const char *member_name = btf__name_by_offset(btf_, m->name_off);
			std::uint64_t offset = f.base + btf_member_bit_offset(t, i);
			if (member_name && *member_name) {
				if (name != member_name)
					continue;
				Member found{m->type, offset, btf_member_bitfield_size(t, i), 0};
				auto size = size_of(m->type);
				found.size = size ? *size : 0;
				return found;
			}
			if (depth < kMaxMemberDepth)
				stack[depth++] = {resolve(m->type), offset};
		}
	}
	return make_error(name_of(type_id) + " has no member '" + std::string(name) + "'");
}

Result<Member> Types::member(std::uint32_t type_id, std::string_view path) const
{
	Member at{type_id, 0, 0, 0};
	while (!path.empty()) {
		auto dot = path.find('.');
		std::string_view name = path.substr(0, dot);
		if (name.empty())
			return make_error("empty member name in '" + std::string(path) + "'");
		auto next = one_member(at.type_id, name);
		if (!next)
			return next.error();
		next->bit_offset += at.bit_offset;
		at = *next;
		path = dot == std::string_view::npos ? std::string_view{} : path.substr(dot + 1);
	}
	return at;
}

std::string Types::declaration(std::uint32_t type_id, std::string_view name) const
{
	std::string out, field(name);
	Dumper dump(btf_, out);
	if (!dump.get())
		return "?";
	btf_dump_emit_type_decl_opts opts{};
	opts.sz = sizeof(opts);
	opts.field_name = field.c_str();
	opts.indent_level = 1;
	if (btf_dump__emit_type_decl(dump.get(), type_id, &opts) < 0)
		return "?";
	return out;
}

std::string Types::name_of(std::uint32_t type_id) const
{
	return declaration(type_id, "");
}

Result<std::string> Types::format_value(std::uint32_t type_id, std::span<const std::uint8_t> bytes) const
{
	std::string out;
	Dumper dump(btf_, out);
	if (!dump.get())
		return make_error("libbpf could not start its printer");
	btf_dump_type_data_opts opts{};
	opts.sz = sizeof(opts);
	opts.indent_str = "  ";
	// Every member, as gdb prints them: without this libbpf leaves out the
	// members that are 0, and all-zero memory printed as an empty "{ }".
	opts.emit_zeroes = true;
	int ret = btf_dump__dump_type_data(dump.get(), type_id, bytes.data(), bytes.size(), &opts);
	if (ret < 0)
		return make_error("cannot print " + name_of(type_id) + ": " + std::strerror(-ret));
	return out;
}

}  // namespace vtice::dbg::btf
