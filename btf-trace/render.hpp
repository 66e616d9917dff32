// Renderers over a CallTree: ftrace function_graph-style text, FlameGraph
// folded stacks (weight = instructions), Chrome trace-event JSON (Perfetto).
#pragma once

#include <string>
#include <string_view>

#include "call_tree.hpp"
#include "trace_file.hpp"
#include "vtice/symbolizer.hpp"

namespace vtice::trace {

struct RenderOptions {
	std::uint64_t tsc_khz = 0;  // 0: show raw TSC ticks instead of microseconds
	Symbolizer symbolize;
	TraceClock clock = TraceClock::Tsc;  // Instructions: durations are instruction counts
};

// Where rendered text goes as it is made: a file or standard output (so a
// rendering never has to fit in memory whole), or a string.
class TextSink {
public:
	virtual ~TextSink() = default;
	virtual void write(std::string_view text) = 0;
};

class StringSink final : public TextSink {
public:
	void write(std::string_view text) override { text_.append(text); }
	std::string take() { return std::move(text_); }

private:
	std::string text_;
};

// Collects a writer's small pieces and hands them to a sink in large ones.
class SinkBuffer {
public:
	explicit SinkBuffer(TextSink &sink) : sink_(sink) {}
	~SinkBuffer() { flush(); }
	SinkBuffer(const SinkBuffer &) = delete;
	SinkBuffer &operator=(const SinkBuffer &) = delete;
	SinkBuffer &operator+=(std::string_view text)
	{
		buffer_.append(text);
		if (buffer_.size() >= kChunk)
			flush();
		return *this;
	}
	SinkBuffer &operator+=(char c) { return *this += std::string_view(&c, 1); }
	void append(std::size_t count, char c)
	{
		buffer_.append(count, c);
	}
	void flush()
	{
		if (!buffer_.empty())
			sink_.write(buffer_);
		buffer_.clear();
	}

private:
	static constexpr std::size_t kChunk = 64 * 1024;
	TextSink &sink_;
	std::string buffer_;
};

// Each format, written to a sink as it is made.
void write_graph(const CallTree &tree, const RenderOptions &options, TextSink &sink);
void write_folded(const CallTree &tree, const RenderOptions &options, TextSink &sink);
void write_perfetto(const CallTree &tree, const RenderOptions &options, TextSink &sink);

// A name as one frame of a FlameGraph folded line: printable (escape_text),
// and with ';' and ' ' as \x3b and \x20, since FlameGraph splits frames at
// ';' and the weight at the last space. Names come from guest memory and
// files: a hostile one must not forge a frame, a weight or a line.
std::string folded_frame(std::string_view name);

// The same, as a string.
std::string render_graph(const CallTree &tree, const RenderOptions &options);
std::string render_folded(const CallTree &tree, const RenderOptions &options);
std::string render_perfetto(const CallTree &tree, const RenderOptions &options);

// "do_sys_openat2"; a frame already running at trace start is named by the
// function around its first address.
std::string node_name(const CallNode &node, const Symbolizer &symbolize);

}  // namespace vtice::trace
