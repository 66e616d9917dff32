// vtice_make_fixture FIXTURE_DIR OUT.vtrace: writes the trace file of a
// golden fixture (used for the bundled tests/fixtures/demo.vtrace).
#include <cstdio>

#include "fixture_builder.hpp"

int main(int argc, char **argv)
{
	if (argc != 3) {
		std::fprintf(stderr, "usage: vtice_make_fixture FIXTURE_DIR OUT.vtrace\n");
		return 2;
	}
	std::string error;
	auto fixture = vtice::test::build_fixture(argv[1], error);
	if (!fixture) {
		std::fprintf(stderr, "vtice_make_fixture: %s\n", error.c_str());
		return 1;
	}
	auto written = vtice::trace::write_file(argv[2], vtice::test::fixture_trace(*fixture));
	if (!written) {
		std::fprintf(stderr, "vtice_make_fixture: %s\n", written.error().to_string().c_str());
		return 1;
	}
	return 0;
}
