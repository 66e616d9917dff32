// The RSP packet layer against hand-derived frames (checksums computed by
// hand from the gdb manual's definition: sum of payload bytes mod 256).
#include <gtest/gtest.h>

#include "rsp/packet.hpp"

using namespace vtice::dbg::rsp;

TEST(RspPacket, FramesWithChecksum)
{
	// 'g' = 0x67; "OK" = 0x4f + 0x4b = 0x9a; "" = 0.
	EXPECT_EQ(frame_packet("g"), "$g#67");
	EXPECT_EQ(frame_packet("OK"), "$OK#9a");
	EXPECT_EQ(frame_packet(""), "$#00");
	// '?' = 0x3f, the packet gdb sends first.
	EXPECT_EQ(frame_packet("?"), "$?#3f");
}

TEST(RspPacket, EscapesSpecialBytes)
{
	// '$' 0x24 -> '}' 0x04; '#' -> '}' 0x03; '}' -> '}' ']'; '*' -> '}' '\n'.
	std::string framed = frame_packet(std::string("X$#}*"));
	EXPECT_EQ(framed.substr(0, 10), std::string("$X}\x04}\x03}]}\n", 10));
	auto back = unescape_binary(std::string("X}\x04}\x03}]}\n", 9));
	ASSERT_TRUE(back.ok());
	EXPECT_EQ(std::string(back->begin(), back->end()), "X$#}*");
}

TEST(RspPacket, UnescapeRejectsTrailingEscape)
{
	auto r = unescape_binary("ab}");
	ASSERT_FALSE(r.ok());
	EXPECT_EQ(r.error().offset, 2u);
}

TEST(RspPacket, ExpandsRunLength)
{
	// gdb manual: "0* " is '0' followed by 3 more ('  ' = 32 - 29 = 3) -> "0000".
	auto r = expand_rle("0* ");
	ASSERT_TRUE(r.ok());
	EXPECT_EQ(*r, "0000");
	// '"' = 34 - 29 = 5 more.
	r = expand_rle("ab*\"c");
	ASSERT_TRUE(r.ok());
	EXPECT_EQ(*r, "abbbbbbc");
}

TEST(RspPacket, RunLengthErrorsNameTheOffset)
{
	auto r = expand_rle("*5");
	ASSERT_FALSE(r.ok());
	EXPECT_EQ(r.error().offset, 0u);
	r = expand_rle("a*");
	ASSERT_FALSE(r.ok());
	EXPECT_NE(r.error().message.find("without a count"), std::string::npos);
	r = expand_rle("a*\x01");
	ASSERT_FALSE(r.ok());
	EXPECT_NE(r.error().message.find("out of range"), std::string::npos);
}

TEST(RspPacket, HexRoundTrip)
{
	std::vector<std::uint8_t> bytes = {0x00, 0x7f, 0x80, 0xff};
	EXPECT_EQ(to_hex(bytes), "007f80ff");
	auto back = from_hex("007F80ff");
	ASSERT_TRUE(back.ok());
	EXPECT_EQ(*back, bytes);
	EXPECT_FALSE(from_hex("abc").ok());
	auto bad = from_hex("0g");
	ASSERT_FALSE(bad.ok());
	EXPECT_EQ(bad.error().offset, 1u);
	EXPECT_FALSE(parse_hex_u64("11112222333344445").ok());
	EXPECT_EQ(*parse_hex_u64("ffffffff81000000"), 0xffffffff81000000ull);
}

TEST(RspFrameReader, SplitsAcksPacketsAndFragments)
{
	FrameReader reader;
	reader.feed("+$O");
	reader.feed("K#9");
	EXPECT_EQ(reader.next()->kind, Frame::Kind::Ack);
	EXPECT_FALSE(reader.next());  // packet not complete yet
	EXPECT_GT(reader.pending(), 0u);
	reader.feed("a-");
	auto packet = reader.next();
	ASSERT_TRUE(packet);
	EXPECT_EQ(packet->kind, Frame::Kind::Packet);
	EXPECT_EQ(packet->payload, "OK");
	EXPECT_EQ(reader.next()->kind, Frame::Kind::Nak);
	EXPECT_EQ(reader.pending(), 0u);
}

TEST(RspFrameReader, ReportsBadChecksumAndKeepsGoing)
{
	FrameReader reader;
	reader.feed("$OK#00$OK#9a");
	auto bad = reader.next();
	ASSERT_TRUE(bad);
	EXPECT_EQ(bad->kind, Frame::Kind::BadChecksum);
	EXPECT_NE(bad->detail.find("9a"), std::string::npos);  // names the computed sum
	auto good = reader.next();
	ASSERT_TRUE(good);
	EXPECT_EQ(good->kind, Frame::Kind::Packet);
	reader.feed("$OK#zz");
	EXPECT_EQ(reader.next()->kind, Frame::Kind::BadChecksum);
}

TEST(RspFrameReader, DiscardsOversizedPackets)
{
	FrameReader reader(8);
	std::string big(20, 'a');
	reader.feed("$" + big + "#00" + "$OK#9a");
	auto first = reader.next();
	ASSERT_TRUE(first);
	EXPECT_EQ(first->kind, Frame::Kind::Oversized);
	EXPECT_TRUE(first->payload.empty());
	auto second = reader.next();
	ASSERT_TRUE(second);
	EXPECT_EQ(second->payload, "OK");
}

TEST(RspFrameReader, GarbageAndRestartedPackets)
{
	FrameReader reader;
	reader.feed("SeaBIOS\r\n$trunc$OK#9a");
	auto junk = reader.next();
	ASSERT_TRUE(junk);
	EXPECT_EQ(junk->kind, Frame::Kind::Garbage);
	EXPECT_EQ(junk->payload, "SeaBIOS\r\n");
	auto restarted = reader.next();
	ASSERT_TRUE(restarted);
	EXPECT_EQ(restarted->kind, Frame::Kind::Garbage);
	auto ok = reader.next();
	ASSERT_TRUE(ok);
	EXPECT_EQ(ok->payload, "OK");
}

TEST(RspPacket, ErrorReplies)
{
	EXPECT_EQ(*error_reply("E14"), "stub error 14");
	EXPECT_EQ(*error_reply("E.no such memory"), "no such memory");
	EXPECT_FALSE(error_reply("OK"));
	EXPECT_FALSE(error_reply("e0"));  // hex data that merely starts like an error
}
