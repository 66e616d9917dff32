// SPDX-License-Identifier: GPL-2.0
/*
 * target.xml (GDB manual, "Target Descriptions"): one flat document, no
 * includes, in the register order of rsp_regs.c. gdb's amd64 support
 * requires the i386 core feature with the x87 registers and accepts the
 * SSE feature; the segment bases use gdb's own feature name so "info
 * registers fs_base" works; the system registers have a feature of ours.
 */
#include "rsp_priv.h"

#define VT_GPR(n)	"<reg name=\"" n "\" bitsize=\"64\" type=\"int64\"/>"
#define VT_SEG(n)	"<reg name=\"" n "\" bitsize=\"32\" type=\"int32\"/>"
#define VT_ST(n)	"<reg name=\"st" n "\" bitsize=\"80\" type=\"i387_ext\"/>"
#define VT_FPC(n)	"<reg name=\"" n "\" bitsize=\"32\" type=\"int\" group=\"float\"/>"
#define VT_XMM(n)	"<reg name=\"xmm" n "\" bitsize=\"128\" type=\"uint128\"/>"
#define VT_SYS(n)	"<reg name=\"" n "\" bitsize=\"64\" type=\"int64\" group=\"system\"/>"

static const char vt_target_xml[] =
	"<?xml version=\"1.0\"?><!DOCTYPE target SYSTEM \"gdb-target.dtd\">"
	"<target version=\"1.0\"><architecture>i386:x86-64</architecture>"
	"<feature name=\"org.gnu.gdb.i386.core\">"
	VT_GPR("rax") VT_GPR("rbx") VT_GPR("rcx") VT_GPR("rdx") VT_GPR("rsi") VT_GPR("rdi")
	"<reg name=\"rbp\" bitsize=\"64\" type=\"data_ptr\"/>"
	"<reg name=\"rsp\" bitsize=\"64\" type=\"data_ptr\"/>"
	VT_GPR("r8") VT_GPR("r9") VT_GPR("r10") VT_GPR("r11")
	VT_GPR("r12") VT_GPR("r13") VT_GPR("r14") VT_GPR("r15")
	"<reg name=\"rip\" bitsize=\"64\" type=\"code_ptr\"/>"
	"<reg name=\"eflags\" bitsize=\"32\" type=\"int32\"/>"
	VT_SEG("cs") VT_SEG("ss") VT_SEG("ds") VT_SEG("es") VT_SEG("fs") VT_SEG("gs")
	VT_ST("0") VT_ST("1") VT_ST("2") VT_ST("3") VT_ST("4") VT_ST("5") VT_ST("6") VT_ST("7")
	VT_FPC("fctrl") VT_FPC("fstat") VT_FPC("ftag") VT_FPC("fiseg")
	VT_FPC("fioff") VT_FPC("foseg") VT_FPC("fooff") VT_FPC("fop")
	"</feature><feature name=\"org.gnu.gdb.i386.sse\">"
	VT_XMM("0") VT_XMM("1") VT_XMM("2") VT_XMM("3") VT_XMM("4") VT_XMM("5")
	VT_XMM("6") VT_XMM("7") VT_XMM("8") VT_XMM("9") VT_XMM("10") VT_XMM("11")
	VT_XMM("12") VT_XMM("13") VT_XMM("14") VT_XMM("15")
	"<reg name=\"mxcsr\" bitsize=\"32\" type=\"int\" group=\"vector\"/>"
	"</feature><feature name=\"org.gnu.gdb.i386.segments\">"
	"<reg name=\"fs_base\" bitsize=\"64\" type=\"int\"/>"
	"<reg name=\"gs_base\" bitsize=\"64\" type=\"int\"/>"
	"</feature><feature name=\"org.vtice.x86-64.system\">"
	VT_SYS("k_gs_base") VT_SYS("cr0") VT_SYS("cr2") VT_SYS("cr3") VT_SYS("cr4")
	VT_SYS("cr8") VT_SYS("efer")
	"</feature></target>";

const char *vt_rsp_target_xml(u32 *len)
{
	*len = sizeof(vt_target_xml) - 1;
	return vt_target_xml;
}
