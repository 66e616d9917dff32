// What a shell command printed on stdout, whole: the oracles the console's
// tests run (python3, pfunct, lscpu) answer this way.
#pragma once

#include <cstdio>
#include <string>

namespace vtice::test {

inline std::string command_output(const std::string &command)
{
	std::string out;
	if (std::FILE *p = popen(command.c_str(), "r")) {
		char buf[4096];
		for (std::size_t n; (n = std::fread(buf, 1, sizeof(buf), p)) > 0;)
			out.append(buf, n);
		pclose(p);
	}
	return out;
}

}  // namespace vtice::test
