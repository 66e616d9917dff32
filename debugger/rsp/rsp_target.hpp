// Target over the GDB Remote Serial Protocol (QEMU's gdbstub, kgdb, the
// vtice hypervisor's stub).
#pragma once

#include <memory>
#include <string>

#include "../target.hpp"
#include "client.hpp"

namespace vtice::dbg::rsp {

class RspTarget final : public Target {
public:
	// Negotiates features and reads the register layout.
	static Result<std::unique_ptr<RspTarget>> connect(std::unique_ptr<Transport> transport,
							  ClientOptions options = {});
	static Result<std::unique_ptr<RspTarget>> connect(std::string_view spec, ClientOptions options = {},
							  const TransportOptions &transport = {});

	std::string describe() const override;
	bool connected() const override { return client_.connected(); }
	const RegisterLayout &layout() const override { return layout_; }
	const TargetFeatures &features() const override { return features_; }

	Result<RegisterValues> read_registers() override;
	Result<std::uint64_t> read_register(const RegisterInfo &reg) override;
	Result<void> write_register(const RegisterInfo &reg, std::uint64_t value) override;
	Result<std::vector<std::uint8_t>> read_memory(std::uint64_t address, std::size_t length) override;
	Result<void> write_memory(std::uint64_t address, const std::vector<std::uint8_t> &bytes) override;
	Result<void> set_physical_mode(bool physical) override;
	Result<void> insert_breakpoint(BreakKind type, std::uint64_t address, unsigned kind) override;
	Result<void> remove_breakpoint(BreakKind type, std::uint64_t address, unsigned kind) override;
	Result<void> resume(ResumeAction action) override;
	Result<void> resume_with(std::span<const BreakpointChange> changes, ResumeAction action) override;
	Result<std::optional<StopEvent>> wait_stop(int timeout_ms) override;
	Result<void> interrupt() override;
	Result<StopEvent> query_stop() override;
	Result<std::vector<int>> threads() override;
	Result<void> select_thread(int thread) override;
	int selected_thread() const override { return thread_; }
	Result<std::string> monitor(const std::string &command) override;
	Result<void> set_branch_trace(int thread, bool on) override;
	Result<std::vector<vtice_record>> read_branch_trace(int thread) override;
	Result<void> arm_probes(const vtice_probes &req) override;
	Result<std::uint64_t> disarm_probes() override;
	Result<std::uint64_t> probe_hits() override;
	Result<std::vector<std::uint64_t>> probe_counts(bool sums) override;
	Result<std::uint64_t> probe_unreadable() override;
	Result<std::vector<std::uint64_t>> probe_hist(std::uint32_t index) override;
	Result<std::vector<vtice_probe_key>> probe_keys(std::uint32_t index) override;
	Result<std::uint64_t> probe_passed_over() override;
	Result<std::uint64_t> probes_removed() override;
	Result<void> arm_syscalls(const vtice_syscalls &req) override;
	Result<void> disarm_syscalls() override;
	Result<dbg::SyscallTrapCounts> syscall_counts() override;
	Result<void> arm_profile(const vtice_profile &req) override;
	Result<void> disarm_profile() override;
	Result<dbg::ProfilerCounts> profiler_counts() override;
	Result<std::vector<vtice_record>> take_ring(int thread) override;
	Result<std::uint64_t> tsc_khz() override;
	Result<void> detach() override;

	Client &client() { return client_; }

private:
	explicit RspTarget(std::unique_ptr<Transport> transport, ClientOptions options);
	Result<void> negotiate();
	std::string identify_stub();
	void repair_task_priority();
	bool names_shadow_cpu_threads();
	Result<std::string> read_xfer(const std::string &object, const std::string &annex);
	Result<std::uint64_t> query_number(const std::string &packet);	// a reply of one hex number
	Result<std::vector<std::uint64_t>> query_numbers(const std::string &packet);	// N,N,...: hex
	Result<std::string> expect_ok(std::string_view packet, const char *what);
	Result<std::vector<std::uint8_t>> read_chunk(std::uint64_t address, std::size_t length);
	std::string read_request(std::uint64_t address, std::size_t length) const;
	Result<std::vector<std::uint8_t>> parse_read_reply(std::uint64_t address, std::size_t length,
							   const std::string &reply) const;
	Result<void> read_pipelined(std::uint64_t address, std::size_t length, std::vector<std::uint8_t> &out);
	std::string thread_text(int thread) const;
	std::string resume_packet(ResumeAction action) const;
	Result<void> breakpoint_packet(char op, BreakKind type, std::uint64_t address, unsigned kind);
	std::size_t chunk_size() const;

	Client client_;
	RegisterLayout layout_;
	TargetFeatures features_;
	int thread_ = 0;
	bool running_ = false;
	bool p_supported_ = true;
	bool x_probed_ = false;
};

}  // namespace vtice::dbg::rsp
