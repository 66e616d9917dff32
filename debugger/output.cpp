#include "output.hpp"

#include <cstdio>

namespace vtice::dbg {

void Output::print(const char *format, ...)
{
	char small[512];
	va_list args;
	va_start(args, format);
	int n = std::vsnprintf(small, sizeof(small), format, args);
	va_end(args);
	if (n < 0)
		return;
	if (static_cast<std::size_t>(n) < sizeof(small)) {
		write(std::string_view(small, static_cast<std::size_t>(n)));
		return;
	}
	std::string big(static_cast<std::size_t>(n) + 1, '\0');
	va_start(args, format);
	std::vsnprintf(big.data(), big.size(), format, args);
	va_end(args);
	big.resize(static_cast<std::size_t>(n));
	write(big);
}

}  // namespace vtice::dbg
