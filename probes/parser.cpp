#include "parser.hpp"

#include <algorithm>
#include <map>

#include "diagnostic.hpp"
#include "lexer.hpp"

namespace vtice::probes {
namespace {

// Names a probe reads, and the arguments arg0..arg5.
const std::map<std::string, Builtin, std::less<>> kBuiltins = {
	{"pid", Builtin::Pid},	   {"tid", Builtin::Tid},	{"comm", Builtin::Comm}, {"cpu", Builtin::Cpu},
	{"nsecs", Builtin::Nsecs}, {"retval", Builtin::Retval}, {"probe", Builtin::Probe},
	{"func", Builtin::Func},   {"addr", Builtin::WatchAddr}, {"curtask", Builtin::Curtask},
};

// reg("NAME"): the registers a function probe's hit carries (records.h),
// numbered as the runtime reads them: arg0..arg5's, then RAX, then RIP;
// then, from kFirstMoreReg, the GPRS records' in their order (checker.hpp
// names the numbers others depend on: kRegRax, kRegRip, kRegRflags).
const std::map<std::string, int, std::less<>> kRegisters = {
	{"rdi", 0},  {"rsi", 1},  {"rdx", 2},  {"rcx", 3},  {"r8", 4},	 {"r9", 5},   {"rax", 6},
	{"rip", 7},  {"rbx", 8},  {"rsp", 9},  {"rbp", 10}, {"r10", 11}, {"r11", 12}, {"r12", 13},
	{"r13", 14}, {"r14", 15}, {"r15", 16}, {"rflags", 17},
};
const char kRegisterNames[] = "rax, rbx, rcx, rdx, rsi, rdi, rbp, rsp, r8-r15, rip or rflags";

// Binary operators by precedence, lowest first.
const std::vector<std::vector<std::string>> kLevels = {
	{"||"}, {"&&"}, {"|"}, {"^"}, {"&"}, {"==", "!="}, {"<", "<=", ">", ">="}, {"<<", ">>"}, {"+", "-"}, {"*", "/", "%"},
};

// A node whose kids are built: its height, refused past kMaxHeight so the
// checker and the interpreter, which recurse, stay within a small stack.
constexpr unsigned kMaxHeight = 256;

Result<ExprPtr> bounded(ExprPtr e)
{
	for (const ExprPtr &kid : e->kids)
		e->height = std::max(e->height, kid->height + 1);
	if (e->height > kMaxHeight)
		return error_at(e->pos, "this expression is more than " + std::to_string(kMaxHeight) +
						" levels deep");
	return e;
}

class Parser {
public:
	explicit Parser(std::vector<Token> tokens) : toks_(std::move(tokens)) {}

	Result<Program> program()
	{
		Program prog;
		while (peek().kind != TokenKind::End) {
			if (prog.probes.size() == kMaxProbes)
				return error_at(peek().pos, "more than " + std::to_string(kMaxProbes) + " probes");
			auto probe = parse_probe();
			if (!probe)
				return probe.error();
			prog.probes.push_back(std::move(*probe));
		}
		if (prog.probes.empty())
			return error_at(peek().pos, "no probes: write e.g. syscall:openat { @[comm] = count(); }");
		return prog;
	}

private:
	const Token &peek(std::size_t ahead = 0) const
	{
		return toks_[std::min(at_ + ahead, toks_.size() - 1)];
	}
	const Token &take() { return toks_[std::min(at_++, toks_.size() - 1)]; }
	// The next token is written right after the last one taken (no space between).
	bool touches_last() const
	{
		if (at_ == 0 || at_ >= toks_.size())
			return false;
		const Token &last = toks_[at_ - 1];
		return peek().kind != TokenKind::End && peek().pos.offset == last.pos.offset + last.text.size();
	}
	bool is(std::string_view punct, std::size_t ahead = 0) const
	{
		return peek(ahead).kind == TokenKind::Punct && peek(ahead).text == punct;
	}
	bool accept(std::string_view punct)
	{
		if (!is(punct))
			return false;
		take();
		return true;
	}
	Result<void> expect(std::string_view punct, std::string_view what)
	{
		if (accept(punct))
			return {};
		return error_at(peek().pos, "expected '" + std::string(punct) + "' " + std::string(what) + ", found " +
						    describe(peek()));
	}
	static std::string describe(const Token &t)
	{
		switch (t.kind) {
		case TokenKind::End: return "the end of the program";
		case TokenKind::String: return "a string";
		case TokenKind::Number: return "a number";
		default: return "'" + t.text + "'";
		}
	}

	Result<Probe> parse_probe()
	{
		Probe probe;
		probe.pos = peek().pos;
		do {
			if (probe.points.size() == kMaxPointsPerProbe)
				return error_at(peek().pos, "more than " + std::to_string(kMaxPointsPerProbe) +
								    " points in one probe");
			auto point = parse_point();
			if (!point)
				return point.error();
			probe.points.push_back(std::move(*point));
		} while (accept(","));
		if (accept("/")) {
			in_predicate_ = true;
			auto pred = parse_expr();
			in_predicate_ = false;
			if (!pred)
				return pred.error();
			probe.predicate = std::move(*pred);
			if (auto ok = expect("/", "to end the predicate"); !ok)
				return ok.error();
		}
		auto body = parse_block();
		if (!body)
			return body.error();
		probe.body = std::move(*body);
		return probe;
	}

	// A token that can begin a point's part: a name, a number, or a
	// shell pattern's '*', '?' or '['.
	bool starts_part() const
	{
		return peek().kind == TokenKind::Name || peek().kind == TokenKind::Number || is("*") || is("?") ||
		       is("[");
	}
	// A token that goes on a pattern written without spaces: what starts
	// a part, or a bracket's ']', '!', '^' or '-' ([!a-f]).
	bool continues_pattern() const
	{
		return touches_last() && (starts_part() || is("]") || is("!") || is("^") || is("-"));
	}

	// NAME(:PART)*, where a part is a name, a number (as written) or a
	// shell pattern written without spaces (vfs_*, *_open, vfs_read?,
	// [kv]free), and a name may take "+NUMBER" (addr:do_sys_openat2+0x1c).
	Result<ProbePoint> parse_point()
	{
		ProbePoint point;
		point.pos = peek().pos;
		if (peek().kind != TokenKind::Name)
			return error_at(peek().pos, "expected a probe point (syscall:NAME, interval:s:N, BEGIN, END), found " +
							    describe(peek()));
		point.text = take().text;
		while (accept(":")) {
			const Token &part = peek();
			if (!starts_part())
				return error_at(part.pos, "expected a name, a number or a pattern (*, ?, [...]) after ':', found " +
								  describe(part));
			bool name = part.kind == TokenKind::Name;
			point.text += ":" + take().text;
			while (continues_pattern())
				point.text += take().text;
			if (name && point.text.find_first_of("*?[") == std::string::npos && accept("+")) {
				if (peek().kind != TokenKind::Number)
					return error_at(peek().pos, "expected an offset after '+', found " + describe(peek()));
				point.text += "+" + take().text;
			}
		}
		return point;
	}

	Result<std::vector<Stmt>> parse_block()
	{
		if (auto ok = expect("{", "to open the probe's actions"); !ok)
			return ok.error();
		std::vector<Stmt> body;
		while (!accept("}")) {
			if (peek().kind == TokenKind::End)
				return error_at(peek().pos, "expected '}' to close the probe's actions");
			if (body.size() == kMaxStatements)
				return error_at(peek().pos, "more than " + std::to_string(kMaxStatements) +
								    " statements in one probe");
			auto stmt = parse_stmt();
			if (!stmt)
				return stmt.error();
			body.push_back(std::move(*stmt));
			if (!accept(";") && !is("}"))
				return error_at(peek().pos, "expected ';' or '}' after a statement, found " + describe(peek()));
			while (accept(";")) {
			}
		}
		return body;
	}

	Result<Stmt> parse_stmt()
	{
		const Token &t = peek();
		if (t.kind == TokenKind::Map)
			return parse_assign();
		if (t.kind == TokenKind::Name && is("(", 1)) {
			if (t.text == "printf")
				return parse_printf();
			if (t.text == "print" || t.text == "clear" || t.text == "delete")
				return parse_map_action();
			if (t.text == "exit")
				return parse_exit();
		}
		return error_at(t.pos, "expected a statement (@map = ..., printf(...), print(@m), clear(@m), "
				       "delete(@m[key]), exit()), found " + describe(t));
	}

	Result<Stmt> parse_map_ref(Stmt stmt)
	{
		stmt.map = take().text;
		if (accept("[")) {
			auto keys = parse_list("]", kMaxKeys, "keys");
			if (!keys)
				return keys.error();
			if (keys->empty())
				return error_at(stmt.pos, "empty key: write " + stmt.map + " or " + stmt.map + "[k]");
			stmt.keys = std::move(*keys);
		}
		return stmt;
	}

	Result<Stmt> parse_assign()
	{
		Stmt stmt;
		stmt.kind = StmtKind::Assign;
		stmt.pos = peek().pos;
		auto ref = parse_map_ref(std::move(stmt));
		if (!ref)
			return ref.error();
		if (auto ok = expect("=", "after " + ref->map); !ok)
			return ok.error();
		auto value = parse_expr();
		if (!value)
			return value.error();
		ref->value = std::move(*value);
		return ref;
	}

	Result<Stmt> parse_printf()
	{
		Stmt stmt;
		stmt.kind = StmtKind::Printf;
		stmt.pos = take().pos;
		take();	// (
		if (peek().kind != TokenKind::String)
			return error_at(peek().pos, "printf's first argument is its format string");
		stmt.format = take().text;
		while (accept(",")) {
			if (stmt.args.size() == kMaxPrintfArgs)
				return error_at(peek().pos, "printf takes at most " + std::to_string(kMaxPrintfArgs) +
								    " values");
			auto arg = parse_expr();
			if (!arg)
				return arg.error();
			stmt.args.push_back(std::move(*arg));
		}
		if (auto ok = expect(")", "to end printf"); !ok)
			return ok.error();
		return stmt;
	}

	// print(@m), clear(@m), delete(@m[keys]) or delete(@m).
	Result<Stmt> parse_map_action()
	{
		Stmt stmt;
		stmt.pos = peek().pos;
		std::string name = take().text;
		stmt.kind = name == "print" ? StmtKind::Print : name == "clear" ? StmtKind::Clear : StmtKind::Delete;
		take();	// (
		if (peek().kind != TokenKind::Map)
			return error_at(peek().pos, name + " takes a map: " + name + "(@name)");
		auto ref = parse_map_ref(std::move(stmt));
		if (!ref)
			return ref.error();
		if (ref->kind != StmtKind::Delete && !ref->keys.empty())
			return error_at(ref->keys[0]->pos, name + " takes the whole map, without a key");
		if (auto ok = expect(")", "to end " + name); !ok)
			return ok.error();
		return ref;
	}

	Result<Stmt> parse_exit()
	{
		Stmt stmt;
		stmt.kind = StmtKind::Exit;
		stmt.pos = take().pos;
		take();	// (
		if (auto ok = expect(")", "after 'exit('"); !ok)
			return ok.error();
		return stmt;
	}

	// Expressions up to the closing token, separated by commas.
	Result<std::vector<ExprPtr>> parse_list(std::string_view close, std::size_t max, std::string_view what)
	{
		std::vector<ExprPtr> out;
		bool was_in_predicate = in_predicate_;
		in_predicate_ = false;	// '/' divides again inside brackets
		while (!accept(close)) {
			if (!out.empty())
				if (auto ok = expect(",", "between " + std::string(what)); !ok)
					return ok.error();
			if (out.size() == max)
				return error_at(peek().pos, "at most " + std::to_string(max) + " " + std::string(what));
			auto e = parse_expr();
			if (!e)
				return e.error();
			out.push_back(std::move(*e));
		}
		in_predicate_ = was_in_predicate;
		return out;
	}

	Result<ExprPtr> parse_expr(std::size_t level = 0)
	{
		if (level == kLevels.size())
			return parse_unary();
		auto left = parse_expr(level + 1);
		if (!left)
			return left;
		for (;;) {
			const Token &t = peek();
			bool match = false;
			for (const std::string &op : kLevels[level])
				match |= t.kind == TokenKind::Punct && t.text == op;
			// In /pred/ a bare '/' ends the predicate; divide inside parentheses.
			if (!match || (in_predicate_ && t.text == "/"))
				return left;
			auto e = std::make_unique<Expr>();
			e->kind = ExprKind::Binary;
			e->pos = t.pos;
			e->text = take().text;
			auto right = parse_expr(level + 1);
			if (!right)
				return right;
			e->kids.push_back(std::move(*left));
			e->kids.push_back(std::move(*right));
			left = bounded(std::move(e));
			if (!left)
				return left;
		}
	}

	Result<ExprPtr> parse_unary()
	{
		if (++depth_ > kMaxDepth)
			return error_at(peek().pos, "expressions nest at most " + std::to_string(kMaxDepth) + " deep");
		Result<ExprPtr> out = make_error("");
		if (is("!") || is("-") || is("~")) {
			auto e = std::make_unique<Expr>();
			e->kind = ExprKind::Unary;
			e->pos = peek().pos;
			e->text = take().text;
			auto kid = parse_unary();
			if (!kid)
				return kid;
			e->kids.push_back(std::move(*kid));
			out = bounded(std::move(e));
		} else {
			out = parse_primary();
		}
		--depth_;
		return out;
	}

	// A value, then the fields and elements read through it:
	// args->how->flags, ((struct file *)arg0)->f_path.dentry, p->fds[2].
	Result<ExprPtr> parse_primary()
	{
		auto base = parse_operand();
		while (base && (is("->") || is(".") || is("["))) {
			if (is("[")) {
				base = parse_index(std::move(*base));
				continue;
			}
			auto e = std::make_unique<Expr>();
			e->kind = ExprKind::Member;
			e->pos = peek().pos;
			e->text = take().text;
			if (peek().kind != TokenKind::Name)
				return error_at(peek().pos, "expected a field's name after '" + e->text + "', found " +
							    describe(peek()));
			e->member = take().text;
			e->kids.push_back(std::move(*base));
			base = bounded(std::move(e));
		}
		return base;
	}

	// BASE[N]: N a number as written (root adds a constant offset), or a
	// value the read compiler checks: root computes an index from an
	// argument, a register or retval (a[arg2]).
	Result<ExprPtr> parse_index(ExprPtr base)
	{
		auto e = std::make_unique<Expr>();
		e->kind = ExprKind::Index;
		e->pos = peek().pos;
		e->text = take().text;	// [
		auto index = parse_expr();
		if (!index)
			return index;
		if ((*index)->kind == ExprKind::Int && (*index)->number < 0)
			return error_at((*index)->pos, "index " + std::to_string(static_cast<std::uint64_t>((*index)->number)) +
							       " is more than 2 GiB away: root adds at most 2 GiB");
		if (auto ok = expect("]", "to close the index"); !ok)
			return ok.error();
		e->kids.push_back(std::move(base));
		e->kids.push_back(std::move(*index));
		return bounded(std::move(e));
	}

	// (struct NAME *)VALUE: as in C, the cast binds looser than '->', so
	// its operand runs to the end of the value: ((struct file *)arg0)->f_mode.
	Result<ExprPtr> parse_cast(ExprPtr e)
	{
		take();	// (
		e->kind = ExprKind::Cast;
		e->member = take().text;	// struct or union
		if (peek().kind != TokenKind::Name)
			return error_at(peek().pos, "expected the " + e->member + "'s name, found " + describe(peek()));
		e->member += " " + take().text;
		if (!accept("*"))
			return error_at(peek().pos, "a cast names a pointer: (" + e->member + " *)");
		if (auto ok = expect(")", "to close the cast"); !ok)
			return ok.error();
		e->text = "(" + e->member + " *)";
		auto operand = parse_unary();
		if (!operand)
			return operand;
		e->kids.push_back(std::move(*operand));
		return bounded(std::move(e));
	}

	Result<ExprPtr> parse_operand()
	{
		auto e = std::make_unique<Expr>();
		const Token &t = peek();
		e->pos = t.pos;
		switch (t.kind) {
		case TokenKind::Number:
			e->kind = ExprKind::Int;
			e->number = take().number;
			return e;
		case TokenKind::String:
			e->kind = ExprKind::String;
			e->type = Type::String;
			e->text = take().text;
			return e;
		case TokenKind::Map:
			return parse_map_read(std::move(e));
		case TokenKind::Name:
			return parse_name(std::move(e));
		default:
			break;
		}
		if (is("(") && peek(1).kind == TokenKind::Name && (peek(1).text == "struct" || peek(1).text == "union"))
			return parse_cast(std::move(e));
		if (accept("(")) {
			bool was_in_predicate = in_predicate_;
			in_predicate_ = false;
			auto inner = parse_expr();
			in_predicate_ = was_in_predicate;
			if (!inner)
				return inner;
			if (auto ok = expect(")", "to close '('"); !ok)
				return ok.error();
			return inner;
		}
		return error_at(t.pos, "expected a value, found " + describe(t));
	}

	Result<ExprPtr> parse_map_read(ExprPtr e)
	{
		e->kind = ExprKind::MapRead;
		e->text = take().text;
		if (accept("[")) {
			auto keys = parse_list("]", kMaxKeys, "keys");
			if (!keys)
				return keys.error();
			if (keys->empty())
				return error_at(e->pos, "empty key: write " + e->text + " or " + e->text + "[k]");
			e->kids = std::move(*keys);
		}
		return bounded(std::move(e));
	}

	// reg("rax"): one of the registers a hit carries, a number.
	Result<ExprPtr> parse_register(ExprPtr e)
	{
		take();	// (
		if (peek().kind != TokenKind::String)
			return error_at(peek().pos, std::string("reg() takes a register's name in quotes: ") + kRegisterNames);
		const Token &name = take();
		auto it = kRegisters.find(name.text);
		if (it == kRegisters.end())
			return error_at(name.pos, "reg(\"" + name.text + "\"): a hit carries " + kRegisterNames);
		if (!accept(")"))
			return error_at(peek().pos, "expected ')' after reg()'s register, found " + describe(peek()));
		e->kind = ExprKind::Builtin;
		e->builtin = Builtin::Reg;
		e->text = "reg(\"" + name.text + "\")";
		e->number = it->second;
		return e;
	}

	// args->NAME: an argument of the probed function by its BTF name; the
	// checker finds which.
	Result<ExprPtr> parse_typed_argument(ExprPtr e)
	{
		take();	// ->
		if (peek().kind != TokenKind::Name)
			return error_at(peek().pos, "expected an argument's name after 'args->', found " + describe(peek()));
		e->member = take().text;
		e->kind = ExprKind::Builtin;
		e->builtin = Builtin::Arg;
		e->text = "args->" + e->member;
		e->number = -1;
		return e;
	}

	Result<ExprPtr> parse_name(ExprPtr e)
	{
		std::string name = take().text;
		if (name == "reg" && is("("))
			return parse_register(std::move(e));
		if (is("(")) {
			take();
			e->kind = ExprKind::Call;
			e->text = name;
			auto args = parse_list(")", 4, "arguments");
			if (!args)
				return args.error();
			e->kids = std::move(*args);
			return bounded(std::move(e));
		}
		if (name == "args" && is("->"))
			return parse_typed_argument(std::move(e));
		if (is("->") && name != "retval" && name != "curtask")	// BTF types these (the checker)
			return error_at(e->pos, "'" + name + "' is not a struct pointer: read through an argument as "
						"args->NAME->FIELD, or cast it first: ((struct file *)arg0)->f_mode");
		e->kind = ExprKind::Builtin;
		e->text = name;
		if (auto it = kBuiltins.find(name); it != kBuiltins.end()) {
			e->builtin = it->second;
		} else if (name.size() == 4 && name.compare(0, 3, "arg") == 0 && name[3] >= '0' &&
			   name[3] < static_cast<char>('0' + kArgRegisters)) {
			e->builtin = Builtin::Arg;
			e->number = name[3] - '0';
		} else if (name == "kstack") {
			e->builtin = Builtin::Kstack;
		} else if (name == "ustack") {
			return error_at(e->pos, "'ustack' (user stacks) is not built: vtice reads kernel stacks "
						"(kstack, in fn: and profile:hz:N probes; docs/probes.md)");
		} else {
			return error_at(e->pos, "unknown name '" + name + "': values are pid, tid, comm, cpu, nsecs, "
							"retval, probe, func, addr, kstack, curtask, arg0..arg5, reg(\"NAME\"), @maps, "
							"numbers and strings");
		}
		if (e->builtin == Builtin::Comm || e->builtin == Builtin::Probe || e->builtin == Builtin::Func)
			e->type = Type::String;
		if (e->builtin == Builtin::Kstack)
			e->type = Type::Stack;
		return e;
	}

	std::vector<Token> toks_;
	std::size_t at_ = 0;
	unsigned depth_ = 0;
	bool in_predicate_ = false;
};

}  // namespace

Result<Program> parse_program(std::string_view source)
{
	auto tokens = tokenize(source);
	if (!tokens)
		return tokens.error();
	return Parser(std::move(*tokens)).program();
}

}  // namespace vtice::probes
