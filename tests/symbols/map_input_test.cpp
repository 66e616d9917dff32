// map_input (include/vtice/read_input.hpp) on a file the kernel refuses to
// map: sysfs binary attributes without mmap, such as /sys/kernel/btf/vmlinux
// before Linux 6.16 and the ACPI tables (ENODEV), are read instead.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "vtice/read_input.hpp"

TEST(MapInput, ReadsAFileTheKernelWillNotMap)
{
	const std::string path = "/sys/firmware/acpi/tables/DSDT";
	std::ifstream direct(path, std::ios::binary);
	if (!direct)
		GTEST_SKIP() << path << " is not readable here (no ACPI, or not root)";
	std::vector<char> want((std::istreambuf_iterator<char>(direct)), std::istreambuf_iterator<char>());
	auto input = vtice::map_input(path, 1 << 20);
	ASSERT_TRUE(input) << input.error().message;
	auto bytes = (*input)->bytes();
	ASSERT_EQ(bytes.size(), want.size());
	EXPECT_TRUE(std::equal(bytes.begin(), bytes.end(), reinterpret_cast<const std::uint8_t *>(want.data())));
	EXPECT_EQ(std::string(want.begin(), want.begin() + 4), "DSDT") << "an ACPI table starts with its signature";
}
