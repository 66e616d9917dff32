// The TUI's Model over the real engine: a dbg::Session and its command table.
//
// Run control happens on one worker thread, so the screen keeps taking keys
// (Ctrl-C above all) while the target runs or a command such as `continue`
// blocks. While that job runs the worker owns the Session; the UI thread
// touches nothing but Target::interrupt(), which the engine documents as safe
// from another thread, and answers every other query with "running".
#pragma once

#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "model.hpp"
#include "session.hpp"

namespace vtice::tui {

class SessionModel final : public Model {
public:
	// session must have attached; initial is the stop attach() reported.
	SessionModel(dbg::Session &session, const dbg::StopInfo &initial);
	~SessionModel() override;

	std::string target_name() const override;
	bool runs_backwards() const override;
	RunState state() const override { return state_; }
	std::string stop_reason() const override { return reason_; }
	std::uint64_t stop_generation() const override { return generation_; }

	std::vector<RegisterRow> registers() override;
	std::optional<std::uint64_t> pc() override;
	std::vector<DisasmRow> disassemble(std::uint64_t address, int before, int after) override;
	std::vector<FrameRow> backtrace(int max_frames) override;
	Result<std::vector<std::uint8_t>> read_memory(std::uint64_t address, std::size_t length) override;
	std::vector<BreakpointRow> breakpoints() override;
	const TraceTree *trace() override { return trace_.root.children.empty() ? nullptr : &trace_; }
	std::optional<std::uint64_t> replay_instruction() override;
	std::optional<std::uint64_t> default_memory_address() override;
	Result<std::uint64_t> evaluate(const std::string &expression) override;

	Result<void> toggle_breakpoint(std::uint64_t address) override;
	Result<void> resume(Resume how) override;
	std::optional<StopEvent> poll(int timeout_ms) override;
	Result<void> interrupt() override;
	CommandOutput execute(const std::string &line) override;
	std::vector<std::string> command_names() const override;

	// How long resume()/execute() wait for a quick job (a single step, a
	// `break`) before handing it to the poll loop.
	static constexpr int kSyncWaitMs = 300;

private:
	struct JobResult {
		std::optional<dbg::StopInfo> stop;  // run control that stopped
		std::optional<Error> error;
		std::vector<std::string> output;    // command text, one entry per line
	};

	bool busy() const { return job_.valid(); }
	void start(std::function<JobResult()> work);
	std::optional<JobResult> collect(int timeout_ms);
	StopEvent finish(JobResult result);
	std::vector<DisasmRow> decode_from(std::uint64_t address, int count);
	std::vector<DisasmRow> decode_before(std::uint64_t address, int count);
	bool breakpoint_at(std::uint64_t address) const;

	dbg::Session &session_;
	Symbolizer symbolize_;
	std::future<JobResult> job_;
	RunState state_ = RunState::Stopped;
	std::string reason_;
	// Filled by the Session's stop listener on the worker thread; shared so a
	// listener that outlives this model writes into something alive.
	struct StopBox {
		std::mutex mutex;
		std::uint64_t count = 0;
		std::optional<dbg::StopInfo> last;
	};
	std::shared_ptr<StopBox> stops_ = std::make_shared<StopBox>();
	std::uint64_t generation_ = 1;
	std::uint64_t stops_seen_ = 0;
	std::optional<std::uint64_t> pc_;
	TraceTree trace_;
	// replay_instruction() asked at this stop generation, and its answer.
	std::uint64_t replay_asked_ = 0;
	std::optional<std::uint64_t> replay_instruction_;
};

// Interactive `vtice attach`: the screen over an attached session until the
// user quits. intro is what attaching printed (symbols, KASLR slide).
int run_interactive(dbg::Session &session, const dbg::StopInfo &attached, const std::string &intro,
		    const std::string &graph = "");

}  // namespace vtice::tui
