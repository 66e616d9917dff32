// What the debugger's test targets answer alike: one thread, always
// selected; interrupt, detach and monitor commands that succeed and do
// nothing; and a register layout of x86-64 registers laid out 8 bytes
// apart, as the fake lists them. Each fake keeps its own memory, running
// and stopping.
#pragma once

#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "target.hpp"

namespace vtice::dbg::fake {

class SingleThreadTarget : public Target {
public:
	const RegisterLayout &layout() const override { return layout_; }
	const TargetFeatures &features() const override { return features_; }
	Result<void> interrupt() override { return {}; }
	Result<std::vector<int>> threads() override { return std::vector<int>{1}; }
	Result<void> select_thread(int) override { return {}; }
	int selected_thread() const override { return 1; }
	Result<std::string> monitor(const std::string &) override { return std::string(); }
	Result<void> detach() override { return {}; }

protected:
	// Registers by name and width in bits, numbered in order, each in its own 8 bytes of the 'g' packet.
	explicit SingleThreadTarget(std::initializer_list<std::pair<const char *, unsigned>> registers)
	{
		unsigned number = 0;
		for (const auto &[name, bits] : registers) {
			layout_.registers.push_back({name, number, bits, 8 * number, "general", "int64"});
			number++;
		}
		layout_.g_size = 8 * number;
		layout_.architecture = "i386:x86-64";
	}

	RegisterLayout layout_;
	TargetFeatures features_;
};

}  // namespace vtice::dbg::fake
