// The command tokenizer against the data file of cases (HyperDbg style).
#include <gtest/gtest.h>

#include <fstream>

#include "commands/command.hpp"

using namespace vtice::dbg;

namespace {

std::vector<std::string> bracketed(const std::string &text)
{
	std::vector<std::string> out;
	std::size_t i = 0;
	while ((i = text.find('[', i)) != std::string::npos) {
		auto end = text.find("] ", i);
		if (end == std::string::npos)
			end = text.rfind(']');
		out.push_back(text.substr(i + 1, end - i - 1));
		i = end + 1;
	}
	return out;
}

}  // namespace

TEST(Tokenizer, DataFileCases)
{
	std::ifstream in(std::string(VTICE_TEST_DATA) + "/debugger/tokenizer_cases.txt");
	ASSERT_TRUE(in) << "tokenizer_cases.txt missing";
	std::string line, input;
	int cases = 0;
	while (std::getline(in, line)) {
		if (line.rfind("in:", 0) == 0) {
			input = line.size() > 4 ? line.substr(4) : "";
			continue;
		}
		auto words = tokenize(input);
		if (line.rfind("out:", 0) == 0) {
			ASSERT_TRUE(words.ok()) << "'" << input << "': " << words.error().message;
			EXPECT_EQ(*words, bracketed(line.substr(4))) << "input '" << input << "'";
			cases++;
		} else if (line.rfind("err:", 0) == 0) {
			ASSERT_FALSE(words.ok()) << "'" << input << "' should not tokenize";
			EXPECT_EQ(words.error().offset, std::stoull(line.substr(5))) << "input '" << input << "'";
			cases++;
		}
	}
	EXPECT_GE(cases, 15);
}
