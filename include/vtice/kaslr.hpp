// How far KASLR can move an x86-64 kernel: its image lives in the 1 GiB
// window above __START_KERNEL_map (KERNEL_IMAGE_SIZE,
// arch/x86/include/asm/page_64_types.h), so a slide (run-time minus
// link-time address) is within +-1 GiB. Anything else is a typo or a
// damaged file, never a kernel.
#pragma once

#include <cstdint>

namespace vtice {

inline constexpr std::int64_t kMaxKaslrSlide = std::int64_t{1} << 30;

inline bool plausible_kaslr_slide(std::int64_t slide)
{
	return slide >= -kMaxKaslrSlide && slide <= kMaxKaslrSlide;
}

}  // namespace vtice
