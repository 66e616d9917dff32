// libFuzzer target: the three renderers on call trees built from
// fuzz-chosen branches over fuzz-chosen code, with fuzz-chosen (hostile)
// symbol names, through the one path `vtice report` and `trace` share
// (trace_render). Beyond not crashing, each output keeps the promise its
// reader relies on; a broken one aborts:
//   graph     text lines: no control byte but '\n';
//   folded    "STACK WEIGHT\n" lines: one space, a decimal weight, no
//             control byte (a name cannot forge frames, lines or weights);
//   perfetto  well-formed JSON.
#include <cctype>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>

#include "symbol_table.hpp"
#include "trace_render.hpp"

using namespace vtice::trace;

namespace {

constexpr std::uint64_t kBase = 0xffffffff81000000ull;
constexpr std::size_t kCodeSize = 1024, kMaxRecords = 512, kMaxSymbols = 16;

// Reads the input front to back; past the end, zeros.
struct Input {
	const std::uint8_t *data;
	std::size_t size, at = 0;
	std::uint8_t byte() { return at < size ? data[at++] : 0; }
	std::uint16_t u16() { return static_cast<std::uint16_t>(byte() | byte() << 8); }
};

TraceData trace_from(Input &in)
{
	TraceData data;
	std::uint8_t mode = in.byte();
	data.header.clock = mode & 1 ? TraceClock::Instructions : TraceClock::Tsc;
	data.header.tsc_khz = mode & 2 ? 1000000 : 0;
	std::size_t symbols = in.byte() % (kMaxSymbols + 1);
	for (std::size_t i = 0; i < symbols; i++) {
		std::size_t length = in.byte() % 24;
		std::string name;
		for (std::size_t j = 0; j < length; j++)
			name.push_back(static_cast<char>(in.byte()));
		data.symbols.push_back({kBase + in.u16() % kCodeSize, in.byte() % 2 ? 0u : in.byte(), name});
	}
	CodeBlob code{kBase, {}};
	for (std::size_t i = 0; i < kCodeSize; i++)
		code.bytes.push_back(in.byte());
	data.code.push_back(code);
	std::uint64_t tsc = 0;
	std::size_t records = in.u16() % (kMaxRecords + 1);
	for (std::size_t i = 0; i < records; i++) {
		vtice_record r{};
		std::uint8_t kind = in.byte();
		r.type = kind % 8 == 7 ? VTICE_REC_LOST : VTICE_REC_BRANCH;
		r.cpu = kind >> 7;
		r.flags = kind & 0x10 ? VTICE_BRANCH_ASYNC : 0;
		tsc += in.byte();
		r.tsc = tsc;
		r.u.branch.from = kBase + in.u16() % kCodeSize;
		r.u.branch.to = kBase + in.u16() % kCodeSize;
		data.records.push_back(r);
	}
	return data;
}

// Aborts with the text that broke the promise, escaped, for the report.
void check(bool ok, std::string_view text = {})
{
	if (ok)
		return;
	std::fprintf(stderr, "broken output: \"");
	for (unsigned char c : text)
		std::fprintf(stderr, c >= 0x20 && c < 0x7f ? "%c" : "\\x%02x", c);
	std::fprintf(stderr, "\"\n");
	__builtin_trap();
}

bool control(char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; }

void check_graph(const std::string &text)
{
	for (char c : text)
		check(c == '\n' || !control(c), text);
}

void check_folded(const std::string &text)
{
	std::string_view rest = text;
	while (!rest.empty()) {
		std::size_t end = rest.find('\n');
		check(end != std::string_view::npos);
		std::string_view line = rest.substr(0, end);
		rest.remove_prefix(end + 1);
		std::size_t space = line.find(' ');
		check(space != std::string_view::npos && space > 0 && line.find(' ', space + 1) == std::string_view::npos,
		      line);
		check(space + 1 < line.size(), line);
		for (char c : line.substr(space + 1))
			check(c >= '0' && c <= '9', line);
		for (char c : line)
			check(!control(c), line);
	}
}

// A JSON checker just strict enough for the question: is it well formed?
class Json {
public:
	explicit Json(std::string_view text) : text_(text) {}
	bool document()
	{
		return value(0) && (space(), at_ == text_.size());
	}

private:
	void space()
	{
		while (at_ < text_.size() && std::strchr(" \t\n\r", text_[at_]))
			at_++;
	}
	bool eat(char c)
	{
		space();
		if (at_ < text_.size() && text_[at_] == c) {
			at_++;
			return true;
		}
		return false;
	}
	bool string()
	{
		if (!eat('"'))
			return false;
		while (at_ < text_.size()) {
			char c = text_[at_++];
			if (c == '"')
				return true;
			if (control(c) && c != 0x7f)
				return false;
			if (c == '\\') {
				if (at_ >= text_.size() || !std::strchr("\"\\/bfnrtu", text_[at_]))
					return false;
				if (text_[at_++] == 'u') {
					for (int i = 0; i < 4; i++)
						if (at_ >= text_.size() || !std::isxdigit(static_cast<unsigned char>(text_[at_++])))
							return false;
				}
			}
		}
		return false;
	}
	bool number()
	{
		space();
		std::size_t start = at_;
		while (at_ < text_.size() && std::strchr("+-.eE0123456789", text_[at_]))
			at_++;
		return at_ > start;
	}
	template <class Item>
	bool list(char close, Item item)
	{
		if (eat(close))
			return true;
		do {
			if (!item())
				return false;
		} while (eat(','));
		return eat(close);
	}
	bool value(int depth)
	{
		if (depth > 64)
			return false;
		space();
		if (at_ >= text_.size())
			return false;
		char c = text_[at_];
		if (c == '"')
			return string();
		if (eat('['))
			return list(']', [&] { return value(depth + 1); });
		if (eat('{'))
			return list('}', [&] { return string() && eat(':') && value(depth + 1); });
		for (std::string_view word : {"true", "false", "null"})
			if (text_.substr(at_, word.size()) == word) {
				at_ += word.size();
				return true;
			}
		return number();
	}

	std::string_view text_;
	std::size_t at_ = 0;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size)
{
	Input in{data, size};
	TraceData trace = trace_from(in);
	SymbolTable symbols(trace.symbols);
	vtice::Symbolizer symbolize = symbols.symbolizer();
	check_graph(render_trace(trace, nullptr, symbolize, write_graph).text);
	check_folded(render_trace(trace, nullptr, symbolize, write_folded).text);
	std::string json = render_trace(trace, nullptr, symbolize, write_perfetto).text;
	check(Json(json).document(), json);
	return 0;
}
