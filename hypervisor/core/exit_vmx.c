// SPDX-License-Identifier: GPL-2.0
/*
 * VMX instructions (and GETSEC) executed by the guest exit unconditionally
 * (SDM Vol. 3C 25.1.2). A CPU without VMX answers them with #UD, and that is
 * what the guest sees: no nested virtualization, no trace of ours.
 */
#include "exit.h"

enum vt_exit_action vt_handle_vmx_instruction(struct vt_exit *exit)
{
	vt_inject_ud(exit);
	return VT_EXIT_RESUME;
}
