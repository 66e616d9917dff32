// Probe maps as folded stacks (probe_folded.hpp).
#include "probe_folded.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include "output.hpp"
#include "render.hpp"

namespace vtice::console {

bool foldable(const probes::MapInfo &info)
{
	bool number = info.kind != probes::MapKind::String && info.kind != probes::MapKind::Hist &&
		      info.kind != probes::MapKind::Lhist;
	return number && std::count(info.keys.begin(), info.keys.end(), probes::Type::Stack) == 1;
}

void write_folded_map(std::FILE *out, const probes::MapInfo &info, const probes::MapEntries &entries)
{
	if (!foldable(info))
		return;
	for (const auto &[key, cell] : entries) {
		std::int64_t value = probes::aggregate_value(info, cell);
		if (value <= 0)
			continue;	// a flame graph has no width for it
		std::string line, stack;
		for (std::size_t k = 0; k < key.size(); k++) {
			if (info.keys[k] == probes::Type::Stack) {
				std::vector<std::string> frames = probes::stack_frames(std::get<std::string>(key[k]));
				for (auto f = frames.rbegin(); f != frames.rend(); ++f)
					stack += (stack.empty() ? "" : ";") + trace::folded_frame(*f);
				continue;
			}
			const probes::Value &v = key[k];
			std::string text = std::holds_alternative<std::int64_t>(v) ? std::to_string(std::get<std::int64_t>(v))
										  : std::get<std::string>(v);
			line += trace::folded_frame(text) + ";";
		}
		line += stack.empty() ? "[no stack]" : stack;
		std::fprintf(out, "%s %lld\n", line.c_str(), static_cast<long long>(value));
	}
}

}  // namespace vtice::console
