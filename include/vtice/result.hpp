// A value or an error that says what was wrong and where.
//
// The std::expected of this project: libstdc++ 12 only offers std::expected to
// compilers newer than the clang the fuzzers are built with, so this is the
// small subset we need. Bad input is an answer (CONVENTIONS.md §12): parsers
// return Result, never throw across a library boundary, never abort.
#pragma once

#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace vtice {

struct Error {
	std::string message;
	std::optional<std::uint64_t> offset;  // byte offset in the input, when known

	std::string to_string() const;
};

inline std::string Error::to_string() const
{
	if (!offset)
		return message;
	char where[40];
	std::snprintf(where, sizeof(where), " (at offset 0x%llx)",
		      static_cast<unsigned long long>(*offset));
	return message + where;
}

inline Error make_error(std::string message, std::optional<std::uint64_t> offset = {})
{
	return Error{std::move(message), offset};
}

template <class T>
class [[nodiscard]] Result {
public:
	Result(T value) : state_(std::move(value)) {}
	Result(Error error) : state_(std::move(error)) {}

	bool ok() const { return std::holds_alternative<T>(state_); }
	explicit operator bool() const { return ok(); }

	T &value() & { return std::get<T>(state_); }
	const T &value() const & { return std::get<T>(state_); }
	T &&value() && { return std::get<T>(std::move(state_)); }
	const Error &error() const { return std::get<Error>(state_); }

	T &operator*() & { return value(); }
	const T &operator*() const & { return value(); }
	T *operator->() { return &value(); }
	const T *operator->() const { return &value(); }

private:
	std::variant<T, Error> state_;
};

// Result<void>: success, or an error.
template <>
class [[nodiscard]] Result<void> {
public:
	Result() = default;
	Result(Error error) : error_(std::move(error)) {}

	bool ok() const { return !error_; }
	explicit operator bool() const { return ok(); }
	const Error &error() const { return *error_; }

private:
	std::optional<Error> error_;
};

}  // namespace vtice
