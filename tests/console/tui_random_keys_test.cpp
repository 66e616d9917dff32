// Any key sequence, at any terminal size, leaves the screen consistent:
// no crash, the focus on a visible pane (or the command line), every drawn
// cell inside the terminal. Seeded, so a failure replays.
#include <gtest/gtest.h>

#include <random>

#include "app.hpp"
#include "tui_fake_model.hpp"
#include "tui_fake_terminal.hpp"

using namespace vtice::tui;
using vtice::tui::testing::FakeModel;
using vtice::tui::testing::FakeTerminal;

namespace {

const Key kKeys[] = {
	kKeyUp, kKeyDown, kKeyLeft, kKeyRight, kKeyPageUp, kKeyPageDown, kKeyHome, kKeyEnd, kKeyBackspace,
	kKeyDelete, kKeyTab, kKeyBackTab, kKeyEnter, kKeyEscape, kKeyCtrlC, kKeyCtrlU, kKeyCtrlL, key_shift_f(11),
	key_shift_f(5), key_shift_f(8), key_shift_f(10), key_shift_f(12), key_f(1), key_f(2), key_f(5), key_f(6), key_f(8), key_f(9), key_f(10), key_f(12), ' ', '+', '-',
	'b', 'r', 'e', 'a', 'k', 'x', 's', 't', 'p', 'i', '0', 'm', 'z', 'o', 'c', 'd', 'f',
};

}  // namespace

TEST(TuiRandomKeys, ScreenStaysConsistent)
{
	std::mt19937 random(20261121);
	FakeModel model;
	model.tree.root.children.push_back({"top", 0, 9, {{"child", 0, 4, {{"leaf", 0, 1, {}}}}}});
	model.has_trace = true;
	FakeTerminal terminal(30, 100);
	App app(terminal, model);
	for (int i = 0; i < 20000; ++i) {
		if (random() % 200 == 0) {
			terminal.resize(1 + static_cast<int>(random() % 60), 1 + static_cast<int>(random() % 220));
			app.handle_key(kKeyResize);
		} else if (random() % 50 == 0 && model.state() == RunState::Running) {
			app.poll_target(0);
		} else {
			app.handle_key(kKeys[random() % std::size(kKeys)]);
		}
		app.render();
		ASSERT_FALSE(::testing::Test::HasFailure());
		PaneId focus = app.focus();
		if (!app.help_visible()) {
			ASSERT_TRUE(focus == PaneId::Command || app.layout().visible(focus))
				<< "step " << i << ": focus on hidden " << pane_name(focus);
		}
		ASSERT_EQ(terminal.out_of_bounds(), 0) << "step " << i << ": drew outside the terminal";
		// A 'q' in a pane ends the run loop; keep dispatching to cover more states.
	}
	EXPECT_GT(model.log.size(), 1000u);  // the keys did reach the engine
}
