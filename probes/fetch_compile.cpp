// Reads through arguments into fetch ops (fetch_compile.hpp). The value being
// read is tracked as a place: either in root's accumulator, or an object in
// guest memory at the accumulator plus an offset (a field or an element not
// yet loaded, so that `a->b.c[2].d` costs one load, not three).
#include "fetch_compile.hpp"

#include <bit>
#include <limits>

#include "diagnostic.hpp"

namespace vtice::probes {
namespace {

struct Place {
	bool in_memory = false;		// the object is at the accumulator + offset
	std::int64_t offset = 0;
	std::uint32_t type_id = 0;	// 0: a value BTF does not type (argN, retval of an unknown function)
	std::uint32_t cast_pointee = 0;	// the accumulator is a pointer to this (a cast)
	std::uint32_t bit_shift = 0;	// a bitfield (in memory): its lowest bit past offset's byte
	std::uint32_t bits = 0;		// ...and its width
};

// The bytes root loads for a bitfield bits wide bit_shift into its first
// byte: the fewest of 1, 2, 4, 8 that hold it, 0 when 8 cannot.
std::uint32_t bitfield_bytes(std::uint32_t bit_shift, std::uint32_t bits)
{
	std::uint32_t need = (bit_shift + bits + 7) / 8;
	return need > 8 ? 0 : std::bit_ceil(need);
}

// RAX in root's numbering (ioctl.h, enum vtice_fetch_reg): RETVAL's register.
constexpr std::uint8_t kRootRax = 6;

class ReadCompiler {
public:
	ReadCompiler(const ProbePoint &point, const ParamLookup &params, const KernelTypes &types)
		: function_(qualified_function(point)), at_return_(point.kind == PointKind::FnReturn),
		  at_addr_(point.kind == PointKind::Addr), params_(params), types_(types)
	{
	}

	Result<Place> place(const Expr &e)
	{
		switch (e.kind) {
		case ExprKind::Builtin:
			if (e.builtin == Builtin::Arg)
				return argument(e);
			if (e.builtin == Builtin::Retval)
				return return_value(e);
			if (e.builtin == Builtin::Curtask)
				return current_task(e);
			if (e.builtin == Builtin::Reg)
				return register_value(e);
			break;
		case ExprKind::Cast:
			return cast(e);
		case ExprKind::Member:
			return e.text == "->" ? arrow(e) : dot(e);
		case ExprKind::Index:
			return index(e);
		default:
			break;
		}
		return error_at(e.pos, at_return_ ? "a read through memory at a return starts at retval: retval->FIELD, "
						    "or ((struct T *)retval)->FIELD"
						  : "a read through memory starts at an argument: args->NAME->FIELD, "
						    "((struct T *)argN)->FIELD or ((struct T *)reg(\"rdi\"))->FIELD");
	}

	// The accumulator holds the place's value: a field is loaded (a
	// bitfield's bytes: the caller keeps p's bits to cut it out).
	Result<void> load(Place &p, const Pos &pos)
	{
		if (!p.in_memory)
			return {};
		auto s = types_.scalar(p.type_id);
		if (!s)
			return error_at(pos, "this is " + types_.name(p.type_id) + ", not a number or a pointer: "
					     "read one of its fields");
		std::uint32_t bytes = p.bits ? bitfield_bytes(p.bit_shift, p.bits) : s->bytes;
		if (!bytes)
			return error_at(pos, "a bitfield spread over more than 8 bytes: root loads at most 8");
		if (auto ok = add(p.offset, pos); !ok)
			return ok;
		ops_.push_back({FetchCode::Load, static_cast<std::uint8_t>(bytes), 0});
		p = Place{false, 0, p.type_id, 0, p.bit_shift, p.bits};
		return {};
	}

	Result<void> add(std::int64_t offset, const Pos &pos)
	{
		if (offset == 0)
			return {};
		if (offset > std::numeric_limits<std::int32_t>::max() || offset < std::numeric_limits<std::int32_t>::min())
			return error_at(pos, "a place " + std::to_string(offset) + " bytes from its base: root adds "
					     "at most 2 GiB");
		ops_.push_back({FetchCode::Add, 0, static_cast<std::int32_t>(offset)});
		return {};
	}

	std::string describe(const Place &p) const
	{
		if (p.cast_pointee)
			return types_.name(p.cast_pointee) + " *";
		return p.type_id ? types_.name(p.type_id) : std::string("a value BTF does not type");
	}

	const KernelTypes &types() const { return types_; }
	std::vector<FetchOp> take_ops() { return std::move(ops_); }

private:
	Result<Place> argument(const Expr &e)
	{
		if (at_return_)
			return error_at(e.pos, "'" + e.text + "' is gone at a function's return (its registers hold what "
							      "the function left): read through retval here, or through "
							      "the argument in fn:" + function_);
		if (at_addr_)
			return error_at(e.pos, "'" + e.text + "' is a function's argument at its entry; at an addr: read "
							      "through the register that holds it now, as in "
							      "((struct T *)reg(\"rdi\"))->FIELD");
		if (e.member.empty()) {
			ops_.push_back({FetchCode::Arg, static_cast<std::uint8_t>(e.number), 0});
			return Place{};
		}
		auto params = params_ ? params_(function_) : Result<std::vector<Param>>(make_error("no kernel BTF"));
		if (!params)
			return error_at(e.pos, e.text + ": " + params.error().message);
		for (std::size_t i = 0; i < params->size() && i < kArgRegisters; i++)
			if ((*params)[i].name == e.member) {
				ops_.push_back({FetchCode::Arg, static_cast<std::uint8_t>(i), 0});
				return Place{false, 0, (*params)[i].type_id, 0};
			}
		return error_at(e.pos, function_ + " has no argument '" + e.member + "' in a register");
	}

	// RAX at a RET, typed by the function's BTF prototype when it has one.
	Result<Place> return_value(const Expr &e)
	{
		if (!at_return_)
			return error_at(e.pos, "retval exists only at a return: read through it in fn:" + function_ +
						       ":return");
		ops_.push_back({FetchCode::Retval, 0, 0});
		return Place{false, 0, types_.return_type(function_).value_or(0), 0};
	}

	// reg("NAME") at the hit, untyped: a cast gives it a type. Root numbers
	// the general registers as reg() does (parser.cpp) without RIP and
	// RFLAGS (ioctl.h, enum vtice_fetch_reg).
	Result<Place> register_value(const Expr &e)
	{
		auto root = root_register(e.number);
		if (!root)
			return error_at(e.pos, "root reads the general registers at a hit, not " + e.text);
		ops_.push_back({FetchCode::Reg, *root, 0});
		return Place{};
	}

	// The task the CPU runs: a struct task_struct *, at entries and returns.
	Result<Place> current_task(const Expr &e)
	{
		auto task = types_.find("struct task_struct");
		if (!task)
			return error_at(e.pos, "curtask: " + task.error().message);
		ops_.push_back({FetchCode::Curtask, 0, 0});
		return Place{false, 0, 0, *task};
	}

	Result<Place> cast(const Expr &e)
	{
		auto type = types_.find(e.member);
		if (!type)
			return error_at(e.pos, e.text + ": " + type.error().message);
		if (!types_.is_struct(*type))
			return error_at(e.pos, e.member + " is not a struct or a union");
		auto inner = place(*e.kids[0]);
		if (!inner)
			return inner;
		if (auto ok = load(*inner, e.kids[0]->pos); !ok)
			return ok.error();
		return Place{false, 0, 0, *type};
	}

	Result<Place> arrow(const Expr &e)
	{
		auto base = place(*e.kids[0]);
		if (!base)
			return base;
		std::uint32_t target = base->cast_pointee;
		if (!target && base->type_id)
			target = types_.pointee(base->type_id).value_or(0);
		if (!target && !base->type_id)
			return error_at(e.pos, "'->' through " + e.kids[0]->text + ", which BTF does not type: cast it "
					       "first, as in ((struct T *)" + e.kids[0]->text + ")->" + e.member);
		if (!target || !types_.is_struct(target))
			return error_at(e.pos, "'->' reads through a pointer to a struct; this is " + describe(*base));
		if (auto ok = load(*base, e.pos); !ok)
			return ok.error();
		return member(e, target, 0);
	}

	// An index root computes: a sum of sources (an argument, a register or
	// retval), each times a number, plus or minus numbers, as written
	// (arg2, arg2 + 1, 2 * arg1 + arg2 - 3). Root adds each source times
	// its number of elements' size (INDEX); the constant's elements go in
	// with the other offsets. A source's number is at least 1: INDEX
	// multiplies by a positive size.
	struct ComputedIndex {
		std::vector<std::pair<const Expr *, std::int64_t>> sources;	// source, times
		std::int64_t constant = 0;
	};

	// The terms of at, each scaled by times (within 2^31 either way, so
	// nothing overflows on the way); an error at the first term root does not add.
	Result<void> index_terms(const Expr &at, std::int64_t times, ComputedIndex &out)
	{
		constexpr std::int64_t kMax = std::numeric_limits<std::int32_t>::max();
		auto scaled = [&](const Expr &number) -> Result<std::int64_t> {
			std::int64_t n = number.number;
			if (n > kMax || n < -kMax || n * times > kMax || n * times < -kMax)
				return error_at(number.pos, "index term " + std::to_string(n) +
							    (times == 1 ? "" : " times " + std::to_string(times)) +
							    " is more than 2 GiB away: root adds at most 2 GiB");
			return n * times;
		};
		if (at.kind == ExprKind::Int) {
			auto n = scaled(at);
			if (!n)
				return n.error();
			out.constant += *n;
			return {};
		}
		if (at.kind == ExprKind::Unary && at.text == "-")	// -N, or -arg2 (refused below)
			return index_terms(*at.kids[0], -times, out);
		if (at.kind == ExprKind::Binary && (at.text == "+" || at.text == "-")) {
			if (auto ok = index_terms(*at.kids[0], times, out); !ok)
				return ok;
			return index_terms(*at.kids[1], at.text == "+" ? times : -times, out);
		}
		if (at.kind == ExprKind::Binary && at.text == "*") {
			const Expr &left = *at.kids[0], &right = *at.kids[1];
			const Expr *number = right.kind == ExprKind::Int ? &right : left.kind == ExprKind::Int ? &left : nullptr;
			if (number) {
				auto n = scaled(*number);
				if (!n)
					return n.error();
				return index_terms(number == &right ? left : right, *n, out);
			}
		}
		if (!is_index_source(at))
			return error_at(at.pos, "an index root computes at the hit adds up arguments, registers and "
						"retval, each times a number, plus or minus numbers, as in [arg2], "
						"[args->n - 1] or [2 * arg1 + reg(\"rcx\")]; root does no other arithmetic "
						"on it");
		if (times < 1)
			return error_at(at.pos, "root adds " + at.text + " times a positive number of elements, not " +
						std::to_string(times) + ": subtract numbers, not registers");
		out.sources.emplace_back(&at, times);
		return {};
	}

	static bool is_index_source(const Expr &e)
	{
		return e.kind == ExprKind::Builtin &&
		       (e.builtin == Builtin::Arg || e.builtin == Builtin::Reg || e.builtin == Builtin::Retval);
	}

	// a[i]: an element of an array field, in place; or p[i]: the i-th
	// object from where the pointer p points. i a number as written, or
	// one root computes at the hit (a[arg2], a[arg2 + 1]).
	Result<Place> index(const Expr &e)
	{
		auto base = place(*e.kids[0]);
		if (!base)
			return base;
		const Expr &at = *e.kids[1];
		std::optional<ComputedIndex> computed;
		if (at.kind != ExprKind::Int) {
			computed.emplace();
			if (auto ok = index_terms(at, 1, *computed); !ok)
				return ok.error();
		}
		auto i = static_cast<std::uint64_t>(at.number);
		if (base->in_memory) {
			if (auto a = types_.array(base->type_id)) {
				if (computed)
					return computed_element(e, base->offset, a->element, *computed);
				if (a->count && i >= a->count)
					return error_at(e.pos, "index " + std::to_string(i) + " is past the end of " +
							       types_.name(base->type_id));
				return element(e, base->offset, a->element, i);
			}
		}
		std::uint32_t target = base->cast_pointee;
		auto pointee = base->type_id ? types_.pointee(base->type_id) : std::nullopt;
		if (!target && pointee)
			target = *pointee;
		if (!target)
			return error_at(e.pos, "'[' indexes an array or a pointer" +
					       std::string(pointee ? " to a sized type" : "") + "; this is " +
					       describe(*base) + (base->type_id && !pointee ? "" : ": cast it first"));
		if (auto ok = load(*base, e.pos); !ok)
			return ok.error();
		return computed ? computed_element(e, 0, target, *computed) : element(e, 0, target, i);
	}

	// An index root reads at the hit: INDEX's arg, the register that holds
	// it and how much of that register the index's type is.
	Result<std::uint8_t> index_source(const Expr &i)
	{
		auto mark = ops_.size();
		auto p = place(i);	// an argument, a register or retval (index_terms)
		if (!p)
			return p.error();
		FetchOp start = ops_.back();	// the Arg, Reg or Retval place() put there
		ops_.resize(mark);
		auto width = index_width(*p, i);
		if (!width)
			return width.error();
		std::uint8_t reg = start.code == FetchCode::Retval ? kRootRax : start.arg;	// ARG N is register N
		return static_cast<std::uint8_t>(reg | static_cast<std::uint8_t>(*width) << 4);
	}

	// argN is untyped as a base (cast it), but as an index its register
	// is cut to the parameter's width when BTF has the prototype.
	Result<IndexWidth> index_width(const Place &p, const Expr &i)
	{
		std::uint32_t type = p.type_id;
		if (!type && i.builtin == Builtin::Arg && params_) {
			auto params = params_(function_);
			if (params && static_cast<std::size_t>(i.number) < params->size())
				type = (*params)[static_cast<std::size_t>(i.number)].type_id;
		}
		if (!type)
			return IndexWidth::Full;
		auto s = types_.scalar(type);
		if (!s || types_.pointee(type))
			return error_at(i.pos, i.text + " is " + types_.name(type) + ", not an integer to index by");
		return width_of(s->bytes, s->is_signed);
	}

	// base plus constant elements, then each source's elements (INDEX by
	// the source's register, times its number of elements' size).
	Result<Place> computed_element(const Expr &e, std::int64_t base, std::uint32_t type, const ComputedIndex &ci)
	{
		constexpr std::int64_t kMax = std::numeric_limits<std::int32_t>::max();
		auto size = types_.size(type);
		if (!size)
			return error_at(e.pos, "elements of " + types_.name(type) + " have no size to index by");
		auto elements = static_cast<std::int64_t>(*size);
		if (*size > static_cast<std::uint64_t>(kMax))
			return error_at(e.pos, "elements of " + types_.name(type) + " are over 2 GiB: root multiplies "
					       "by at most 2 GiB");
		if (ci.constant > kMax / elements || ci.constant < -kMax / elements)
			return error_at(e.pos, "index offset " + std::to_string(ci.constant) + " is more than 2 GiB away: "
					       "root adds at most 2 GiB");
		if (auto ok = add(base + ci.constant * elements, e.pos); !ok)
			return ok.error();
		for (const auto &[source, times] : ci.sources) {
			if (times > kMax / elements)
				return error_at(source->pos, source->text + " times " + std::to_string(times) + " elements of " +
							     types_.name(type) + " is over 2 GiB: root multiplies by at most "
							     "2 GiB");
			auto reg = index_source(*source);
			if (!reg)
				return reg.error();
			ops_.push_back({FetchCode::Index, *reg, static_cast<std::int32_t>(times * elements)});
		}
		return Place{true, 0, type, 0};
	}

	Result<Place> element(const Expr &e, std::int64_t base, std::uint32_t type, std::uint64_t i)
	{
		auto size = types_.size(type);
		if (!size)
			return error_at(e.pos, "elements of " + types_.name(type) + " have no size to index by");
		if (i > static_cast<std::uint64_t>(std::numeric_limits<std::int32_t>::max()) / *size)
			return error_at(e.pos, "index " + std::to_string(i) + " is more than 2 GiB away: root adds at "
					       "most 2 GiB");
		return Place{true, base + static_cast<std::int64_t>(i * *size), type, 0};
	}

	Result<Place> dot(const Expr &e)
	{
		auto base = place(*e.kids[0]);
		if (!base)
			return base;
		if (!base->in_memory || !types_.is_struct(base->type_id))
			return error_at(e.pos, "'.' reads a field of a struct; this is " + describe(*base) +
					       (base->cast_pointee || types_.pointee(base->type_id) ? ": write '->'" : ""));
		return member(e, base->type_id, base->offset);
	}

	Result<Place> member(const Expr &e, std::uint32_t in, std::int64_t base)
	{
		auto f = types_.field(in, e.member);
		if (!f)
			return error_at(e.pos, f.error().message);
		return Place{true, base + static_cast<std::int64_t>(f->offset), f->type_id, 0, f->bit_shift, f->bits};
	}

	std::string function_;	// MODULE:NAME when the point names its module
	bool at_return_;
	bool at_addr_;
	const ParamLookup &params_;
	const KernelTypes &types_;
	std::vector<FetchOp> ops_;
};

bool is_char_pointer(const KernelTypes &types, std::uint32_t type_id)
{
	auto to = types.pointee(type_id);
	auto s = to ? types.scalar(*to) : std::nullopt;
	return s && s->bytes == 1;
}

}  // namespace

Result<CompiledRead> compile_read(const Expr &e, ReadAs as, const ProbePoint &point, const ParamLookup &params,
				  const KernelTypes *types)
{
	if (!types)
		return error_at(e.pos, "no kernel BTF here to read through memory with (give --btf FILE)");
	ReadCompiler c(point, params, *types);
	auto p = c.place(e);
	if (!p)
		return p.error();
	CompiledRead out;
	if (as == ReadAs::String) {
		if (p->in_memory && types->is_char_array(p->type_id)) {
			if (auto ok = c.add(p->offset, e.pos); !ok)
				return ok.error();
		} else if ((!p->type_id && !p->cast_pointee) || is_char_pointer(*types, p->type_id)) {
			if (auto ok = c.load(*p, e.pos); !ok)
				return ok.error();
		} else {
			return error_at(e.pos, "str() reads a char array or a char pointer; this is " + c.describe(*p));
		}
		out.ops = c.take_ops();
		return out;
	}
	if (p->cast_pointee) {
		out.scalar = {8, false};
	} else if (auto s = types->scalar(p->type_id)) {
		out.scalar = *s;
	} else {
		return error_at(e.pos, "this is " + c.describe(*p) + (types->is_char_array(p->type_id) ?
								      ": read it with str()" : ": read one of its fields"));
	}
	if (auto ok = c.load(*p, e.pos); !ok)
		return ok.error();
	if (p->bits) {
		out.scalar.bytes = bitfield_bytes(p->bit_shift, p->bits);
		out.bit_shift = static_cast<std::uint8_t>(p->bit_shift);
		out.bits = static_cast<std::uint8_t>(p->bits);
	}
	out.ops = c.take_ops();
	return out;
}

std::optional<std::uint8_t> root_register(std::int64_t reg)
{
	static_assert(kRegRax < kRegRip && kRegRax == kRootRax, "reg(\"rax\") is root's RAX");
	if (reg == kRegRip || reg >= kRegRflags || reg < 0)
		return std::nullopt;
	return static_cast<std::uint8_t>(reg < kRegRip ? reg : reg - 1);
}

IndexWidth width_of(std::uint32_t bytes, bool is_signed)
{
	switch (bytes) {
	case 4:
		return is_signed ? IndexWidth::S32 : IndexWidth::U32;
	case 2:
		return is_signed ? IndexWidth::S16 : IndexWidth::U16;
	case 1:
		return is_signed ? IndexWidth::S8 : IndexWidth::U8;
	default:
		return IndexWidth::Full;
	}
}

bool CompiledRead::operator==(const CompiledRead &o) const
{
	return ops == o.ops && scalar.bytes == o.scalar.bytes && scalar.is_signed == o.scalar.is_signed &&
	       bit_shift == o.bit_shift && bits == o.bits;
}

Result<std::uint8_t> FetchProgram::add_value(const Pos &pos, std::vector<FetchOp> ops)
{
	for (std::size_t slot = 0; slot < values_.size(); slot++)
		if (values_[slot] == ops)
			return static_cast<std::uint8_t>(slot);
	if (values_.size() == kMaxFetchValues)
		return error_at(pos, "a probe reads at most " + std::to_string(kMaxFetchValues) +
				     " values through its arguments (root's VALUE slots)");
	auto slot = static_cast<std::uint8_t>(values_.size());
	values_.push_back(ops);
	ops.push_back({FetchCode::Value, slot, 0});
	if (auto ok = append(pos, ops); !ok)
		return ok.error();
	return slot;
}

Result<void> FetchProgram::add_string(const Pos &pos, std::vector<FetchOp> ops)
{
	if (string_)
		return *string_ == ops ? Result<void>{}
				       : error_at(pos, "one str() per probe: this probe reads another string already");
	string_ = ops;
	ops.push_back({FetchCode::String, 0, 0});
	return append(pos, ops);
}

Result<void> FetchProgram::append(const Pos &pos, const std::vector<FetchOp> &ops)
{
	if (ops_.size() + ops.size() > kMaxFetchOps)
		return error_at(pos, "this probe reads too much through its arguments: root runs at most " +
				     std::to_string(kMaxFetchOps) + " fetch ops a hit, this read would make " +
				     std::to_string(ops_.size() + ops.size()));
	ops_.insert(ops_.end(), ops.begin(), ops.end());
	return {};
}

}  // namespace vtice::probes
