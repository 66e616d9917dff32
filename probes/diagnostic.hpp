// An error in a probe program: the message and where it is, shown the way
// compilers show it (file:line:column, the line, a caret under the spot).
#pragma once

#include <string>
#include <string_view>

#include "ast.hpp"
#include "vtice/result.hpp"

namespace vtice::probes {

// An Error whose offset is the position in the program text.
Error error_at(const Pos &pos, std::string message);
// "program:1:12: error: MESSAGE\n  <the line>\n  <caret>\n".
std::string format_diagnostic(std::string_view source, const Error &error, std::string_view name = "program");

}  // namespace vtice::probes
