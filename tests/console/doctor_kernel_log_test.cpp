// vtice doctor's reading of the kernel log (/dev/kmsg): the record format
// from Documentation/ABI/testing/dev-kmsg, written by hand; then the real
// log of this machine, written through /dev/kmsg and read back.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <unistd.h>

#include <cstring>
#include <string>

#include "doctor/kernel_log.hpp"

namespace vtice::console::doctor {
namespace {

TEST(DoctorKernelLog, MessagesAreTakenFromRecordsNotContinuationLines)
{
	const char records[] =
		"6,1201,12345678,-;vtice: loading\n"
		"3,1202,12345690,-;vtice: this CPU's VMX lacks EPT (secondary control 1)\n"
		" SUBSYSTEM=module\n"
		" DEVICE=+module:vtice vtice: not a message\n"
		"4,1203,12345700,c;other: vtice: quoted by someone else\n"
		"not a record vtice: here\n"
		"6,1204,12345800,-;kvm: unrelated\n";
	auto got = kmsg_messages(records, "vtice: ");
	ASSERT_EQ(got.size(), 3u);
	EXPECT_EQ(got[0], "vtice: loading");
	EXPECT_EQ(got[1], "vtice: this CPU's VMX lacks EPT (secondary control 1)");
	EXPECT_EQ(got[2], "other: vtice: quoted by someone else");
	EXPECT_TRUE(kmsg_messages("", "vtice: ").empty());
	EXPECT_TRUE(kmsg_messages("6,1,2,-;no newline at the end", "vtice").size() == 0);
	EXPECT_EQ(kmsg_messages("6,1,2,-;vtice: last line without newline", "vtice").size(), 1u);
}

// The oracle is the kernel itself: a line written to /dev/kmsg after the
// tail opened comes back, one written before does not.
TEST(DoctorKernelLog, TheTailSeesOnlyWhatCameAfterIt)
{
	int w = open("/dev/kmsg", O_WRONLY | O_CLOEXEC);
	if (w < 0)
		GTEST_SKIP() << "/dev/kmsg not writable here (" << std::strerror(errno) << "): needs root";
	std::string before = "vtice-doctor-test: before " + std::to_string(getpid()) + "\n";
	std::string after = "vtice-doctor-test: after " + std::to_string(getpid()) + "\n";
	ASSERT_EQ(write(w, before.data(), before.size()), static_cast<ssize_t>(before.size()));
	KernelLogTail tail;
	ASSERT_EQ(write(w, after.data(), after.size()), static_cast<ssize_t>(after.size()));
	close(w);
	auto got = tail.lines("vtice-doctor-test: ");
	ASSERT_EQ(got.size(), 1u);
	EXPECT_EQ(got[0] + "\n", after);
}

}  // namespace
}  // namespace vtice::console::doctor
