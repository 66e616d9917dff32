// Compiler and mitigation thunks the kernel routes calls and returns
// through. ftrace never shows them (they are asm, and notrace); the call
// tree looks through them so the real callee is the node, as in ftrace.
#pragma once

#include <string_view>

namespace vtice::trace {

enum class ThunkKind : unsigned char {
	None,
	Indirect,  // __x86_indirect_thunk_*: ends in a jump (or retpoline ret) to the real callee
	Return,    // __x86_return_thunk and its retbleed/SRSO variants: ends in the function's ret
};

// By symbol name: the thunks have fixed names across kernel versions
// (arch/x86/lib/retpoline.S), and the trace may come from any of them.
ThunkKind thunk_kind(std::string_view symbol);

}  // namespace vtice::trace
