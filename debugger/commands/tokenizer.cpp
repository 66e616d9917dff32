#include "command.hpp"

namespace vtice::dbg {

namespace {

bool blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

// Backslash escapes inside double quotes: \" \\ \n \t; anything else is kept.
char escaped(char c)
{
	switch (c) {
	case 'n': return '\n';
	case 't': return '\t';
	default: return c;
	}
}

}  // namespace

Result<std::vector<std::string>> tokenize(std::string_view line)
{
	std::vector<std::string> words;
	std::size_t i = 0;
	while (i < line.size()) {
		while (i < line.size() && blank(line[i]))
			i++;
		if (i >= line.size() || line[i] == '#')
			break;
		std::string word;
		while (i < line.size() && !blank(line[i])) {
			char c = line[i];
			if (c == '"' || c == '\'') {
				std::size_t open = i++;
				while (i < line.size() && line[i] != c) {
					if (c == '"' && line[i] == '\\' && i + 1 < line.size())
						word.push_back(escaped(line[++i]));
					else
						word.push_back(line[i]);
					i++;
				}
				if (i >= line.size())
					return make_error(std::string("unterminated ") + (c == '"' ? "double" : "single") + " quote",
							  open);
				i++;
				continue;
			}
			word.push_back(c);
			i++;
		}
		words.push_back(std::move(word));
	}
	return words;
}

}  // namespace vtice::dbg
