// A predicate's conjuncts as KEEP tests (root_predicate.hpp).
#include "root_predicate.hpp"

#include <limits>
#include <map>
#include <string>

namespace vtice::probes {
namespace {

// "a CMP b" read the other way round: "b CMP' a".
const std::map<std::string, std::pair<KeepCmp, KeepCmp>> kComparisons = {
	{"==", {KeepCmp::Eq, KeepCmp::Eq}}, {"!=", {KeepCmp::Ne, KeepCmp::Ne}}, {"<", {KeepCmp::Lt, KeepCmp::Gt}},
	{"<=", {KeepCmp::Le, KeepCmp::Ge}}, {">", {KeepCmp::Gt, KeepCmp::Lt}}, {">=", {KeepCmp::Ge, KeepCmp::Le}},
};

// A constant KEEP can hold: a number, or a negated one (-100), within
// 32 bits signed.
std::optional<std::int32_t> imm_of(const Expr &e)
{
	std::int64_t v = 0;
	if (e.kind == ExprKind::Int)
		v = e.number;
	else if (e.kind == ExprKind::Unary && e.text == "-" && e.kids[0]->kind == ExprKind::Int)
		v = static_cast<std::int64_t>(0 - static_cast<std::uint64_t>(e.kids[0]->number));	// wraps as the console's
	else
		return std::nullopt;
	if (v < std::numeric_limits<std::int32_t>::min() || v > std::numeric_limits<std::int32_t>::max())
		return std::nullopt;
	return static_cast<std::int32_t>(v);
}

// One comparison's ops, or none when root cannot test it exactly.
std::vector<FetchOp> test_of(const Expr &e, const RootOperandOf &operand_of)
{
	auto cmp = kComparisons.find(e.text);
	if (e.kind != ExprKind::Binary || cmp == kComparisons.end())
		return {};
	bool constant_first = imm_of(*e.kids[0]).has_value();
	const Expr &operand = constant_first ? *e.kids[1] : *e.kids[0];
	auto constant = imm_of(constant_first ? *e.kids[0] : *e.kids[1]);
	if (!constant)
		return {};
	auto root = operand_of(operand);
	if (!root)
		return {};
	KeepCmp how = constant_first ? cmp->second.second : cmp->second.first;
	auto arg = static_cast<std::uint8_t>(static_cast<std::uint8_t>(how) | static_cast<std::uint8_t>(root->width) << 4);
	root->ops.push_back({FetchCode::Keep, arg, *constant});
	return root->ops;
}

// Calls fn on each term of e's top-level chain of &&, in order.
void for_each_conjunct(const Expr &e, const std::function<void(const Expr &)> &fn)
{
	if (e.kind == ExprKind::Binary && e.text == "&&") {
		for_each_conjunct(*e.kids[0], fn);
		for_each_conjunct(*e.kids[1], fn);
		return;
	}
	fn(e);
}

bool is_comm_test(const Expr &e, const std::string &comm)
{
	if (e.kind != ExprKind::Binary || e.text != "==" || comm.empty())
		return false;
	for (int side = 0; side < 2; side++)
		if (e.kids[side]->kind == ExprKind::Builtin && e.kids[side]->builtin == Builtin::Comm &&
		    e.kids[1 - side]->kind == ExprKind::String && e.kids[1 - side]->text == comm)
			return true;
	return false;
}

}  // namespace

std::vector<FetchOp> root_tests(const Expr &predicate, const RootOperandOf &operand_of, std::size_t room,
				std::size_t *tested)
{
	std::vector<FetchOp> out;
	std::size_t n = 0;
	for_each_conjunct(predicate, [&](const Expr &e) {
		auto ops = test_of(e, operand_of);
		if (ops.empty() || out.size() + ops.size() > room)
			return;
		out.insert(out.end(), ops.begin(), ops.end());
		n++;
	});
	if (tested)
		*tested = n;
	return out;
}

std::size_t conjunct_count(const Expr &predicate)
{
	std::size_t n = 0;
	for_each_conjunct(predicate, [&](const Expr &) { n++; });
	return n;
}

std::size_t comm_conjuncts(const Expr &predicate, const std::string &comm)
{
	std::size_t n = 0;
	for_each_conjunct(predicate, [&](const Expr &e) { n += is_comm_test(e, comm); });
	return n;
}

}  // namespace vtice::probes
