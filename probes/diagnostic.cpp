#include "diagnostic.hpp"

#include <algorithm>

namespace vtice::probes {

Error error_at(const Pos &pos, std::string message)
{
	return make_error(std::move(message), pos.offset);
}

std::string format_diagnostic(std::string_view source, const Error &error, std::string_view name)
{
	if (!error.offset)
		return std::string(name) + ": error: " + error.message + "\n";
	std::size_t at = std::min<std::size_t>(*error.offset, source.size());
	std::size_t begin = source.rfind('\n', at ? at - 1 : 0);
	begin = (begin == std::string_view::npos || begin >= at) ? 0 : begin + 1;
	if (at == 0)
		begin = 0;
	std::size_t end = source.find('\n', at);
	if (end == std::string_view::npos)
		end = source.size();
	std::size_t line = 1 + std::count(source.begin(), source.begin() + begin, '\n');
	std::size_t column = at - begin + 1;
	// Long lines are cut around the spot so the caret stays under it.
	std::size_t show_from = column > 60 ? at - 40 : begin;
	std::string text(source.substr(show_from, std::min<std::size_t>(end - show_from, 120)));
	for (char &c : text)
		if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f)
			c = ' ';
	std::string out = std::string(name) + ":" + std::to_string(line) + ":" + std::to_string(column) +
			  ": error: " + error.message + "\n";
	out += "  " + text + "\n";
	out += "  " + std::string(at - show_from, ' ') + "^\n";
	return out;
}

}  // namespace vtice::probes
