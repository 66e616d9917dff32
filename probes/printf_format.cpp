#include "printf_format.hpp"

#include <cctype>
#include <cstdio>

namespace vtice::probes {
namespace {

bool is_digit(char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }

// Up to three digits at text[at]; false when there are more.
bool skip_digits(std::string_view text, std::size_t &at, std::string &spec)
{
	std::size_t n = 0;
	while (at < text.size() && is_digit(text[at]) && n < 4)
		spec += text[at++], n++;
	return n <= 3;
}

}  // namespace

Result<std::vector<FormatPiece>> parse_format(std::string_view format)
{
	std::vector<FormatPiece> out(1);
	for (std::size_t i = 0; i < format.size();) {
		char c = format[i];
		if (c != '%') {
			out.back().text += c;
			i++;
			continue;
		}
		std::size_t start = i++;
		if (i < format.size() && format[i] == '%') {
			out.back().text += '%';
			i++;
			continue;
		}
		std::string spec = "%";
		while (i < format.size() && std::string_view("-+ #0").find(format[i]) != std::string_view::npos)
			spec += format[i++];
		bool short_enough = skip_digits(format, i, spec);
		if (short_enough && i < format.size() && format[i] == '.') {
			spec += format[i++];
			short_enough = skip_digits(format, i, spec);
		}
		if (!short_enough)
			return make_error("a width or precision of more than three digits", start);
		while (i < format.size() && std::string_view("lhzj").find(format[i]) != std::string_view::npos)
			i++;
		if (i >= format.size())
			return make_error("'%' at the end of the format: write '%%' for a percent sign", start);
		char conv = format[i++];
		if (std::string_view("diuxXos").find(conv) == std::string_view::npos)
			return make_error(std::string("unknown conversion '%") + conv + "' (%d %i %u %x %X %o %s %%)",
					  start);
		out.back().spec = conv == 's' ? spec + "s" : spec + "ll" + conv;
		out.back().conversion = conv;
		out.emplace_back();
	}
	return out;
}

std::vector<Type> format_types(const std::vector<FormatPiece> &pieces)
{
	std::vector<Type> types;
	for (const FormatPiece &p : pieces)
		if (p.conversion)
			types.push_back(p.conversion == 's' ? Type::String : Type::Int);
	return types;
}

std::string apply_format(const std::vector<FormatPiece> &pieces, const std::vector<Value> &values)
{
	std::string out;
	std::size_t next = 0;
	char buf[1200];	// a width and precision of three digits each, a 256-byte string
	for (const FormatPiece &p : pieces) {
		out += p.text;
		if (!p.conversion || next >= values.size())
			continue;
		const Value &v = values[next++];
		int n;
		if (p.conversion == 's') {
			const std::string *s = std::get_if<std::string>(&v);
			n = std::snprintf(buf, sizeof(buf), p.spec.c_str(), s ? s->c_str() : "");
		} else {
			const std::int64_t *i = std::get_if<std::int64_t>(&v);
			long long value = i ? *i : 0;
			bool is_signed = p.conversion == 'd' || p.conversion == 'i';
			n = is_signed ? std::snprintf(buf, sizeof(buf), p.spec.c_str(), value)
				      : std::snprintf(buf, sizeof(buf), p.spec.c_str(),
						      static_cast<unsigned long long>(value));
		}
		if (n > 0)
			out.append(buf, std::min<std::size_t>(static_cast<std::size_t>(n), sizeof(buf) - 1));
	}
	return out;
}

}  // namespace vtice::probes
