#include "assemble.hpp"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <sstream>
#include <sys/wait.h>
#include <unistd.h>

namespace vtice::test {

std::string run_command(const std::string &command, int *status)
{
	std::string out;
	FILE *pipe = popen((command + " 2>&1").c_str(), "r");
	if (!pipe) {
		if (status)
			*status = -1;
		return out;
	}
	char buffer[4096];
	size_t n;
	while ((n = fread(buffer, 1, sizeof(buffer), pipe)) > 0)
		out.append(buffer, n);
	int rc = pclose(pipe);
	if (status)
		*status = WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
	return out;
}

static std::string make_temp_dir()
{
	char templ[] = "/tmp/vtice-asm-XXXXXX";
	const char *dir = mkdtemp(templ);
	return dir ? dir : "";
}

static std::map<std::string, std::uint64_t> read_nm(const std::string &elf)
{
	std::map<std::string, std::uint64_t> symbols;
	std::istringstream lines(run_command("nm " + elf));
	std::string line;
	while (std::getline(lines, line)) {
		std::istringstream fields(line);
		std::string address, type, name;
		if (fields >> address >> type >> name)
			symbols[name] = std::stoull(address, nullptr, 16);
	}
	return symbols;
}

// "    12: ffffffff81000000     5 FUNC    LOCAL  DEFAULT    1 _start"
static std::vector<ElfFunction> read_functions(const std::string &elf)
{
	std::vector<ElfFunction> out;
	std::istringstream lines(run_command("readelf -sW " + elf));
	std::string line;
	while (std::getline(lines, line)) {
		std::istringstream fields(line);
		std::string num, value, size, type, bind, vis, ndx, name;
		if (!(fields >> num >> value >> size >> type >> bind >> vis >> ndx >> name) || type != "FUNC")
			continue;
		out.push_back({name, std::stoull(value, nullptr, 16), std::stoull(size, nullptr, 0)});
	}
	return out;
}

std::optional<Assembled> assemble(const std::string &source, std::uint64_t text_address,
				  std::string &error)
{
	std::string dir = make_temp_dir();
	if (dir.empty()) {
		error = "mkdtemp failed";
		return std::nullopt;
	}
	std::ofstream(dir + "/in.S") << source;
	char address[32];
	std::snprintf(address, sizeof(address), "0x%llx", static_cast<unsigned long long>(text_address));
	int status = 0;
	std::string log = run_command("cd " + dir + " && as --64 -o in.o in.S && ld -o in.elf -e 0 "
				      "--no-warn-rwx-segments -Ttext=" + address + " in.o && "
				      "objcopy -O binary -j .text in.elf text.bin", &status);
	if (status != 0) {
		error = log;
		run_command("rm -rf " + dir);
		return std::nullopt;
	}
	Assembled out;
	out.temp_dir = std::shared_ptr<void>(nullptr, [dir](void *) { run_command("rm -rf " + dir); });
	out.text_address = text_address;
	out.elf_path = dir + "/in.elf";
	std::ifstream bin(dir + "/text.bin", std::ios::binary);
	out.text.assign(std::istreambuf_iterator<char>(bin), {});
	out.symbols = read_nm(out.elf_path);
	out.functions = read_functions(out.elf_path);
	return out;
}

// "ffffffff81000000:\tcall   ffffffff81000037 <g>"
static std::optional<PeerInsn> parse_objdump_line(const std::string &line)
{
	size_t colon = line.find(":\t");
	if (colon == std::string::npos || line.find(' ') < colon)
		return std::nullopt;
	PeerInsn insn;
	insn.address = std::stoull(line.substr(0, colon), nullptr, 16);
	std::string rest = line.substr(colon + 2);
	size_t comment = rest.find(" #");
	if (comment != std::string::npos)
		rest.resize(comment);
	size_t angle = rest.find(" <");
	if (angle != std::string::npos)
		rest.resize(angle);
	std::istringstream fields(rest);
	fields >> insn.mnemonic;
	std::getline(fields >> std::ws, insn.operands);
	while (!insn.operands.empty() && insn.operands.back() == ' ')
		insn.operands.pop_back();
	if (angle != std::string::npos)
		insn.target = std::stoull(insn.operands, nullptr, 16);
	return insn;
}

std::vector<PeerInsn> objdump(const Assembled &object, bool att)
{
	std::string command = "objdump -d --no-show-raw-insn -j .text ";
	if (!att)
		command += "-M intel ";
	std::istringstream lines(run_command(command + object.elf_path));
	std::vector<PeerInsn> out;
	std::string line;
	while (std::getline(lines, line)) {
		if (auto insn = parse_objdump_line(line))
			out.push_back(*insn);
	}
	return out;
}

}  // namespace vtice::test
