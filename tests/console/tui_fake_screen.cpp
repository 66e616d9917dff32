// The real curses screen over the scripted model, for tui_keys_tmux.sh: it
// checks that keys sent through a real terminal (tmux) reach the dispatcher
// as the right actions. On exit, the model's call log goes to argv[1].
#include <cstdio>

#include "app.hpp"
#include "tui_fake_model.hpp"

int main(int argc, char **argv)
{
	if (argc != 2) {
		std::fprintf(stderr, "usage: tui_fake_screen LOGFILE\n");
		return 2;
	}
	vtice::tui::testing::FakeModel model;
	model.backwards = true;  // so the Shift keys reach the model as reverse actions
	int status = vtice::tui::run_tui(model);
	FILE *log = std::fopen(argv[1], "w");
	if (!log)
		return 1;
	for (const auto &call : model.log)
		std::fprintf(log, "%s\n", call.c_str());
	std::fclose(log);
	return status;
}
