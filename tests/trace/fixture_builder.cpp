#include "fixture_builder.hpp"

#include <fstream>
#include <sstream>

namespace vtice::test {

std::string read_text_file(const std::string &path)
{
	std::ifstream in(path);
	std::stringstream text;
	text << in.rdbuf();
	return text.str();
}

// "label" or "label+0x12", resolved with the object's nm table.
static std::optional<std::uint64_t> resolve(const Assembled &object, const std::string &text)
{
	size_t plus = text.find('+');
	auto it = object.symbols.find(text.substr(0, plus));
	if (it == object.symbols.end())
		return std::nullopt;
	return it->second + (plus == std::string::npos ? 0 : std::stoull(text.substr(plus + 1), nullptr, 0));
}

static bool parse_line(const std::string &line, Fixture &fixture, std::string &error)
{
	std::istringstream fields(line);
	std::string first, tsc, from, to, flag;
	if (!(fields >> first) || first[0] == '#')
		return true;
	if (first == "tsc_khz")
		return static_cast<bool>(fields >> fixture.tsc_khz);
	vtice_record record{};
	record.cpu = static_cast<std::uint16_t>(std::stoul(first));
	fields >> tsc >> from >> to >> flag;
	record.tsc = std::stoull(tsc);
	if (from == "lost") {
		record.type = VTICE_REC_LOST;
		record.u.lost.count = std::stoull(to);
		fixture.records.push_back(record);
		return true;
	}
	auto from_address = resolve(fixture.object, from), to_address = resolve(fixture.object, to);
	if (!from_address || !to_address) {
		error = "unknown label in: " + line;
		return false;
	}
	record.type = VTICE_REC_BRANCH;
	record.flags = VTICE_BRANCH_FROM_BTF | (flag == "async" ? VTICE_BRANCH_ASYNC : 0);
	record.u.branch.from = *from_address;
	record.u.branch.to = *to_address;
	fixture.records.push_back(record);
	return true;
}

std::optional<Fixture> build_fixture(const std::string &dir, std::string &error)
{
	auto object = assemble(read_text_file(dir + "/snippet.S"), kFixtureText, error);
	if (!object)
		return std::nullopt;
	Fixture fixture;
	fixture.object = std::move(*object);
	std::istringstream lines(read_text_file(dir + "/branches.txt"));
	std::string line;
	while (std::getline(lines, line)) {
		if (!parse_line(line, fixture, error))
			return std::nullopt;
	}
	return fixture;
}

std::vector<std::uint8_t> fixture_trace(const Fixture &fixture)
{
	trace::TraceHeader header;
	header.tsc_khz = fixture.tsc_khz;
	header.kernel_release = "vtice-fixture";
	trace::TraceWriter writer(header);
	writer.add_code(fixture.object.text_address, fixture.object.text);
	std::vector<trace::TraceSymbol> symbols;
	for (const ElfFunction &f : fixture.object.functions)
		symbols.push_back({f.address, static_cast<std::uint32_t>(f.size), f.name});
	writer.add_symbols(symbols);
	writer.add_records(fixture.records);
	return writer.finish();
}

}  // namespace vtice::test
