// The `probe` command of vtice attach (cmd_attach_probe.cpp).
#pragma once

#include "commands/command.hpp"

namespace vtice::console {

extern const dbg::Command kCmdProbe;

}  // namespace vtice::console
