// The probe language: what parses and checks, and that every refusal names
// the place in the program (line and column) with a reason.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>

#include "checker.hpp"
#include "diagnostic.hpp"
#include "parser.hpp"
#include "probe_lookup.hpp"

using namespace vtice::probes;

namespace {

// The diagnostic for a program that must be refused.
std::string refusal(const std::string &source)
{
	auto checked = compile_program(source, test_syscalls());
	EXPECT_FALSE(checked.ok()) << source;
	if (checked.ok())
		return "";
	return format_diagnostic(source, checked.error());
}

CheckedProgram accepted(const std::string &source)
{
	auto checked = compile_program(source, test_syscalls());
	EXPECT_TRUE(checked.ok()) << (checked.ok() ? "" : format_diagnostic(source, checked.error()));
	return checked.ok() ? std::move(*checked) : CheckedProgram{};
}

}  // namespace

TEST(ProbeLanguage, AcceptsTheDocumentedOneLiners)
{
	accepted("syscall:read { @[comm] = count(); }");
	accepted("syscall:openat:return /comm == \"bash\" && pid != 1 && retval >= 0/ { printf(\"%d\\n\", retval); }");
	accepted("syscall:nanosleep { @start[tid] = nsecs; }\n"
		 "syscall:nanosleep:return /@start[tid]/ { @lat = hist(nsecs - @start[tid]); delete(@start[tid]); }");
	accepted("syscall:read, syscall:write { @bytes[probe, comm] = sum(arg2); }");
	accepted("syscall:* { @n[cpu] = count(); } interval:s:1 { print(@n); clear(@n); }");
	accepted("BEGIN { printf(\"go\\n\"); } END { printf(\"%s\\n\", \"done\"); } syscall:getpid { exit(); }");
	accepted("syscall:read { @r = lhist(arg2, 0, 4096, 512); @mx = max(arg2); @mn = min(arg2); @a = avg(arg2); }");
	accepted("// a comment\nsyscall:read /* another */ { @x = 1; }");
	CheckedProgram fn = accepted("fn:vfs_read /comm == \"cat\"/ { @[comm, cpu] = sum(arg2); }");
	ASSERT_EQ(fn.program.probes.size(), 1u);
	EXPECT_EQ(fn.program.probes[0].points[0].kind, PointKind::FnEntry);
	EXPECT_EQ(fn.program.probes[0].points[0].function, "vfs_read");
	EXPECT_TRUE(fn.has_fn_probes);
	EXPECT_FALSE(fn.has_syscall_probes);
	EXPECT_EQ(fn.root_filter.comm, "cat") << "fn probes narrow root's filter too";
}

TEST(ProbeLanguage, ErrorsPointAtTheLineAndColumn)
{
	std::string d = refusal("syscall:read {\n  @[comm] = cnt();\n}");
	EXPECT_NE(d.find("program:2:13: error: unknown function 'cnt'"), std::string::npos) << d;
	// The line, and a caret under column 13.
	EXPECT_NE(d.find("\n    @[comm] = cnt();\n              ^\n"), std::string::npos) << d;
}

TEST(ProbeLanguage, RefusesTypeErrors)
{
	EXPECT_NE(refusal("syscall:read /comm == 1/ { @x = 1; }").find(":1:20: error: '==' compares a string with a number"),
		  std::string::npos);
	EXPECT_NE(refusal("syscall:read { @x = comm + 1; }").find("'+' takes numbers"), std::string::npos);
	EXPECT_NE(refusal("syscall:read /comm/ { @x = 1; }").find("a predicate is a number"), std::string::npos);
	EXPECT_NE(refusal("syscall:read { @x = sum(comm); }").find("counts numbers, not strings"), std::string::npos);
	EXPECT_NE(refusal("syscall:read { printf(\"%d\\n\", comm); }").find(":1:31: error: printf's conversion 1 takes a number"),
		  std::string::npos);
	EXPECT_NE(refusal("syscall:read { printf(\"%s %s\\n\", comm); }").find("takes 2 values, and 1 is given"),
		  std::string::npos);
	EXPECT_NE(refusal("syscall:read { printf(\"%q\", 1); }").find("unknown conversion '%q'"), std::string::npos);
}

TEST(ProbeLanguage, RefusesValuesWhereTheProbeHasNone)
{
	EXPECT_NE(refusal("syscall:read { @x = retval; }").find(":1:21: error: retval exists only in syscall:NAME:return"),
		  std::string::npos);
	EXPECT_NE(refusal("BEGIN { @x[comm] = 1; }").find("'comm' exists only in syscall, fn, addr, watch and profile probes"),
		  std::string::npos);
	EXPECT_NE(refusal("interval:s:1 { @x = arg0; }").find("'arg0' exists only in syscall and fn probes"),
		  std::string::npos);
	EXPECT_NE(refusal("fn:vfs_read { @x = retval; }").find("retval exists only in syscall:NAME:return"),
		  std::string::npos);
	EXPECT_NE(refusal("syscall:read:return, syscall:read { @x = retval; }").find("retval exists only"),
		  std::string::npos);
	EXPECT_NE(refusal("syscall:read { @x = arg6; }").find("unknown name 'arg6'"), std::string::npos);
}

TEST(ProbeLanguage, RefusesMapsUsedTwoWays)
{
	EXPECT_NE(refusal("syscall:read { @x = count(); } syscall:write { @x = sum(arg2); }")
			  .find(":1:53: error: @x was first assigned count()"),
		  std::string::npos);
	EXPECT_NE(refusal("syscall:read { @x[pid] = count(); } syscall:write { @x[comm] = count(); }")
			  .find("@x was first used with other keys (a number); here: a string"),
		  std::string::npos);
	EXPECT_NE(refusal("syscall:read { @x = 1; printf(\"%d\\n\", @y); }").find("@y is never assigned"),
		  std::string::npos);
	EXPECT_NE(refusal("syscall:read { @h = hist(arg2); @y = @h + 1; }").find("holds a histogram"),
		  std::string::npos);
	EXPECT_NE(refusal("syscall:read { @x[pid] = 1; @y = @x; }").find("@x has 1 key, not 0"), std::string::npos);
	EXPECT_NE(refusal("syscall:read { @x = count() + 1; }").find("count() is a map's value"), std::string::npos);
}

// fn:NAME:return: retval is RAX there; the argument registers hold
// whatever the function left, so argN and str(argN) are refused; kstack
// is the stack at the RET (the function, then its callers).
TEST(ProbeLanguage, FunctionReturnsGiveRetvalOnly)
{
	accepted("fn:vfs_read:return { @[retval] = count(); }");
	accepted("fn:vfs_read:return, syscall:read:return { @ret = sum(retval); }");
	EXPECT_NE(refusal("fn:vfs_read:return { @x = sum(arg2); }").find("'arg2' is gone at a function's return"),
		  std::string::npos);
	EXPECT_NE(refusal("fn:vfs_read:return { printf(\"%s\", str(arg0)); }").find("'arg0' is gone at a function's return"),
		  std::string::npos);
	accepted("fn:vfs_read:return { @[kstack] = count(); }");
	EXPECT_NE(refusal("fn:vfs_read { @x = sum(retval); }").find("retval exists only in syscall:NAME:return and "
								    "fn:NAME:return"),
		  std::string::npos);
	EXPECT_NE(refusal("fn:vfs_read:exit:now { exit(); }").find("write fn:NAME, fn:NAME:return"), std::string::npos);
}

// fn:MODULE:NAME names whose function it is when the kernel and a module
// (or two modules) have one of that name; vmlinux is the kernel. A third
// part other than "return" is a module's name ("return" is no C name).
TEST(ProbeLanguage, AFunctionPointMayNameItsModule)
{
	struct Case {
		const char *text;
		const char *module, *function;
		PointKind kind;
	};
	for (const Case &c : {Case{"fn:msr:msr_read", "msr", "msr_read", PointKind::FnEntry},
			      Case{"fn:msr:msr_read:return", "msr", "msr_read", PointKind::FnReturn},
			      Case{"fn:vmlinux:msr_read", "vmlinux", "msr_read", PointKind::FnEntry},
			      Case{"fn:msr_read:return", "", "msr_read", PointKind::FnReturn},
			      Case{"fn:nf_tables:x", "nf_tables", "x", PointKind::FnEntry}}) {
		SCOPED_TRACE(c.text);
		auto program = accepted(std::string(c.text) + " { @ = count(); }");
		ASSERT_EQ(program.program.probes.size(), 1u);
		const ProbePoint &p = program.program.probes[0].points[0];
		EXPECT_EQ(p.module, c.module);
		EXPECT_EQ(p.function, c.function);
		EXPECT_EQ(p.kind, c.kind);
		EXPECT_EQ(qualified_function(p), std::string(*c.module ? std::string(c.module) + ":" : "") + c.function);
	}
	EXPECT_NE(refusal("fn:msr::return { exit(); }").find("expected a name"), std::string::npos);
	EXPECT_NE(refusal("fn:msr:return:return { exit(); }").find("write fn:NAME"), std::string::npos);
	std::string long_name(56, 'm');
	EXPECT_NE(refusal("fn:" + long_name + ":f { exit(); }").find("is not a module's name"), std::string::npos);
	// One place, one probe: the kernel's and the module's msr_read are two.
	accepted("fn:msr:msr_read { @a = count(); } fn:vmlinux:msr_read { @b = count(); }");
}

// Before checking, the fn: and addr:NAME points' functions as lookups take
// them: the console lends their modules' types to casts (probe_params.hpp).
TEST(ProbeLanguage, FunctionPointsListsTheFnAndAddrPointsAsParameterLookupsTakeThem)
{
	auto program = parse_program("fn:vfs_read, syscall:read, fn:msr:msr_read:return { @ = count(); } "
				     "addr:cpuid_read+4 { @a = count(); } addr:0xffffffff81000000 { @b = count(); } "
				     "fn:a:b:c:d { exit(); } fn:vmlinux:x { exit(); } watch:w:jiffies_64:8 { exit(); }");
	ASSERT_TRUE(program) << program.error().message;
	EXPECT_EQ(function_points(*program),
		  (std::vector<std::string>{"vfs_read", "msr:msr_read", "cpuid_read", "vmlinux:x"}));
}

TEST(ProbeLanguage, AnAddrProbeSitsAtAnAddressOrASymbolsOffsetAndHasNoArguments)
{
	auto raw = accepted("addr:0xffffffff81234567 { @[comm, kstack] = count(); }");
	ASSERT_EQ(raw.program.probes.size(), 1u);
	const ProbePoint &at = raw.program.probes[0].points[0];
	EXPECT_EQ(at.kind, PointKind::Addr);
	EXPECT_EQ(at.address, 0xffffffff81234567ull);
	EXPECT_EQ(at.text, "addr:0xffffffff81234567");	// as written, not in decimal
	EXPECT_TRUE(raw.has_fn_probes);	// armed as the function probes are
	EXPECT_TRUE(raw.fn_kstack);

	auto named = accepted("addr:do_sys_openat2+0x1c /comm == \"cat\"/ { @[pid] = count(); }");
	const ProbePoint &off = named.program.probes[0].points[0];
	EXPECT_EQ(off.function, "do_sys_openat2");
	EXPECT_EQ(off.offset, 0x1cu);
	EXPECT_EQ(off.address, 0u);	// the caller finds it in the running kernel
	EXPECT_EQ(named.root_filter.comm, "cat");	// narrowed in root like fn: probes
	EXPECT_EQ(accepted("addr:vfs_read { exit(); }").program.probes[0].points[0].offset, 0u);
	EXPECT_EQ(accepted("addr:vfs_read+28 { exit(); }").program.probes[0].points[0].offset, 28u);

	EXPECT_NE(refusal("addr:vfs_read+0x10 { @x = sum(arg1); }").find("'arg1' is a function's argument at its entry"),
		  std::string::npos);
	EXPECT_NE(refusal("addr:vfs_read { @x = sum(retval); }").find("retval exists only in"), std::string::npos);
	EXPECT_NE(refusal("addr:vfs_read { printf(\"%s\", str(arg1)); }").find("is a function's argument at its entry"),
		  std::string::npos);
	EXPECT_NE(refusal("addr:0 { exit(); }").find("write addr:0xADDRESS or addr:NAME+OFFSET"), std::string::npos);
	EXPECT_NE(refusal("addr:0x1ffffffffffffffff { exit(); }").find("does not fit in 64 bits"), std::string::npos);
	EXPECT_NE(refusal("addr:vfs_read:return { exit(); }").find("write addr:0xADDRESS"), std::string::npos);
	EXPECT_NE(refusal("addr:vfs_read+x { exit(); }").find("1:15: error: expected an offset after '+'"),
		  std::string::npos);
}

TEST(ProbeLanguage, AWatchProbeNamesARangeAndWhatAnAccessDoes)
{
	auto p = accepted("watch:w:jiffies_64:8 /comm != \"swapper\"/ { @[func, kstack] = count(); "
			  "printf(\"%x %d\\n\", addr, reg(\"rip\")); }");
	const ProbePoint &w = p.program.probes[0].points[0];
	EXPECT_EQ(w.kind, PointKind::Watch);
	EXPECT_EQ(w.watch_access, kWatchWrite);
	EXPECT_EQ(w.watch_len, 8u);
	EXPECT_EQ(w.function, "jiffies_64");
	EXPECT_EQ(w.address, 0u) << "the caller finds the symbol in the running kernel";
	EXPECT_TRUE(p.has_fn_probes) << "armed through the probes' ioctl";
	EXPECT_TRUE(p.fn_kstack) << "its hits copy the stack";
	EXPECT_TRUE(p.uses_func);
	EXPECT_EQ(accepted("watch:r:0xffff888001234000:4096 { exit(); }").program.probes[0].points[0].address,
		  0xffff888001234000ull);
	EXPECT_EQ(accepted("watch:rw:init_task+0x10:1 { exit(); }").program.probes[0].points[0].watch_access,
		  kWatchWrite | kWatchRead);
	EXPECT_EQ(accepted("watch:rw:init_task+0x10:1 { exit(); }").program.probes[0].points[0].offset, 0x10u);

	const std::string usage = "write watch:w|r|rw:ADDRESS:LEN";
	EXPECT_NE(refusal("watch:x:jiffies:8 { exit(); }").find(usage), std::string::npos) << "access x";
	EXPECT_NE(refusal("watch:w:jiffies:0 { exit(); }").find(usage), std::string::npos) << "no bytes";
	EXPECT_NE(refusal("watch:w:jiffies:4097 { exit(); }").find(usage), std::string::npos) << "over a page";
	EXPECT_NE(refusal("watch:w:jiffies { exit(); }").find(usage), std::string::npos) << "no length";
	EXPECT_NE(refusal("watch:w:0:8 { exit(); }").find(usage), std::string::npos) << "address 0";
	EXPECT_NE(refusal("watch:w:jiffies:8 { @x = sum(arg0); }").find("at an addr: or a watch:"), std::string::npos);
	EXPECT_NE(refusal("watch:w:jiffies:8 { @x = sum(retval); }").find("retval exists only in"), std::string::npos);
	EXPECT_NE(refusal("fn:vfs_read { @x = sum(addr); }").find("addr is the watched byte"), std::string::npos);
	EXPECT_NE(refusal("syscall:read { @[func] = count(); }").find("func is the function a probe hit is in"),
		  std::string::npos);
	accepted("fn:vfs_read { @[func] = count(); }");
}

TEST(ProbeLanguage, RegReadsTheRegistersAHitCarriesInFunctionProbesOnly)
{
	auto p = accepted("addr:vfs_read+0x10 { printf(\"%d %d %d\\n\", reg(\"rdi\"), reg(\"rax\"), reg(\"rip\")); }");
	ASSERT_EQ(p.program.probes[0].body.size(), 1u);
	const auto &args = p.program.probes[0].body[0].args;
	ASSERT_EQ(args.size(), 3u);
	EXPECT_EQ(args[0]->builtin, Builtin::Reg);
	EXPECT_EQ(args[0]->number, 0);	// rdi: arg0's register
	EXPECT_EQ(args[1]->number, 6);	// rax
	EXPECT_EQ(args[2]->number, 7);	// rip
	accepted("fn:vfs_read:return { @[reg(\"rdi\")] = count(); }");
	accepted("fn:vfs_read { @x = sum(reg(\"r9\")); }");
	EXPECT_NE(refusal("syscall:read { @x = sum(reg(\"rdi\")); }").find("is a register at a probe's hit"),
		  std::string::npos);
	EXPECT_FALSE(p.more_regs) << "the eight every hit carries";
	auto more = accepted("addr:vfs_read+0x10 { printf(\"%d %d %d\\n\", reg(\"rbx\"), reg(\"r15\"), reg(\"rflags\")); }");
	EXPECT_TRUE(more.more_regs) << "a register past the eight: the hits copy the GPRS records";
	EXPECT_EQ(more.program.probes[0].body[0].args[0]->number, kFirstMoreReg);	// RBX, the first GPRS register
	EXPECT_EQ(more.program.probes[0].body[0].args[2]->number, kFirstMoreReg + 9);	// RFLAGS, the last
	EXPECT_NE(refusal("addr:vfs_read { @x = sum(reg(\"r16\")); }")
			  .find("1:30: error: reg(\"r16\"): a hit carries rax, rbx, rcx, rdx, rsi, rdi, rbp, rsp, r8-r15, "
				"rip or rflags"),
		  std::string::npos);
	EXPECT_NE(refusal("addr:vfs_read { @x = sum(reg(rdi)); }").find("reg() takes a register's name in quotes"),
		  std::string::npos);
	EXPECT_NE(refusal("addr:vfs_read { @x = sum(reg(\"rdi\" 1)); }").find("expected ')' after reg()'s register"),
		  std::string::npos);
}

TEST(ProbeLanguage, AStringMapReadsAsAStringBeforeItsAssignment)
{
	// The read comes first in the text; the checker knows every map before typing.
	accepted("syscall:write { printf(\"%s\\n\", @last[tid]); } syscall:read { @last[tid] = comm; }");
}

TEST(ProbeLanguage, RefusesProbePointsThatDoNotExistOrAreNotBuilt)
{
	EXPECT_NE(refusal("syscall:no_such_call { @x = 1; }").find("'no_such_call' is not an x86-64 syscall name"),
		  std::string::npos);
	EXPECT_NE(refusal("fn:* { @x = count(); }").find("write fn:NAME"), std::string::npos);
	EXPECT_NE(refusal("kprobe:vfs_read { @x = 1; }").find("unknown probe point 'kprobe:vfs_read'"),
		  std::string::npos);
	EXPECT_NE(refusal("interval:s:0 { exit(); }").find("intervals are at least 10 ms"), std::string::npos);
	EXPECT_NE(refusal("interval:us:5 { exit(); }").find("write interval:s:N or interval:ms:N"), std::string::npos);
	EXPECT_NE(refusal("syscall:read:entry { exit(); }").find("syscall:NAME:return"), std::string::npos);
	EXPECT_NE(refusal("syscall:* { printf(\"%s\", str(arg1)); }").find("1:26: error: str() reads a string in fn:NAME, "
									       "fn:NAME:return, addr: and syscall:NAME probes only"),
		  std::string::npos);
	EXPECT_NE(refusal("syscall:read { @[kstack] = count(); }")
			  .find("kstack exists only in fn:NAME, fn:NAME:return, addr:, watch: and profile:hz:N probes"),
		  std::string::npos);
	EXPECT_NE(refusal("profile:hz:99 { @[ustack] = count(); }").find("'ustack' (user stacks) is not built"),
		  std::string::npos);
	EXPECT_NE(refusal("syscall:openat { printf(\"%s\", args->filename); }")
			  .find("args->filename: no kernel here to name syscalls' arguments; read argN"),
		  std::string::npos);
}

TEST(ProbeLanguage, RefusesSyntaxErrorsWithTheirPlace)
{
	EXPECT_NE(refusal("syscall:read { @x = 1 @y = 2; }").find(":1:23: error: expected ';' or '}'"),
		  std::string::npos);
	EXPECT_NE(refusal("syscall:read { @x = \"open").find("this string is never closed"), std::string::npos);
	EXPECT_NE(refusal("syscall:read { @x = 1; ").find("expected '}'"), std::string::npos);
	EXPECT_NE(refusal("syscall:read /* { }").find("this comment is never closed"), std::string::npos);
	EXPECT_NE(refusal("syscall:read { @x = 99999999999999999999; }").find("does not fit in 64 bits"),
		  std::string::npos);
	EXPECT_NE(refusal("syscall:read { @x = 1 $ 2; }").find("unexpected '$'"), std::string::npos);
	EXPECT_NE(refusal("syscall:read { @x = \"\\q\"; }").find("unknown escape"), std::string::npos);
	EXPECT_NE(refusal("").find("no probes"), std::string::npos);
	EXPECT_NE(refusal("syscall:read /pid == 1 { @x = 1; }").find("expected '/' to end the predicate"),
		  std::string::npos);
}

TEST(ProbeLanguage, DivisionInsideAPredicateNeedsParentheses)
{
	accepted("syscall:read /(arg2 / 2) > 10/ { @x = count(); }");
	// A bare '/' ends the predicate, so what follows is not a block.
	EXPECT_NE(refusal("syscall:read /arg2 / 2 > 10/ { @x = count(); }").find("expected '{'"), std::string::npos);
}

TEST(ProbeLanguage, RefusesHostileSizes)
{
	std::string many;
	for (int i = 0; i < 10000; i++)
		many += "syscall:read { @x = count(); }\n";
	EXPECT_NE(refusal(many).find("the program is"), std::string::npos);	// over 64 KiB
	std::string probes;
	for (int i = 0; i < 300; i++)
		probes += "syscall:read{@x=count();}";
	EXPECT_NE(refusal(probes).find("more than 256 probes"), std::string::npos);
	std::string deep = "syscall:read { @x = " + std::string(200, '(') + "1" + std::string(200, ')') + "; }";
	EXPECT_NE(refusal(deep).find("nest at most 64 deep"), std::string::npos);
	std::string chain = "syscall:read { @x = 1";
	for (int i = 0; i < 1000; i++)
		chain += "+1";
	EXPECT_NE(refusal(chain + "; }").find("more than 256 levels deep"), std::string::npos);
	EXPECT_NE(refusal("syscall:read { @x = \"" + std::string(300, 'a') + "\"; }").find("at most 256 bytes"),
		  std::string::npos);
	EXPECT_NE(refusal("syscall:read { @x = lhist(arg2, 0, 1000000, 1); }").find("at most 1000 buckets"),
		  std::string::npos);
	EXPECT_NE(refusal("syscall:read { @x = lhist(arg2, -9223372036854775807, 9223372036854775807, 1); }")
			  .find("at most 1000 buckets"),
		  std::string::npos);
	EXPECT_NE(refusal("syscall:read { printf(\"%1000d\", 1); }").find("more than three digits"), std::string::npos);
}

TEST(ProbeLanguage, FindsTheFilterRootCanApply)
{
	CheckedProgram both = accepted("syscall:read /comm == \"vtprobe\" && arg2 > 0/ { @x = count(); }"
				       "syscall:openat:return /\"vtprobe\" == comm/ { @y = count(); }"
				       "interval:s:1 { print(@x); }");
	EXPECT_EQ(both.root_filter.comm, "vtprobe");
	EXPECT_EQ(both.root_filter.pid, 0u);
	CheckedProgram differ = accepted("syscall:read /comm == \"a\"/ { @x = count(); }"
					 "syscall:write /comm == \"b\"/ { @y = count(); }");
	EXPECT_EQ(differ.root_filter.comm, "");
	// An || is no narrowing: either side may match.
	CheckedProgram either = accepted("syscall:read /comm == \"a\" || pid == 5/ { @x = count(); }");
	EXPECT_EQ(either.root_filter.comm, "");
	EXPECT_EQ(either.root_filter.pid, 0u);
	CheckedProgram pid = accepted("syscall:read /pid == 42/ { @x = count(); }");
	EXPECT_EQ(pid.root_filter.pid, 42u);
	EXPECT_TRUE(pid.has_syscall_probes);
	EXPECT_FALSE(accepted("BEGIN { exit(); }").has_syscall_probes);
}

TEST(ProbeLanguage, ProfileProbesSampleAtOneRateWithTheirStacks)
{
	CheckedProgram p = accepted("profile:hz:99 /comm == \"dd\"/ { @[kstack] = count(); @c[cpu, comm, kstack] = count(); "
				    "printf(\"%d %d %s\\n%s\\n\", pid, tid, comm, kstack); }");
	EXPECT_EQ(p.profile_hz, 99u);
	EXPECT_TRUE(p.profile_kstack);
	EXPECT_FALSE(p.fn_kstack) << "no fn: probe: no hit copies a stack";
	EXPECT_FALSE(p.has_syscall_probes);
	EXPECT_FALSE(p.has_fn_probes);
	EXPECT_EQ(p.root_filter.comm, "") << "no syscall or fn: probe to filter";
	EXPECT_EQ(p.profile_filter.comm, "dd") << "root records only dd's samples";
	ASSERT_EQ(p.maps.size(), 2u);
	EXPECT_EQ(p.maps[0].keys, std::vector<Type>{Type::Stack});
	EXPECT_EQ(accepted("profile:hz:10000 { @[cpu] = count(); } profile:hz:10000 { @n = count(); }").profile_hz,
		  10000u);
	EXPECT_FALSE(accepted("profile:hz:1 { @[comm] = count(); }").uses_kstack());
}

// Root samples for the profile probes together: a filter only when all of
// them narrow to the same task, and independent of the other probes'.
TEST(ProbeLanguage, FindsTheFilterRootCanApplyToSamples)
{
	CheckedProgram pid = accepted("profile:hz:99 /pid == 42 && cpu == 1/ { @ = count(); }"
				      "syscall:read /comm == \"cat\"/ { @r = count(); }");
	EXPECT_EQ(pid.profile_filter.pid, 42u);
	EXPECT_EQ(pid.profile_filter.comm, "");
	EXPECT_EQ(pid.root_filter.comm, "cat");
	EXPECT_EQ(pid.root_filter.pid, 0u);
	CheckedProgram one_open = accepted("profile:hz:99 /comm == \"dd\"/ { @a = count(); }"
					   "profile:hz:99 { @b = count(); }");
	EXPECT_EQ(one_open.profile_filter.comm, "") << "the second probe wants every sample";
	CheckedProgram either = accepted("profile:hz:99 /comm == \"dd\" || comm == \"cat\"/ { @ = count(); }");
	EXPECT_EQ(either.profile_filter.comm, "");
}

TEST(ProbeLanguage, FnProbesReadTheStackOfTheirEntry)
{
	CheckedProgram p = accepted("fn:vfs_read /comm == \"dd\"/ { @[kstack] = count(); printf(\"%s\\n\", kstack); }");
	EXPECT_TRUE(p.fn_kstack);
	EXPECT_FALSE(p.profile_kstack) << "no profile probe: samples need no stack";
	EXPECT_EQ(p.root_filter.comm, "dd") << "a fn: probe's hits are still filtered in root";
	CheckedProgram mixed = accepted("fn:vfs_read { @a[kstack] = count(); } profile:hz:9 { @b = count(); }");
	EXPECT_TRUE(mixed.fn_kstack);
	EXPECT_FALSE(mixed.profile_kstack);
	CheckedProgram both = accepted("fn:vfs_read, profile:hz:9 { @[kstack] = count(); }");
	EXPECT_TRUE(both.fn_kstack);
	EXPECT_TRUE(both.profile_kstack);
	EXPECT_FALSE(accepted("fn:vfs_read { @[comm] = count(); }").uses_kstack()) << "no kstack: no stack copied";
	EXPECT_NE(refusal("fn:vfs_read, syscall:read { @[kstack] = count(); }")
			  .find("kstack exists only in fn:NAME, fn:NAME:return, addr:, watch: and profile:hz:N probes"),
		  std::string::npos);
}

TEST(ProbeLanguage, RefusesWhatAProfileProbeCannotDo)
{
	EXPECT_NE(refusal("profile:hz:0 { exit(); }").find("1:1: error: write profile:hz:N, N from 1 to 10000"),
		  std::string::npos);
	EXPECT_NE(refusal("profile:hz:10001 { exit(); }").find("N from 1 to 10000"), std::string::npos);
	EXPECT_NE(refusal("profile:ms:5 { exit(); }").find("write profile:hz:N"), std::string::npos);
	EXPECT_NE(refusal("profile:hz:99999999999999999999 { exit(); }").find("1:12: error: this number does not fit"),
		  std::string::npos);
	EXPECT_NE(refusal("profile:hz:123456 { exit(); }").find("N from 1 to 10000"), std::string::npos);
	EXPECT_NE(refusal("profile:hz:99 { @a = count(); }\nprofile:hz:49 { @b = count(); }")
			  .find("2:1: error: one profile rate per program: profile:hz:99 came first"),
		  std::string::npos);
	EXPECT_NE(refusal("profile:hz:99 { @[arg0] = count(); }").find("'arg0' exists only in syscall and fn probes"),
		  std::string::npos);
	EXPECT_NE(refusal("profile:hz:99 { @[retval] = count(); }").find("retval exists only"), std::string::npos);
	EXPECT_NE(refusal("profile:hz:99, syscall:read { @[kstack] = count(); }")
			  .find("kstack exists only in fn:NAME, fn:NAME:return, addr:, watch: and profile:hz:N probes"),
		  std::string::npos);
	// A stack is a key or printed, nothing else.
	std::string use = "a stack (kstack) is a map key or printed with printf's %s, nothing else";
	EXPECT_NE(refusal("profile:hz:99 { @s = kstack; }").find(use), std::string::npos);
	EXPECT_NE(refusal("profile:hz:99 /kstack == \"x\"/ { exit(); }").find(use), std::string::npos);
	EXPECT_NE(refusal("profile:hz:99 { @n = sum(kstack); }").find("sum() counts numbers, not"), std::string::npos);
	EXPECT_NE(refusal("profile:hz:99 { @n = -kstack; }").find("'-' takes a number, not a stack"), std::string::npos);
	EXPECT_NE(refusal("profile:hz:99 { printf(\"%d\", kstack); }").find("takes a number, this is a stack"),
		  std::string::npos);
	EXPECT_NE(refusal("profile:hz:99 { @[kstack()] = count(); }").find("write kstack, without ()"),
		  std::string::npos);
	EXPECT_NE(refusal("interval:s:1 { printf(\"%s\", comm); }").find("'comm' exists only in syscall, fn, addr, watch and profile"),
		  std::string::npos);
}

TEST(ProbeLanguage, StrReadsOneArgumentsStringPerFunction)
{
	CheckedProgram p = accepted("fn:do_sys_openat2 /comm == \"cat\"/ { printf(\"%s\\n\", str(arg1)); "
				    "@[str(arg1)] = count(); } fn:vfs_read { @n[comm, pid] = sum(arg2); }");
	using vtice::probes::FetchCode;
	using Ops = std::vector<vtice::probes::FetchOp>;
	const Ops copy_arg1{{FetchCode::Arg, 1, 0}, {FetchCode::String, 0, 0}};
	EXPECT_EQ(p.program.probes[0].fetch, copy_arg1) << "root's fetch program: the string at RSI, once";
	EXPECT_TRUE(p.program.probes[1].fetch.empty()) << "no str(): nothing copied";
	EXPECT_EQ(p.program.probes[0].str_arg, -1) << "str_arg is the syscall probes'";
	EXPECT_EQ(p.maps[0].keys, std::vector<Type>{Type::String});
	EXPECT_EQ(accepted("fn:a, fn:b { @s = str(arg0); }").program.probes[0].fetch,
		  (Ops{{FetchCode::Arg, 0, 0}, {FetchCode::String, 0, 0}}));
	EXPECT_NE(refusal("fn:a { printf(\"%s\", str(arg1 + 8)); }").find("str() takes an argument, as in"),
		  std::string::npos);
	EXPECT_NE(refusal("fn:a { printf(\"%s\", str(\"x\")); }").find("str() takes an argument, as in"),
		  std::string::npos);
	EXPECT_NE(refusal("fn:a { printf(\"%s %s\", str(arg1), str(arg2)); }")
			  .find("1:35: error: one str() per probe: this probe reads another string already"),
		  std::string::npos);
	EXPECT_NE(refusal("fn:a { @x = str(arg1); }\nfn:a { @y = str(arg2); }")
			  .find("2:1: error: fn:a reads other memory (str() or fields) in another probe"),
		  std::string::npos);
	EXPECT_NE(refusal("profile:hz:9 { @[str(arg0)] = count(); }").find("str() reads a string in fn:NAME, fn:NAME:return, addr: and"),
		  std::string::npos);
	EXPECT_NE(refusal("fn:a { @n = sum(str(arg0)); }").find("counts numbers, not"), std::string::npos);
}

// Root records only the syscalls the syscall: probes name (their numbers
// from the kernel's own table); syscall:* or no syscall: probe, all.
TEST(ProbeLanguage, TheSyscallsTheProbesNameAreTheOnesRootRecords)
{
	EXPECT_EQ(accepted("syscall:openat:return { @o = count(); }\nsyscall:read, syscall:close { @n = count(); }")
			  .syscall_numbers,
		  (std::set<std::uint64_t>{257, 0, 3}));
	EXPECT_TRUE(accepted("syscall:openat { @o = count(); }\nsyscall:* { @n = count(); }").syscall_numbers.empty())
		<< "syscall:* records every syscall";
	EXPECT_TRUE(accepted("fn:vfs_read { @n = count(); }").syscall_numbers.empty());
}

// str() of a syscall's argument: root copies it at the syscall's entry
// (the number and the argument go to the hypervisor, syscall_strings); the
// return sees what the entry copied. One string per syscall, eight
// syscalls at most (the hypervisor's slots), never syscall:*.
TEST(ProbeLanguage, StrReadsASyscallsStringAtItsEntry)
{
	CheckedProgram p = accepted("syscall:openat { printf(\"%s\\n\", str(arg1)); }\n"
				    "syscall:openat:return { @[str(arg1)] = count(); }");
	EXPECT_EQ(p.syscall_strings, (std::map<std::uint64_t, int>{{257, 1}}));
	EXPECT_EQ(accepted("syscall:openat, syscall:execve { @s = str(arg0); }").syscall_strings,
		  (std::map<std::uint64_t, int>{{257, 0}, {59, 0}}))
		<< "two syscalls in one probe: a slot each";
	EXPECT_NE(refusal("syscall:openat { @x = str(arg1); }\nsyscall:openat:return { @y = str(arg0); }")
			  .find("2:1: error: syscall:openat reads str(arg1) in another probe: one string per syscall"),
		  std::string::npos);
	EXPECT_NE(refusal("syscall:openat, fn:do_sys_openat2 { @s = str(arg1); }").find("str() reads a string in fn:NAME"),
		  std::string::npos)
		<< "one probe, one kind of copy";
	std::string nine;
	for (const char *name : {"read", "write", "open", "close", "stat", "fstat", "lstat", "poll", "lseek"})
		nine += std::string("syscall:") + name + " { @[str(arg0)] = count(); }\n";
	EXPECT_NE(refusal(nine).find("9:1: error: str() in at most 8 syscalls per program"), std::string::npos);
	EXPECT_EQ(p.program.probes[0].str_arg, 1);
}

namespace {

vtice::Result<CheckedProgram> with_params(const std::string &source)
{
	return compile_program(source, test_syscalls(), test_params(), nullptr, test_syscall_params());
}

std::string params_refusal(const std::string &source)
{
	auto checked = with_params(source);
	EXPECT_FALSE(checked.ok()) << source;
	return checked.ok() ? "" : format_diagnostic(source, checked.error());
}

}  // namespace

TEST(ProbeLanguage, ArgsByNameBecomeTheirRegistersWithTheirWidth)
{
	auto checked = with_params("fn:do_sys_openat2 { printf(\"%s %d\\n\", str(args->filename), args->dfd); }");
	ASSERT_TRUE(checked.ok()) << format_diagnostic("", checked.error());
	const Probe &probe = checked->program.probes[0];
	EXPECT_EQ(probe.fetch, (std::vector<vtice::probes::FetchOp>{{vtice::probes::FetchCode::Arg, 1, 0},
								     {vtice::probes::FetchCode::String, 0, 0}}))
		<< "filename is do_sys_openat2's second argument";
	const Expr &dfd = *probe.body[0].args[1];
	EXPECT_EQ(dfd.number, 0);
	EXPECT_EQ(dfd.bytes, 4u);
	EXPECT_TRUE(dfd.is_signed);
	// The same name at the same place in two functions is one argument.
	ASSERT_TRUE(with_params("fn:vfs_read, fn:vfs_write { @[probe] = sum(args->count); }").ok());
}

TEST(ProbeLanguage, ArgsByNameRefusalsSayWhy)
{
	EXPECT_NE(params_refusal("fn:do_sys_openat2 { @[args->flags] = count(); }")
			  .find("1:23: error: do_sys_openat2 has no argument 'flags': it takes dfd, filename, how"),
		  std::string::npos);
	EXPECT_NE(params_refusal("fn:vfs_read, fn:do_sys_openat2 { @[args->file] = count(); }")
			  .find("error: do_sys_openat2 has no argument 'file'"),
		  std::string::npos)
		<< "every function of the probe must have it";
	EXPECT_NE(params_refusal("fn:do_sys_openat2, fn:getname_flags { printf(\"%s\\n\", str(args->filename)); }")
			  .find("differs between the functions of this probe (fn:getname_flags): one probe, one place"),
		  std::string::npos)
		<< "filename is argument 1 of do_sys_openat2 but 0 of getname_flags";
	EXPECT_NE(params_refusal("fn:seven { @ = sum(args->g); }").find("only arguments 0-5 come in registers"),
		  std::string::npos);
	EXPECT_NE(params_refusal("fn:by_value { @ = sum(args->ts); }").find("passed by value"), std::string::npos);
	EXPECT_NE(params_refusal("fn:vfs_read:return { @ = sum(args->count); }").find("in fn:NAME probes"),
		  std::string::npos);
	EXPECT_NE(params_refusal("fn:nosuch { @ = sum(args->x); }").find("no function nosuch in the test table"),
		  std::string::npos);
	EXPECT_NE(params_refusal("fn:do_sys_openat2 { @ = sum(args->how->flags); }")
			  .find("1:38: error: no kernel BTF here to read through memory with"),
		  std::string::npos)
		<< "names without types: reads through them need the BTF's structs";
	// Without a BTF to ask, args->NAME is refused, argN still works.
	EXPECT_NE(refusal("fn:vfs_read { @ = sum(args->count); }").find("no kernel BTF here"), std::string::npos);
}

// args->NAME in a syscall:NAME probe is the syscall's argument of that
// name, at its place and width, by the syscall's number (syscall:fstat's
// are the kernel's newfstat's); str() of one is str(argN) copied at entry.
TEST(ProbeLanguage, SyscallArgsByNameAreTheirRegistersWithTheirWidth)
{
	auto checked = with_params(
		"syscall:openat { printf(\"%d %s %d\\n\", args->dfd, str(args->filename), args->mode); }\n"
		"syscall:fstat:return { @[args->fd] = count(); }");
	ASSERT_TRUE(checked.ok()) << format_diagnostic("", checked.error());
	const Probe &open = checked->program.probes[0];
	const Expr &dfd = *open.body[0].args[0];
	EXPECT_EQ(dfd.number, 0);
	EXPECT_EQ(dfd.bytes, 4u);
	EXPECT_TRUE(dfd.is_signed);
	EXPECT_EQ(open.str_arg, 1) << "filename is openat's argument 1";
	EXPECT_EQ(checked->syscall_strings, (std::map<std::uint64_t, int>{{257, 1}}));
	const Expr &mode = *open.body[0].args[2];
	EXPECT_EQ(mode.number, 3);
	EXPECT_EQ(mode.bytes, 2u);
	EXPECT_FALSE(mode.is_signed);
	const Expr &fd = *checked->program.probes[1].body[0].keys[0];
	EXPECT_EQ(fd.number, 0);
	EXPECT_EQ(fd.bytes, 4u);
	EXPECT_FALSE(fd.is_signed);
	// The same name at the same place and width in two syscalls is one argument.
	EXPECT_TRUE(with_params("syscall:read, syscall:write { @[probe] = sum(args->count); }").ok());
}

TEST(ProbeLanguage, SyscallArgsByNameRefusalsSayWhy)
{
	EXPECT_NE(params_refusal("syscall:openat { @ = sum(args->fd); }")
			  .find("1:26: error: syscall:openat has no argument 'fd': it takes dfd, filename, flags, mode"),
		  std::string::npos);
	EXPECT_NE(params_refusal("syscall:getpid { @ = sum(args->fd); }").find("it takes none"),
		  std::string::npos);
	EXPECT_NE(params_refusal("syscall:open, syscall:openat { @[str(args->filename)] = count(); }")
			  .find("differs between the syscalls of this probe (syscall:openat): one probe, one place"),
		  std::string::npos)
		<< "filename is open's argument 0 and openat's 1";
	EXPECT_NE(params_refusal("syscall:* { @ = sum(args->fd); }").find("and in syscall:NAME ones"),
		  std::string::npos);
	EXPECT_NE(params_refusal("syscall:read, fn:vfs_read { @ = sum(args->count); }")
			  .find("and in syscall:NAME ones"),
		  std::string::npos)
		<< "one probe, one source of names";
	EXPECT_NE(params_refusal("syscall:lseek { @ = sum(args->fd); }")
			  .find("1:25: error: args->fd: no declaration of syscall:lseek in the test table"),
		  std::string::npos)
		<< "the lookup's reason, at the place";
	EXPECT_NE(params_refusal("syscall:fstat { @ = sum(args->statbuf->st_size); }").find("reading through memory"),
		  std::string::npos)
		<< "reads through a syscall's arguments are not built";
}

// A predicate's comparisons of an argument or a register with a 32-bit
// constant become KEEP tests root runs ahead of the reads (a hit failing
// one is not recorded); anything else stays with the console, which tests
// the whole predicate anyway.
TEST(ProbeLanguage, RootTestsThePredicatesComparisonsItComputesExactly)
{
	auto tests_of = [](const std::string &source) {
		auto p = accepted(source);
		return p.program.probes.empty() ? std::vector<FetchOp>{} : p.program.probes[0].fetch;
	};
	auto keep = [](KeepCmp how, std::int32_t imm) {
		return FetchOp{FetchCode::Keep, static_cast<std::uint8_t>(how), imm};	// the whole register
	};
	const std::vector<FetchOp> above_4k = {{FetchCode::Arg, 2, 0}, keep(KeepCmp::Gt, 4096)};
	EXPECT_EQ(tests_of("fn:vfs_read /arg2 > 4096 && comm == \"dd\"/ { @ = sum(cpu); }"), above_4k);
	EXPECT_EQ(tests_of("fn:vfs_read /4096 < arg2/ { @ = sum(cpu); }"), above_4k) << "the constant first, turned round";
	EXPECT_EQ(tests_of("addr:vfs_read+4 /reg(\"rsi\") != -1 && reg(\"r12\") <= 7/ { @ = sum(cpu); }"),
		  (std::vector<FetchOp>{{FetchCode::Reg, 1, 0}, keep(KeepCmp::Ne, -1),
					{FetchCode::Reg, 12, 0}, keep(KeepCmp::Le, 7)}));	// RSI, R12
	EXPECT_EQ(tests_of("fn:vfs_read:return /reg(\"rax\") < 0/ { @ = sum(cpu); }"),
		  (std::vector<FetchOp>{{FetchCode::Reg, 6, 0}, keep(KeepCmp::Lt, 0)}));
	for (const char *console_only : {
		     "fn:vfs_read /arg2 > 4096 || pid == 1/ { @ = sum(cpu); }",	// not a chain of &&
		     "fn:vfs_read /arg2 > 0x100000000/ { @ = sum(cpu); }",	// past 32 bits
		     "fn:vfs_read /arg2 + 1 > 2/ { @ = sum(cpu); }",		// arithmetic
		     "fn:vfs_read /arg2 > arg1/ { @ = sum(cpu); }",		// no constant
		     "addr:vfs_read+4 /reg(\"rip\") == 5/ { @ = sum(cpu); }",	// not a general register
		     "syscall:read /arg2 > 10/ { @ = sum(cpu); }",		// no fetch program there
		     "fn:vfs_read /arg2 > 4096/ { @ = sum(cpu); } fn:vfs_read { @all = sum(cpu); }",	// not alone
	     })
		EXPECT_EQ(tests_of(console_only), std::vector<FetchOp>{}) << console_only;
}

// Where root tests a probe's whole predicate and its body is `@m = count()`
// (no key; one key: RootKeepsTheLeastOrGreatestOperand below), root counts
// its hits and records none: its program ends in
// COUNT. Anything root cannot decide exactly keeps the hits coming.
TEST(ProbeLanguage, RootCountsAProbeWhosePredicateItTestsWhole)
{
	auto counted = [](const std::string &source) {
		auto p = accepted(source);
		const Probe &probe = p.program.probes.at(0);
		EXPECT_EQ(probe.count_in_root, !probe.fetch.empty() && probe.fetch.back().code == FetchCode::Count)
			<< source;
		return probe.count_in_root;
	};
	for (const char *root : {
		     "fn:vfs_read { @ = count(); }",
		     "fn:vfs_read /comm == \"dd\"/ { @reads = count(); }",	// root's comm filter is exact
		     "fn:vfs_read /\"dd\" == comm && arg2 > 4096/ { @ = count(); }",
		     "fn:vfs_fsync_range:return /retval < 0/ { @fails = count(); }",
		     "addr:vfs_read+4 /reg(\"rsi\") != 0/ { @ = count(); }",
	     })
		EXPECT_TRUE(counted(root)) << root;
	for (const char *console : {
		     "fn:vfs_read { @[comm, pid] = count(); }",			// two keys
		     "fn:vfs_read { @ = sum(cpu); }",					// not count()
		     "fn:vfs_read { @ = count(); printf(\"x\\n\"); }",			// more than the count
		     "fn:vfs_read /pid == 4/ { @ = count(); }",				// root's pid filter takes tgids too
		     "fn:vfs_read /arg2 > 4096 || arg2 < 3/ { @ = count(); }",		// not a chain of &&
		     "fn:vfs_read /comm == \"dd\"/ { @ = count(); } syscall:read { @s = count(); }",	// no filter for it
		     "fn:vfs_read { @ = count(); } fn:vfs_read { @b = count(); }",	// not alone
		     "watch:w:jiffies_64:8 { @ = count(); }",				// no program at a watch
	     })
		EXPECT_FALSE(counted(console)) << console;
	auto p = accepted("fn:vfs_read /comm == \"dd\" && arg2 > 4096/ { @ = count(); }");
	EXPECT_EQ(p.program.probes[0].fetch,
		  (std::vector<FetchOp>{{FetchCode::Arg, 2, 0}, {FetchCode::Keep, static_cast<std::uint8_t>(KeepCmp::Gt), 4096},
					{FetchCode::Count, 0, 0}}));
}

// `@m = sum(OPERAND)` under the same rules, with an operand root computes
// exactly as the console would (an argument or retval at its BTF width, a
// general register): root sums it, its program ends in SUM with that width.
TEST(ProbeLanguage, RootSumsAnOperandItComputesAsTheConsoleWould)
{
	auto summed = [](const std::string &source) {
		auto p = accepted(source);
		const Probe &probe = p.program.probes.at(0);
		bool sums = probe.root_value == RootValue::Sum;
		EXPECT_EQ(sums, !probe.fetch.empty() && probe.fetch.back().code == FetchCode::Sum) << source;
		EXPECT_TRUE(!sums || probe.count_in_root) << source;
		return sums;
	};
	for (const char *root : {
		     "fn:vfs_read { @bytes = sum(arg2); }",
		     "fn:vfs_read /comm == \"dd\" && arg2 > 4096/ { @ = sum(arg2); }",
		     "fn:vfs_read:return { @ = sum(retval); }",
		     "fn:vfs_read { @ = avg(arg2); }",				// the sum over the count
		     "addr:vfs_read+4 /reg(\"rsi\") != 0/ { @ = sum(reg(\"rdx\")); }",
	     })
		EXPECT_TRUE(summed(root)) << root;
	for (const char *console : {
		     "fn:vfs_read { @ = sum(cpu); }",				// not an operand root has
		     "fn:vfs_read { @ = sum(arg2 * 2); }",			// arithmetic
		     "fn:vfs_read { @[comm] = sum(arg2); }",			// a key
		     "fn:vfs_read { @ = sum(arg2); @n = count(); }",		// more than the sum
		     "fn:vfs_read { @ = max(arg2); }",				// neither sum() nor avg(): a max
		     "fn:vfs_read /pid == 4/ { @ = sum(arg2); }",			// a predicate root does not test
		     "fn:vfs_read { @ = sum(arg2); } fn:vfs_read { @b = count(); }",	// not alone
	     })
		EXPECT_FALSE(summed(console)) << console;
	EXPECT_EQ(accepted("fn:vfs_read { @ = sum(arg2); }").program.probes[0].fetch,
		  (std::vector<FetchOp>{{FetchCode::Arg, 2, 0}, {FetchCode::Sum, 0, 0}}));
}

// `@m = min(OPERAND)` and `max` under the same rules: root keeps the least
// or greatest operand, its program ends in MIN or MAX at the operand's
// width (a signed int argument: S32, so root compares what the console
// would print).
TEST(ProbeLanguage, RootKeepsTheLeastOrGreatestOperand)
{
	auto kept = [](const std::string &source) {
		auto p = accepted(source);
		const Probe &probe = p.program.probes.at(0);
		EXPECT_TRUE(probe.root_value == RootValue::None || probe.count_in_root) << source;
		return probe.root_value;
	};
	EXPECT_EQ(kept("fn:vfs_read { @lo = min(arg2); }"), RootValue::Min);
	EXPECT_EQ(kept("fn:vfs_read /comm == \"dd\"/ { @hi = max(arg2); }"), RootValue::Max);
	EXPECT_EQ(kept("fn:vfs_read:return { @ = min(retval); }"), RootValue::Min);
	EXPECT_EQ(kept("fn:vfs_read { @[comm] = min(arg2); }"), RootValue::Keys) << "by a task's key: in its slot";
	EXPECT_EQ(kept("fn:vfs_read { @ = max(arg2 + 1); }"), RootValue::None) << "arithmetic";
	EXPECT_EQ(kept("fn:vfs_read { @ = max(arg2); @n = count(); }"), RootValue::None) << "more than the max";
	EXPECT_EQ(kept("fn:vfs_read:return { @ = hist(retval); }"), RootValue::Hist);
	EXPECT_EQ(kept("fn:vfs_read { @[comm] = hist(arg2); }"), RootValue::None) << "a key";
	EXPECT_EQ(kept("fn:vfs_read { @ = lhist(arg2, 0, 100, 10); }"), RootValue::Lhist);
	EXPECT_EQ(kept("fn:vfs_read { @ = lhist(arg2, -32768, 32768, 65536); }"), RootValue::Lhist) << "one bucket";
	EXPECT_EQ(kept("fn:vfs_read { @ = lhist(arg2, 0, 630, 10); }"), RootValue::Lhist) << "63 buckets";
	EXPECT_EQ(kept("fn:vfs_read { @ = lhist(arg2, 0, 640, 10); }"), RootValue::None) << "64: past root's";
	EXPECT_EQ(kept("fn:vfs_read { @ = lhist(arg2, 0, 105, 10); }"), RootValue::None)
		<< "a part-step last bucket: root's would hold values of two of the map's";
	EXPECT_EQ(kept("fn:vfs_read { @ = lhist(arg2, 40000, 40100, 10); }"), RootValue::None) << "MIN past 16 bits";
	EXPECT_EQ(kept("fn:vfs_read { @ = lhist(arg2, -40000, -39900, 10); }"), RootValue::None) << "and below";
	EXPECT_EQ(kept("fn:vfs_read { @ = lhist(arg2, 0, 8589934592, 4294967296); }"), RootValue::None)
		<< "STEP past 32 bits";
	EXPECT_EQ(kept("fn:vfs_read { @[comm] = lhist(arg2, 0, 100, 10); }"), RootValue::None) << "a key";
	EXPECT_EQ(kept("fn:vfs_read { @ = lhist(arg2 + 1, 0, 100, 10); }"), RootValue::None) << "arithmetic";
	{
		FetchOp lhist{FetchCode::Lhist, 0, 512};	// vfs_read returns a ssize_t: 64 bits wide
		lhist.base = -1024;
		EXPECT_EQ(accepted("fn:vfs_read:return { @ = lhist(retval, -1024, 4096, 512); }").program.probes[0].fetch,
			  (std::vector<FetchOp>{{FetchCode::Retval, 0, 0}, lhist}))
			<< "base MIN, as wide as STEP";
	}
	EXPECT_EQ(accepted("fn:vfs_read { @ = hist(arg2); }").program.probes[0].fetch,
		  (std::vector<FetchOp>{{FetchCode::Arg, 2, 0}, {FetchCode::Hist, 0, 0}}));
	EXPECT_EQ(kept("fn:vfs_read { @[comm] = count(); }"), RootValue::Keys);
	EXPECT_EQ(kept("fn:vfs_read /comm == \"dd\"/ { @n[pid] = count(); }"), RootValue::Keys);
	EXPECT_EQ(kept("fn:vfs_read:return { @[retval] = count(); }"), RootValue::Keys);
	EXPECT_EQ(kept("fn:vfs_read { @[comm, pid] = count(); }"), RootValue::None) << "a comm fills root's key";
	EXPECT_EQ(kept("fn:vfs_read { @[pid, tid] = count(); }"), RootValue::None) << "two of the task's";
	EXPECT_EQ(kept("fn:vfs_read { @[arg0, arg1, arg2] = count(); }"), RootValue::None) << "three keys";
	EXPECT_EQ(kept("fn:vfs_read { @[arg0, nsecs] = count(); }"), RootValue::None) << "a key root cannot give";
	EXPECT_EQ(accepted("fn:vfs_read { @[arg2, pid] = count(); }").program.probes[0].fetch,
		  (std::vector<FetchOp>{{FetchCode::Arg, 2, 0}, {FetchCode::Key, 0, 0},
					{FetchCode::Keyed, static_cast<std::uint8_t>(KeyKind::Pid), 0}}))
		<< "the pid's word first in root's slot, KEY's after it";
	EXPECT_EQ(accepted("fn:vfs_read { @[arg0, arg1] = max(arg2); }").program.probes[0].fetch,
		  (std::vector<FetchOp>{{FetchCode::Arg, 0, 0}, {FetchCode::Key, 0, 0}, {FetchCode::Arg, 1, 0},
					{FetchCode::Key, 0, 0}, {FetchCode::Arg, 2, 0},
					{FetchCode::Keyed, static_cast<std::uint8_t>(KeyKind::Value),
					 static_cast<std::int32_t>(FetchCode::Max)}}));
	EXPECT_EQ(kept("fn:vfs_read { @[comm] = sum(arg2); }"), RootValue::Keys) << "a sum by a task's key";
	EXPECT_EQ(kept("fn:vfs_read { @[cpu] = avg(arg2); }"), RootValue::Keys);
	EXPECT_EQ(kept("fn:vfs_read:return { @[pid] = min(retval); }"), RootValue::Keys);
	EXPECT_EQ(kept("fn:vfs_read { @[tid] = max(arg2); }"), RootValue::Keys);
	EXPECT_EQ(kept("fn:vfs_read { @[arg1] = sum(arg2); }"), RootValue::Keys) << "KEY takes arg1 first";
	EXPECT_EQ(accepted("fn:vfs_read { @[arg1] = min(arg2); }").program.probes[0].fetch,
		  (std::vector<FetchOp>{{FetchCode::Arg, 1, 0}, {FetchCode::Key, 0, 0}, {FetchCode::Arg, 2, 0},
					{FetchCode::Keyed, static_cast<std::uint8_t>(KeyKind::Value),
					 static_cast<std::int32_t>(FetchCode::Min)}}));
	EXPECT_EQ(kept("fn:vfs_read { @[arg1] = sum(arg2 + 1); }"), RootValue::None) << "arithmetic on the operand";
	EXPECT_EQ(kept("fn:vfs_read { @[arg1 + 1] = sum(arg2); }"), RootValue::None) << "arithmetic on the key";
	EXPECT_EQ(kept("fn:vfs_read { @[nsecs] = max(arg2); }"), RootValue::None) << "a key root cannot give";
	EXPECT_EQ(kept("fn:vfs_read { @[comm] = hist(arg2); }"), RootValue::None) << "a histogram by key";
	EXPECT_EQ(kept("fn:vfs_read { @[comm] = sum(arg2 * 2); }"), RootValue::None) << "arithmetic";
	EXPECT_EQ(accepted("fn:vfs_read { @bytes[comm] = sum(arg2); }").program.probes[0].fetch,
		  (std::vector<FetchOp>{{FetchCode::Arg, 2, 0},
					{FetchCode::Keyed, static_cast<std::uint8_t>(KeyKind::Comm),
					 static_cast<std::int32_t>(FetchCode::Sum)}}))
		<< "vfs_read's count is a size_t: 64 bits wide";
	EXPECT_EQ(kept("fn:vfs_read { @[nsecs] = count(); }"), RootValue::None) << "a key root cannot give";
	EXPECT_EQ(kept("fn:vfs_read { @[arg2 * 2] = count(); }"), RootValue::None) << "arithmetic";
	EXPECT_EQ(accepted("fn:vfs_read { @[comm] = count(); }").program.probes[0].fetch,
		  (std::vector<FetchOp>{{FetchCode::Keyed, static_cast<std::uint8_t>(KeyKind::Comm), 0}}));
	EXPECT_EQ(accepted("fn:vfs_read { @[cpu] = count(); }").program.probes[0].fetch,
		  (std::vector<FetchOp>{{FetchCode::Keyed, static_cast<std::uint8_t>(KeyKind::Cpu), 0}}));
	EXPECT_EQ(accepted("fn:vfs_read { @[arg2] = count(); }").program.probes[0].fetch,
		  (std::vector<FetchOp>{{FetchCode::Arg, 2, 0}, {FetchCode::Keyed, 0, 0}}));
	EXPECT_EQ(accepted("fn:vfs_read { @ = max(arg2); }").program.probes[0].fetch,
		  (std::vector<FetchOp>{{FetchCode::Arg, 2, 0}, {FetchCode::Max, 0, 0}}));
	auto dfd = with_params("fn:do_sys_openat2 { @ = min(args->dfd); }");
	ASSERT_TRUE(dfd.ok()) << format_diagnostic("", dfd.error());
	EXPECT_EQ(dfd->program.probes[0].fetch,
		  (std::vector<FetchOp>{{FetchCode::Arg, 0, 0},
					{FetchCode::Min, static_cast<std::uint8_t>(static_cast<int>(IndexWidth::S32) << 4), 0}}))
		<< "dfd is an int";
}

// `@m[func]` and `@m[probe]` at hidden breakpoints: one function and one
// point an address, so root counts each address as it would unkeyed (its
// program ends in COUNT, SUM, MIN, MAX, HIST or LHIST) and the console
// keys it; not at watch: points (an access's function is not the
// address's).
TEST(ProbeLanguage, RootCountsByFunctionOrPointAtEachAddress)
{
	auto root_key = [](const std::string &source) {
		auto p = accepted(source);
		const Probe &probe = p.program.probes.at(0);
		EXPECT_EQ(probe.root_key != RootKey::None, probe.count_in_root) << source;
		return probe.root_key;
	};
	EXPECT_EQ(root_key("fn:vfs_read, fn:do_sys_openat2 { @calls[func] = count(); }"), RootKey::Func);
	EXPECT_EQ(root_key("fn:vfs_read:return /comm == \"dd\"/ { @[func] = count(); }"), RootKey::Func);
	EXPECT_EQ(root_key("fn:vfs_read, fn:do_sys_openat2 { @[probe] = sum(arg2); }"), RootKey::Probe);
	EXPECT_EQ(root_key("addr:vfs_read+4, addr:vfs_read+8 { @[func] = count(); }"), RootKey::Func);
	EXPECT_EQ(root_key("fn:vfs_read { @[probe] = max(arg2); }"), RootKey::Probe);
	EXPECT_EQ(root_key("fn:vfs_read, fn:do_sys_openat2 { @[func] = hist(arg2); }"), RootKey::Func)
		<< "each address's buckets";
	EXPECT_EQ(root_key("fn:vfs_read { @[probe] = lhist(arg2, 0, 100, 10); }"), RootKey::Probe);
	EXPECT_EQ(root_key("fn:vfs_read { @[func, comm] = count(); }"), RootKey::None) << "two keys";
	EXPECT_EQ(root_key("watch:w:jiffies_64:8 { @[func] = count(); }"), RootKey::None) << "an access's function";
	EXPECT_EQ(accepted("fn:vfs_read { @[comm] = count(); }").program.probes[0].root_key, RootKey::None)
		<< "a task's key: root's slots";
	EXPECT_EQ(accepted("fn:vfs_read { @[func] = count(); }").program.probes[0].fetch,
		  (std::vector<FetchOp>{{FetchCode::Count, 0, 0}}));
	EXPECT_EQ(accepted("fn:vfs_read { @[probe] = avg(arg2); }").program.probes[0].fetch,
		  (std::vector<FetchOp>{{FetchCode::Arg, 2, 0}, {FetchCode::Sum, 0, 0}}));
	EXPECT_EQ(accepted("fn:vfs_read { @[probe] = avg(arg2); }").program.probes[0].root_value, RootValue::Sum);
}
