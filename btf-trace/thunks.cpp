#include "thunks.hpp"

namespace vtice::trace {

ThunkKind thunk_kind(std::string_view symbol)
{
	// The array holds one retpoline per register; __x86_indirect_thunk_rax
	// and friends name its entries. Call/jump thunks come with call depth
	// tracking (6.2+).
	for (std::string_view prefix : {"__x86_indirect_thunk_", "__x86_indirect_call_thunk_",
					"__x86_indirect_jump_thunk_"})
		if (symbol.starts_with(prefix))
			return ThunkKind::Indirect;
	// The return thunk and the bodies it is patched to on retbleed and
	// SRSO affected CPUs (srso_safe_ret pops an extra slot, then returns).
	for (std::string_view name : {"__x86_return_thunk", "__x86_return_skl", "retbleed_return_thunk",
				      "zen_return_thunk", "call_depth_return_thunk"})
		if (symbol == name)
			return ThunkKind::Return;
	if (symbol.starts_with("srso_") && (symbol.ends_with("_return_thunk") || symbol.ends_with("_safe_ret")))
		return ThunkKind::Return;
	return ThunkKind::None;
}

}  // namespace vtice::trace
