// Every message vtice prints for the user on stderr goes through here, and
// every line a command prints on stdout from a target or a file can: the
// text may quote a hostile kernel, a file or an argument, so it is escaped
// (vtice/escape.hpp) before it reaches the terminal.
#pragma once

#include <cstdio>
#include <string_view>

namespace vtice::console {

// printf to stderr, the result escaped (newlines and tabs kept).
[[gnu::format(printf, 1, 2)]] void eprintf(const char *format, ...);
// printf to stdout, likewise.
[[gnu::format(printf, 1, 2)]] void oprintf(const char *format, ...);
// Text to a stream, escaped; false when the write failed.
bool write_escaped(std::FILE *stream, std::string_view text);

}  // namespace vtice::console
