#include "messages.hpp"

#include <cstdarg>
#include <string>

#include "vtice/escape.hpp"

namespace vtice::console {

namespace {

std::string format_text(const char *format, std::va_list args)
{
	std::va_list copy;
	va_copy(copy, args);
	int length = std::vsnprintf(nullptr, 0, format, copy);
	va_end(copy);
	if (length <= 0)
		return {};
	std::string text(static_cast<std::size_t>(length) + 1, '\0');
	std::vsnprintf(text.data(), text.size(), format, args);
	text.pop_back();
	return text;
}

}  // namespace

bool write_escaped(std::FILE *stream, std::string_view text)
{
	std::string safe = escape_text(text);
	return std::fwrite(safe.data(), 1, safe.size(), stream) == safe.size();
}

void eprintf(const char *format, ...)
{
	std::va_list args;
	va_start(args, format);
	write_escaped(stderr, format_text(format, args));
	va_end(args);
}

void oprintf(const char *format, ...)
{
	std::va_list args;
	va_start(args, format);
	write_escaped(stdout, format_text(format, args));
	va_end(args);
}

}  // namespace vtice::console
