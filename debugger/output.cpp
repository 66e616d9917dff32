#include "output.hpp"

#include <cstdio>

namespace vtice::dbg {

std::string vformat(const char *format, va_list args)
{
	char small[512];
	va_list copy;
	va_copy(copy, args);
	int n = std::vsnprintf(small, sizeof(small), format, copy);
	va_end(copy);
	if (n < 0)
		return {};
	if (static_cast<std::size_t>(n) < sizeof(small))
		return std::string(small, static_cast<std::size_t>(n));
	std::string big(static_cast<std::size_t>(n) + 1, '\0');
	std::vsnprintf(big.data(), big.size(), format, args);
	big.resize(static_cast<std::size_t>(n));
	return big;
}

void Output::print(const char *format, ...)
{
	va_list args;
	va_start(args, format);
	write(vformat(format, args));
	va_end(args);
}

}  // namespace vtice::dbg
