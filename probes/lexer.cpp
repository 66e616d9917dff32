#include "lexer.hpp"

#include <cctype>
#include <limits>

#include "diagnostic.hpp"

namespace vtice::probes {
namespace {

bool is_name_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool is_name_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

class Lexer {
public:
	explicit Lexer(std::string_view src) : src_(src) {}

	Result<std::vector<Token>> run()
	{
		std::vector<Token> out;
		for (;;) {
			if (auto skipped = skip_space_and_comments(); !skipped)
				return skipped.error();
			Token t;
			t.pos = pos_;
			if (at_ >= src_.size()) {
				out.push_back(t);
				return out;
			}
			auto token = next(t);
			if (!token)
				return token.error();
			out.push_back(std::move(*token));
		}
	}

private:
	char peek(std::size_t ahead = 0) const { return at_ + ahead < src_.size() ? src_[at_ + ahead] : '\0'; }

	void advance()
	{
		if (src_[at_] == '\n') {
			pos_.line++;
			pos_.column = 1;
		} else {
			pos_.column++;
		}
		pos_.offset = static_cast<std::uint32_t>(++at_);
	}

	Result<void> skip_space_and_comments()
	{
		for (;;) {
			if (at_ < src_.size() && std::isspace(static_cast<unsigned char>(peek()))) {
				advance();
			} else if (peek() == '/' && peek(1) == '/') {
				while (at_ < src_.size() && peek() != '\n')
					advance();
			} else if (peek() == '/' && peek(1) == '*') {
				Pos start = pos_;
				advance();
				advance();
				while (at_ < src_.size() && !(peek() == '*' && peek(1) == '/'))
					advance();
				if (at_ >= src_.size())
					return error_at(start, "this comment is never closed ('*/')");
				advance();
				advance();
			} else {
				return {};
			}
		}
	}

	Result<Token> next(Token t)
	{
		char c = peek();
		if (is_name_start(c))
			return name(std::move(t));
		if (std::isdigit(static_cast<unsigned char>(c)))
			return number(std::move(t));
		if (c == '"')
			return string(std::move(t));
		if (c == '@')
			return map_name(std::move(t));
		return punct(std::move(t));
	}

	Result<Token> name(Token t)
	{
		t.kind = TokenKind::Name;
		while (is_name_char(peek()))
			t.text += peek(), advance();
		return t;
	}

	Result<Token> number(Token t)
	{
		t.kind = TokenKind::Number;
		std::size_t start = at_;
		unsigned base = 10;
		if (peek() == '0' && (peek(1) == 'x' || peek(1) == 'X')) {
			base = 16;
			advance();
			advance();
		}
		std::uint64_t value = 0;
		bool any = false;
		for (;;) {
			char c = static_cast<char>(std::tolower(static_cast<unsigned char>(peek())));
			unsigned digit;
			if (c >= '0' && c <= '9')
				digit = static_cast<unsigned>(c - '0');
			else if (base == 16 && c >= 'a' && c <= 'f')
				digit = static_cast<unsigned>(c - 'a' + 10);
			else
				break;
			if (value > (std::numeric_limits<std::uint64_t>::max() - digit) / base)
				return error_at(t.pos, "this number does not fit in 64 bits");
			value = value * base + digit;
			any = true;
			advance();
		}
		if (!any || is_name_char(peek()))
			return error_at(t.pos, "not a number: digits run into letters");
		t.number = static_cast<std::int64_t>(value);
		t.text = std::string(src_.substr(start, at_ - start));	// as written: 0x1c stays 0x1c
		return t;
	}

	Result<Token> string(Token t)
	{
		t.kind = TokenKind::String;
		advance();
		for (;;) {
			if (at_ >= src_.size() || peek() == '\n')
				return error_at(t.pos, "this string is never closed ('\"')");
			char c = peek();
			advance();
			if (c == '"')
				break;
			if (c == '\\') {
				auto escaped = escape(t.pos);
				if (!escaped)
					return escaped.error();
				c = *escaped;
			}
			if (t.text.size() >= kMaxStringBytes)
				return error_at(t.pos, "strings are at most " + std::to_string(kMaxStringBytes) + " bytes");
			t.text += c;
		}
		return t;
	}

	Result<char> escape(const Pos &string_pos)
	{
		char c = peek();
		if (at_ >= src_.size())
			return error_at(string_pos, "this string is never closed ('\"')");
		Pos here = pos_;
		advance();
		switch (c) {
		case 'n': return '\n';
		case 't': return '\t';
		case '\\': return '\\';
		case '"': return '"';
		default: return error_at(here, std::string("unknown escape '\\") + c + "' (\\n \\t \\\\ \\\")");
		}
	}

	Result<Token> map_name(Token t)
	{
		t.kind = TokenKind::Map;
		t.text = "@";
		advance();
		while (is_name_char(peek()))
			t.text += peek(), advance();
		return t;
	}

	Result<Token> punct(Token t)
	{
		static const char *const two[] = {"==", "!=", "<=", ">=", "&&", "||", "<<", ">>", "->"};
		t.kind = TokenKind::Punct;
		for (const char *op : two)
			if (peek() == op[0] && peek(1) == op[1]) {
				t.text = op;
				advance();
				advance();
				return t;
			}
		static const std::string_view one = "+-*/%&|^!~<>=(){}[],;:.?";
		char c = peek();
		if (one.find(c) == std::string_view::npos) {
			unsigned char byte = static_cast<unsigned char>(c);
			std::string shown = std::isprint(byte) ? std::string("'") + c + "'"
							       : "byte " + std::to_string(byte);
			return error_at(t.pos, "unexpected " + shown);
		}
		t.text = std::string(1, c);
		advance();
		return t;
	}

	std::string_view src_;
	std::size_t at_ = 0;
	Pos pos_;
};

}  // namespace

Result<std::vector<Token>> tokenize(std::string_view source)
{
	if (source.size() > kMaxProgramBytes)
		return make_error("the program is " + std::to_string(source.size()) + " bytes; at most " +
				  std::to_string(kMaxProgramBytes));
	return Lexer(source).run();
}

}  // namespace vtice::probes
