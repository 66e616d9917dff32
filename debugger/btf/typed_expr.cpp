#include "typed_expr.hpp"

#include <cstring>

#include "hex.hpp"
#include "session.hpp"
#include "task.hpp"

namespace vtice::dbg::btf {

namespace {

constexpr std::uint64_t kMaxObjectBytes = 1u << 20;  // print reads at most this much

std::string_view trim(std::string_view s)
{
	while (!s.empty() && (s.front() == ' ' || s.front() == '\t'))
		s.remove_prefix(1);
	while (!s.empty() && (s.back() == ' ' || s.back() == '\t'))
		s.remove_suffix(1);
	return s;
}

bool is_name_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

// Index of the ')' that closes text[0] == '(', or npos.
std::size_t closing_paren(std::string_view text)
{
	int depth = 0;
	for (std::size_t i = 0; i < text.size(); i++) {
		if (text[i] == '(')
			depth++;
		else if (text[i] == ')' && --depth == 0)
			return i;
	}
	return std::string_view::npos;
}

class Evaluator {
public:
	Evaluator(const Types &types, Session &session) : types_(types), session_(session) {}

	Result<TypedValue> expression(std::string_view text);

private:
	Result<TypedValue> cast(TypedValue pointer, std::string_view operand);
	Result<std::optional<TypedValue>> cast_type(std::string_view inside);
	Result<TypedValue> postfix(TypedValue value, std::string_view rest);
	Result<TypedValue> deref(const TypedValue &value);
	Result<TypedValue> member(const TypedValue &value, std::string_view name);
	Result<TypedValue> index(const TypedValue &value, std::uint64_t n);
	Result<std::uint64_t> pointer_value(const TypedValue &value);
	Result<TypedValue> current();

	const Types &types_;
	Session &session_;
};

Result<TypedValue> Evaluator::expression(std::string_view text)
{
	text = trim(text);
	if (text.empty())
		return make_error("empty expression");
	if (text.front() == '*') {
		auto inner = expression(text.substr(1));
		if (!inner)
			return inner;
		return deref(*inner);
	}
	if (text.substr(0, 8) == "$current" && (text.size() == 8 || !is_name_char(text[8]))) {
		auto task = current();
		if (!task)
			return task;
		return postfix(*task, text.substr(8));
	}
	if (text.front() != '(')
		return make_error("'" + std::string(text) + "' is not a typed expression");
	std::size_t close = closing_paren(text);
	if (close == std::string_view::npos)
		return make_error("unbalanced parentheses in '" + std::string(text) + "'");
	std::string_view inside = text.substr(1, close - 1);
	auto type = cast_type(inside);
	if (!type)
		return type.error();
	if (*type)
		return cast(**type, text.substr(close + 1));
	auto group = expression(inside);
	if (!group)
		return group;
	return postfix(*group, text.substr(close + 1));
}

// "struct file *" -> the value a cast to it makes of an address; nullopt
// when inside is not a type followed by stars (a parenthesised expression).
Result<std::optional<TypedValue>> Evaluator::cast_type(std::string_view inside)
{
	inside = trim(inside);
	std::size_t stars = 0;
	while (!inside.empty() && (inside.back() == '*' || inside.back() == ' ')) {
		stars += inside.back() == '*';
		inside.remove_suffix(1);
	}
	if (stars == 0 || inside.empty())
		return std::optional<TypedValue>{};
	for (char c : inside)
		if (!is_name_char(c) && c != ' ')
			return std::optional<TypedValue>{};
	auto id = types_.find(inside);
	if (!id)
		return id.error();
	TypedValue v;
	v.type_id = *id;
	for (std::size_t i = 0; i < stars; i++) {
		auto pointer = types_.pointer_to(v.type_id);
		if (!pointer && i + 1 == stars) {
			v.cast_pointee = v.type_id;  // the last star needs no BTF type
			v.type_id = 0;
			break;
		}
		if (!pointer)
			return pointer.error();
		v.type_id = *pointer;
	}
	return std::optional<TypedValue>{v};
}

Result<TypedValue> Evaluator::cast(TypedValue pointer, std::string_view operand)
{
	operand = trim(operand);
	if (operand.empty())
		return make_error("a cast needs an address after it");
	auto address = session_.evaluate(operand);
	if (!address)
		return address.error();
	pointer.value = *address;
	return pointer;
}

Result<TypedValue> Evaluator::postfix(TypedValue value, std::string_view rest)
{
	for (rest = trim(rest); !rest.empty(); rest = trim(rest)) {
		Result<TypedValue> next = make_error("");
		if (rest.substr(0, 2) == "->" || rest.front() == '.') {
			bool arrow = rest.front() == '-';
			rest.remove_prefix(arrow ? 2 : 1);
			rest = trim(rest);
			std::size_t n = 0;
			while (n < rest.size() && is_name_char(rest[n]))
				n++;
			if (n == 0)
				return make_error("a member name must follow '" + std::string(arrow ? "->" : ".") + "'");
			auto base = arrow ? deref(value) : Result<TypedValue>(value);
			if (!base)
				return base;
			next = member(*base, rest.substr(0, n));
			rest.remove_prefix(n);
		} else if (rest.front() == '[') {
			auto end = rest.find(']');
			if (end == std::string_view::npos)
				return make_error("'[' without ']'");
			auto n = session_.evaluate(rest.substr(1, end - 1));
			if (!n)
				return n.error();
			next = index(value, *n);
			rest.remove_prefix(end + 1);
		} else {
			return make_error("unexpected '" + std::string(rest) + "' (cast operands run to the closing "
					  "parenthesis: write ((struct T *)ADDR)->member)");
		}
		if (!next)
			return next;
		value = *next;
	}
	return value;
}

Result<std::uint64_t> Evaluator::pointer_value(const TypedValue &value)
{
	if (!value.address)
		return value.value;
	auto bytes = session_.read_memory(*value.address, 8);
	if (!bytes)
		return bytes.error();
	std::uint64_t pointer;
	std::memcpy(&pointer, bytes->data(), 8);
	return pointer;
}

Result<TypedValue> Evaluator::deref(const TypedValue &value)
{
	auto pointee = value.cast_pointee ? Result<std::uint32_t>(value.cast_pointee) : types_.pointee(value.type_id);
	if (!pointee)
		return pointee.error();
	auto pointer = pointer_value(value);
	if (!pointer)
		return pointer.error();
	if (*pointer == 0)
		return make_error("dereferencing a NULL " + types_.name_of(*pointee) + " *");
	TypedValue v;
	v.type_id = *pointee;
	v.address = *pointer;
	return v;
}

Result<TypedValue> Evaluator::member(const TypedValue &value, std::string_view name)
{
	if (!value.address)
		return make_error("'.' needs an object, not a pointer value: use '->'");
	auto m = types_.member(value.type_id, name);
	if (!m)
		return m.error();
	TypedValue v;
	v.type_id = m->type_id;
	v.address = *value.address + m->bit_offset / 8;
	v.bit_shift = static_cast<std::uint32_t>(m->bit_offset % 8);
	v.bitfield_bits = m->bitfield_bits;
	return v;
}

Result<TypedValue> Evaluator::index(const TypedValue &value, std::uint64_t n)
{
	TypedValue base = value;
	std::uint64_t count = 0;
	auto element = types_.element(value.type_id, &count);
	if (element) {
		if (!value.address)
			return make_error("indexing an array that is not in memory");
		if (n >= count)
			return make_error("index " + std::to_string(n) + " is past the " + std::to_string(count) +
					  " elements of " + types_.name_of(value.type_id));
	} else {
		auto pointed = deref(value);
		if (!pointed)
			return make_error("only arrays and pointers can be indexed");
		base = *pointed;
		element = base.type_id;
	}
	auto size = types_.size_of(*element);
	if (!size)
		return size.error();
	TypedValue v;
	v.type_id = *element;
	v.address = *base.address + n * *size;
	return v;
}

Result<TypedValue> Evaluator::current()
{
	auto task_type = types_.find("struct task_struct");
	if (!task_type)
		return task_type.error();
	auto pointer = types_.pointer_to(*task_type);
	if (!pointer)
		return pointer.error();
	TaskInspector tasks(session_);
	auto task = tasks.current_task();
	if (!task)
		return task.error();
	TypedValue v;
	v.type_id = *pointer;
	v.value = *task;
	return v;
}

std::string quoted(const std::vector<std::uint8_t> &bytes)
{
	std::string out = "\"";
	for (std::uint8_t c : bytes) {
		if (c == 0)
			break;
		if (c == '"' || c == '\\') {
			out += '\\';
			out += static_cast<char>(c);
		} else if (c >= 0x20 && c < 0x7f) {
			out += static_cast<char>(c);
		} else {
			char esc[8];
			std::snprintf(esc, sizeof(esc), "\\x%02x", c);
			out += esc;
		}
	}
	return out + "\"";
}

std::string render_scalar(const std::vector<std::uint8_t> &bytes, const TypedValue &v, Types::Scalar s)
{
	std::uint64_t raw = 0;
	std::memcpy(&raw, bytes.data(), std::min<std::size_t>(bytes.size(), 8));
	std::uint32_t bits = v.bitfield_bits ? v.bitfield_bits : 8 * s.bytes;
	if (v.bitfield_bits)
		raw >>= v.bit_shift;
	if (bits < 64)
		raw &= (1ull << bits) - 1;
	std::int64_t as_signed = static_cast<std::int64_t>(raw);
	if (s.is_signed && bits < 64 && (raw >> (bits - 1)) & 1)
		as_signed = static_cast<std::int64_t>(raw | ~((1ull << bits) - 1));
	char out[64];
	if (s.is_signed)
		std::snprintf(out, sizeof(out), "%lld (0x%llx)", static_cast<long long>(as_signed),
			      static_cast<unsigned long long>(raw));
	else
		std::snprintf(out, sizeof(out), "%llu (0x%llx)", static_cast<unsigned long long>(raw),
			      static_cast<unsigned long long>(raw));
	return out;
}

}  // namespace

bool looks_typed(std::string_view text)
{
	return text.find("struct ") != std::string_view::npos || text.find("union ") != std::string_view::npos ||
	       text.find("->") != std::string_view::npos || text.find("$current") != std::string_view::npos;
}

Result<TypedValue> evaluate_typed(std::string_view text, const Types &types, Session &session)
{
	return Evaluator(types, session).expression(text);
}

Result<std::string> render(const TypedValue &value, const Types &types, Session &session)
{
	if (value.cast_pointee)
		return "(" + types.name_of(value.cast_pointee) + " *) " + hex(value.value);
	std::string type = types.name_of(value.type_id);
	if (!value.address)
		return "(" + type + ") " + hex(value.value);
	auto size = types.size_of(value.type_id);
	if (!size)
		return size.error();
	if (*size > kMaxObjectBytes)
		return make_error(type + " is " + std::to_string(*size) + " bytes; print shows at most " +
				  std::to_string(kMaxObjectBytes));
	auto bytes = session.read_memory(*value.address, value.bitfield_bits ? 8 : *size);
	if (!bytes)
		return bytes.error();
	if (types.is_char_array(value.type_id))
		return quoted(*bytes);
	if (types.is_pointer(value.type_id)) {
		std::uint64_t pointer;
		std::memcpy(&pointer, bytes->data(), 8);
		return "(" + type + ") " + hex(pointer);
	}
	if (auto s = types.scalar(value.type_id))
		return render_scalar(*bytes, value, *s);
	auto text = types.format_value(value.type_id, *bytes);
	if (!text)
		return text.error();
	return "(" + type + ") " + *text;
}

}  // namespace vtice::dbg::btf
