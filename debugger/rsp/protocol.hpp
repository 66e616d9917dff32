// Parsers for what an RSP stub says: stop replies, target descriptions,
// qSupported, thread ids. Pure functions over text, fuzzed and unit-tested.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "../target.hpp"
#include "vtice/result.hpp"

namespace vtice::dbg::rsp {

// "S05", "T05thread:p01.02;swbreak:;", "T05watch:ffff8880...;", "W00", "X09".
// Anything else is an error quoting the reply.
Result<StopEvent> parse_stop_reply(std::string_view reply);

// "p1.2" -> 2, "2" -> 2, "-1" -> -1 (all threads), "0" -> 0 (any thread).
Result<int> parse_thread_id(std::string_view text);

// "PacketSize=20000;qXfer:features:read+;vContSupported+" -> name -> value
// ("+", "-", or the text after '=').
std::map<std::string, std::string> parse_supported(std::string_view reply);

// Fetches an XML annex (qXfer:features:read:ANNEX) by name.
using AnnexReader = std::function<Result<std::string>(const std::string &annex)>;

// Parses a target description, following <xi:include href=...> through
// fetch (at most 8 levels deep) and ignoring XML comments. Registers are
// numbered in document order unless regnum says otherwise; g-block offsets
// follow that order.
Result<RegisterLayout> parse_target_description(const std::string &annex, const AnnexReader &fetch);
// gdb's built-in x86-64 core layout, for stubs without qXfer:features (kgdb).
Result<RegisterLayout> default_amd64_layout();

}  // namespace vtice::dbg::rsp
