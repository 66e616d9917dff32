// Target descriptions (gdb's "Target Descriptions" appendix): just enough
// XML to read <architecture>, <reg .../> and <xi:include href=.../>.
#include <cstdlib>
#include <map>

#include "protocol.hpp"

namespace vtice::dbg::rsp {

namespace {

struct Tag {
	std::string name;
	std::map<std::string, std::string> attributes;
	std::string text_after;  // character data up to the next tag
};

std::string strip_comments(std::string_view xml)
{
	std::string out;
	out.reserve(xml.size());
	for (std::size_t i = 0; i < xml.size();) {
		if (xml.compare(i, 4, "<!--") == 0) {
			auto end = xml.find("-->", i + 4);
			i = end == std::string_view::npos ? xml.size() : end + 3;
			continue;
		}
		out.push_back(xml[i++]);
	}
	return out;
}

Result<void> parse_attributes(std::string_view body, Tag &tag, std::size_t where)
{
	std::size_t i = 0;
	auto skip_space = [&] {
		while (i < body.size() && (body[i] == ' ' || body[i] == '\t' || body[i] == '\n' || body[i] == '\r'))
			i++;
	};
	while (true) {
		skip_space();
		if (i >= body.size() || body[i] == '/' || body[i] == '?')
			return {};
		std::size_t name_start = i;
		while (i < body.size() && body[i] != '=' && body[i] != ' ' && body[i] != '/')
			i++;
		std::string name(body.substr(name_start, i - name_start));
		skip_space();
		if (i >= body.size() || body[i] != '=')
			return make_error("attribute '" + name + "' of <" + tag.name + "> has no value", where);
		i++;
		skip_space();
		if (i >= body.size() || (body[i] != '"' && body[i] != '\''))
			return make_error("attribute '" + name + "' of <" + tag.name + "> is not quoted", where);
		char quote = body[i++];
		auto end = body.find(quote, i);
		if (end == std::string_view::npos)
			return make_error("unterminated attribute '" + name + "'", where);
		tag.attributes[name] = std::string(body.substr(i, end - i));
		i = end + 1;
	}
}

Result<std::vector<Tag>> scan_tags(std::string_view xml)
{
	std::vector<Tag> tags;
	std::size_t i = xml.find('<');
	while (i != std::string_view::npos) {
		auto end = xml.find('>', i);
		if (end == std::string_view::npos)
			return make_error("unterminated XML tag", i);
		std::string_view body = xml.substr(i + 1, end - i - 1);
		auto next = xml.find('<', end);
		if (!body.empty() && body[0] != '!' && body[0] != '?') {
			Tag tag;
			std::size_t name_end = 0;
			while (name_end < body.size() && body[name_end] != ' ' && body[name_end] != '/' &&
			       body[name_end] != '\n' && body[name_end] != '\t')
				name_end++;
			tag.name = std::string(body.substr(0, name_end));
			if (auto r = parse_attributes(body.substr(name_end), tag, i); !r)
				return r.error();
			tag.text_after = std::string(xml.substr(end + 1, (next == std::string_view::npos ? xml.size() : next) - end - 1));
			tags.push_back(std::move(tag));
		}
		i = next;
	}
	return tags;
}

Result<unsigned> number_attribute(const Tag &tag, const char *name)
{
	auto it = tag.attributes.find(name);
	if (it == tag.attributes.end())
		return make_error(std::string("<reg> without ") + name);
	char *end = nullptr;
	unsigned long value = std::strtoul(it->second.c_str(), &end, 10);
	if (it->second.empty() || *end || value > 4096)
		return make_error(std::string("<reg> ") + name + "='" + it->second + "' is not a number");
	return static_cast<unsigned>(value);
}

struct Builder {
	RegisterLayout layout;
	unsigned next_number = 0;
	std::string feature_group;
};

std::string trim(std::string_view text)
{
	auto b = text.find_first_not_of(" \t\r\n");
	auto e = text.find_last_not_of(" \t\r\n");
	return b == std::string_view::npos ? std::string() : std::string(text.substr(b, e - b + 1));
}

Result<void> add_register(Builder &b, const Tag &tag)
{
	RegisterInfo reg;
	auto name = tag.attributes.find("name");
	if (name == tag.attributes.end() || name->second.empty())
		return make_error("<reg> without a name");
	reg.name = name->second;
	auto bits = number_attribute(tag, "bitsize");
	if (!bits)
		return make_error(bits.error().message + " (register " + reg.name + ")");
	reg.bits = *bits;
	if (tag.attributes.count("regnum")) {
		auto number = number_attribute(tag, "regnum");
		if (!number)
			return number.error();
		b.next_number = *number;
	}
	reg.number = b.next_number++;
	if (auto g = tag.attributes.find("group"); g != tag.attributes.end())
		reg.group = g->second;
	if (auto t = tag.attributes.find("type"); t != tag.attributes.end())
		reg.type = t->second;
	if (reg.group.empty())
		reg.group = b.feature_group;
	reg.offset = b.layout.g_size;
	b.layout.g_size += (reg.bits + 7) / 8;
	b.layout.registers.push_back(std::move(reg));
	return {};
}

Result<void> parse_annex(Builder &b, const std::string &annex, const AnnexReader &fetch, int depth)
{
	if (depth > 8)
		return make_error("target description includes nest deeper than 8 (at " + annex + ")");
	auto xml = fetch(annex);
	if (!xml)
		return make_error("cannot read target description '" + annex + "': " + xml.error().message);
	auto tags = scan_tags(strip_comments(*xml));
	if (!tags)
		return make_error(annex + ": " + tags.error().to_string());
	for (const auto &tag : *tags) {
		Result<void> r;
		if (tag.name == "architecture") {
			b.layout.architecture = trim(tag.text_after);
		} else if (tag.name == "feature") {
			auto name = tag.attributes.find("name");
			std::string feature = name == tag.attributes.end() ? "" : name->second;
			b.feature_group = feature.find(".sse") != std::string::npos ? "vector" :
					  feature.find(".core") != std::string::npos ? "general" : "system";
		} else if (tag.name == "xi:include") {
			auto href = tag.attributes.find("href");
			if (href == tag.attributes.end())
				return make_error(annex + ": <xi:include> without href");
			r = parse_annex(b, href->second, fetch, depth + 1);
		} else if (tag.name == "reg") {
			r = add_register(b, tag);
		}
		if (!r)
			return make_error(annex + ": " + r.error().message);
	}
	return {};
}

}  // namespace

Result<RegisterLayout> parse_target_description(const std::string &annex, const AnnexReader &fetch)
{
	Builder b;
	if (auto r = parse_annex(b, annex, fetch, 0); !r)
		return r.error();
	if (b.layout.registers.empty())
		return make_error("target description '" + annex + "' defines no registers");
	return std::move(b.layout);
}

// gdb's fixed register order for x86-64 when a stub sends no description
// (its amd64 "g" packet): sixteen GPRs and rip of 64 bits, then eflags and
// the six segment selectors of 32. kgdb's 'g' reply stops after es; the
// rest come from 'p', which kgdb answers.
Result<RegisterLayout> default_amd64_layout()
{
	static const char *const kNames64[] = {"rax", "rbx", "rcx", "rdx", "rsi", "rdi", "rbp", "rsp", "r8",
					       "r9",  "r10", "r11", "r12", "r13", "r14", "r15", "rip"};
	static const char *const kNames32[] = {"eflags", "cs", "ss", "ds", "es", "fs", "gs"};
	std::string xml = "<target><architecture>i386:x86-64</architecture><feature name=\"org.gnu.gdb.i386.core\">";
	for (const char *name : kNames64)
		xml += std::string("<reg name=\"") + name + "\" bitsize=\"64\"/>";
	for (const char *name : kNames32)
		xml += std::string("<reg name=\"") + name + "\" bitsize=\"32\"/>";
	xml += "</feature></target>";
	return parse_target_description("builtin-amd64.xml", [&](const std::string &) -> Result<std::string> { return xml; });
}

}  // namespace vtice::dbg::rsp
