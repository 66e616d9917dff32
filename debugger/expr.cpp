#include "expr.hpp"

#include <cctype>
#include <string>
#include <vector>

namespace vtice::dbg {

namespace {

// Binary operators by C precedence, lowest first.
struct BinaryOp {
	const char *text;
	int level;
};
const BinaryOp kBinary[] = {
	{"||", 0}, {"&&", 1}, {"|", 2}, {"^", 3}, {"&", 4}, {"==", 5}, {"!=", 5},
	{"<=", 6}, {">=", 6}, {"<<", 7}, {">>", 7}, {"<", 6}, {">", 6},
	{"+", 8}, {"-", 8}, {"*", 9}, {"/", 9}, {"%", 9},
};
constexpr int kLevels = 10;

class Parser {
public:
	Parser(std::string_view text, const ExprContext &ctx) : text_(text), ctx_(ctx) {}

	Result<std::uint64_t> parse()
	{
		auto value = binary(0);
		if (!value)
			return value;
		skip_space();
		if (pos_ < text_.size())
			return fail("unexpected '" + std::string(text_.substr(pos_, 8)) + "'");
		return value;
	}

private:
	Error fail(const std::string &message) const { return make_error(message, pos_); }

	void skip_space()
	{
		while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_])))
			pos_++;
	}

	bool accept(std::string_view token)
	{
		skip_space();
		if (text_.compare(pos_, token.size(), token) != 0)
			return false;
		pos_ += token.size();
		return true;
	}

	const BinaryOp *peek_binary(int level)
	{
		skip_space();
		// Longest operator first so "<=" is not read as "<".
		const BinaryOp *best = nullptr;
		for (const auto &op : kBinary) {
			std::string_view t(op.text);
			if (text_.compare(pos_, t.size(), t) == 0 && (!best || t.size() > std::string_view(best->text).size()))
				best = &op;
		}
		if (best && best->level == level)
			return best;
		return nullptr;
	}

	Result<std::uint64_t> apply(const BinaryOp &op, std::uint64_t a, std::uint64_t b, std::size_t at)
	{
		std::string_view t(op.text);
		if ((t == "/" || t == "%") && b == 0)
			return make_error("division by zero", at);
		if (t == "||") return std::uint64_t(a || b);
		if (t == "&&") return std::uint64_t(a && b);
		if (t == "|") return a | b;
		if (t == "^") return a ^ b;
		if (t == "&") return a & b;
		if (t == "==") return std::uint64_t(a == b);
		if (t == "!=") return std::uint64_t(a != b);
		if (t == "<=") return std::uint64_t(a <= b);
		if (t == ">=") return std::uint64_t(a >= b);
		if (t == "<") return std::uint64_t(a < b);
		if (t == ">") return std::uint64_t(a > b);
		if (t == "<<") return b >= 64 ? 0 : a << b;
		if (t == ">>") return b >= 64 ? 0 : a >> b;
		if (t == "+") return a + b;
		if (t == "-") return a - b;
		if (t == "*") return a * b;
		if (t == "/") return a / b;
		return a % b;
	}

	Result<std::uint64_t> binary(int level)
	{
		if (level >= kLevels)
			return unary();
		auto left = binary(level + 1);
		if (!left)
			return left;
		while (const BinaryOp *op = peek_binary(level)) {
			std::size_t at = pos_;
			pos_ += std::string_view(op->text).size();
			auto right = binary(level + 1);
			if (!right)
				return right;
			auto value = apply(*op, *left, *right, at);
			if (!value)
				return value;
			left = *value;
		}
		return left;
	}

	Result<unsigned> deref_size()
	{
		// "(long *)" and friends, tried before a parenthesised expression.
		skip_space();
		if (auto cast = integer_pointer_cast(text_.substr(pos_))) {
			pos_ += cast->length;
			return cast->size;
		}
		return 8u;
	}

	Result<std::uint64_t> unary()
	{
		if (++depth_ > 200)
			return fail("expression nests too deeply");
		Result<std::uint64_t> out = make_error("");
		std::size_t at = pos_;
		if (accept("-")) {
			out = unary();
			if (out) out = 0 - *out;
		} else if (accept("!")) {
			out = unary();
			if (out) out = std::uint64_t(!*out);
		} else if (accept("~")) {
			out = unary();
			if (out) out = ~*out;
		} else if (accept("&")) {
			// gdb's &name: a symbol already stands for its address here.
			skip_space();
			if (pos_ < text_.size() && (std::isalpha(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_'))
				out = primary();
			else
				out = fail("'&' takes a symbol name");
		} else if (accept("*")) {
			auto size = deref_size();
			auto address = unary();
			if (!address)
				out = address;
			else if (!ctx_.mem)
				out = make_error("memory is not readable here", at);
			else if (out = ctx_.mem(*address, *size); !out)
				out = make_error(out.error().message, at);
		} else {
			out = primary();
		}
		depth_--;
		return out;
	}

	Result<std::uint64_t> number()
	{
		std::size_t start = pos_;
		int base = 10;
		if (text_.compare(pos_, 2, "0x") == 0 || text_.compare(pos_, 2, "0X") == 0) {
			base = 16;
			pos_ += 2;
		}
		std::uint64_t value = 0;
		std::size_t digits = 0;
		while (pos_ < text_.size() && std::isxdigit(static_cast<unsigned char>(text_[pos_]))) {
			char c = static_cast<char>(std::tolower(static_cast<unsigned char>(text_[pos_])));
			unsigned d = std::isdigit(static_cast<unsigned char>(c)) ? unsigned(c - '0') : unsigned(c - 'a' + 10);
			if (d >= unsigned(base))
				return make_error("bad digit in number", pos_);
			if (value > (~0ull - d) / base)
				return make_error("number does not fit in 64 bits", start);
			value = value * base + d;
			pos_++;
			digits++;
		}
		if (!digits)
			return make_error("number without digits", start);
		if (pos_ < text_.size() && (std::isalpha(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_'))
			return make_error("bad digit in number", pos_);
		return value;
	}

	std::string_view identifier()
	{
		std::size_t start = pos_;
		while (pos_ < text_.size()) {
			char c = text_[pos_];
			if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '.' && c != ':')
				break;
			pos_++;
		}
		return text_.substr(start, pos_ - start);
	}

	Result<std::uint64_t> primary()
	{
		skip_space();
		std::size_t at = pos_;
		if (pos_ >= text_.size())
			return fail("expression ends early");
		char c = text_[pos_];
		if (c == '(') {
			pos_++;
			auto value = binary(0);
			if (!value)
				return value;
			if (!accept(")"))
				return fail("missing ')'");
			return value;
		}
		if (std::isdigit(static_cast<unsigned char>(c)))
			return number();
		if (c == '$') {
			pos_++;
			auto name = identifier();
			if (name.empty())
				return make_error("register name expected after '$'", at);
			if (!ctx_.reg)
				return make_error("no registers here", at);
			auto value = ctx_.reg(name);
			if (!value)
				return make_error(value.error().message, at);
			return value;
		}
		if (std::isalpha(static_cast<unsigned char>(c)) || c == '_' || c == '.') {
			auto name = identifier();
			auto value = ctx_.sym ? ctx_.sym(name) : std::nullopt;
			if (!value)
				return make_error("unknown symbol '" + std::string(name) + "'", at);
			return *value;
		}
		return fail(std::string("unexpected '") + c + "'");
	}

	std::string_view text_;
	const ExprContext &ctx_;
	std::size_t pos_ = 0;
	int depth_ = 0;
};

}  // namespace

namespace {

// Byte sizes of the C integer types on x86-64 (LP64), by their words.
std::optional<unsigned> integer_type_size(const std::vector<std::string_view> &words)
{
	static const struct { const char *name; unsigned size; } kFixed[] = {
		{"u8", 1}, {"s8", 1}, {"u16", 2}, {"s16", 2}, {"u32", 4}, {"s32", 4}, {"u64", 8}, {"s64", 8},
		{"uint8_t", 1}, {"int8_t", 1}, {"uint16_t", 2}, {"int16_t", 2}, {"uint32_t", 4}, {"int32_t", 4},
		{"uint64_t", 8}, {"int64_t", 8}, {"void", 8}, {"bool", 1}, {"_Bool", 1},
	};
	if (words.size() == 1)
		for (const auto &t : kFixed)
			if (words[0] == t.name)
				return t.size;
	unsigned longs = 0, size = 0;
	for (std::string_view w : words) {
		if (w == "unsigned" || w == "signed")
			continue;
		if (w == "long")
			longs++;
		else if (w == "char" && !size && !longs)
			size = 1;
		else if (w == "short" && !size && !longs)
			size = 2;
		else if (w == "int" && !size)
			size = 4;
		else
			return std::nullopt;
	}
	if (longs > 2 || (longs && size && size != 4))
		return std::nullopt;
	if (longs)
		return 8u;
	return size ? std::optional<unsigned>(size) : (words.empty() ? std::nullopt : std::optional<unsigned>(4));
}

}  // namespace

std::optional<PointerCast> integer_pointer_cast(std::string_view text)
{
	std::size_t at = 0;
	auto space = [&] {
		while (at < text.size() && std::isspace(static_cast<unsigned char>(text[at])))
			at++;
	};
	space();
	if (at >= text.size() || text[at] != '(')
		return std::nullopt;
	at++;
	std::vector<std::string_view> words;
	for (;;) {
		space();
		std::size_t start = at;
		while (at < text.size() && (std::isalnum(static_cast<unsigned char>(text[at])) || text[at] == '_'))
			at++;
		if (at == start)
			break;
		words.push_back(text.substr(start, at - start));
	}
	if (at >= text.size() || text[at] != '*')
		return std::nullopt;
	at++;
	space();
	if (at >= text.size() || text[at] != ')')
		return std::nullopt;
	auto size = integer_type_size(words);
	if (!size)
		return std::nullopt;
	return PointerCast{*size, at + 1};
}

Result<std::uint64_t> evaluate_expression(std::string_view text, const ExprContext &ctx)
{
	return Parser(text, ctx).parse();
}

}  // namespace vtice::dbg
