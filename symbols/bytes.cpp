#include "symbols/bytes.hpp"

#include "vtice/read_input.hpp"

namespace vtice::symbols {

namespace {

// A stream (a FIFO, a device, /proc) is read up to this much: no kernel
// symbol source comes near it.
constexpr std::size_t kMaxStream = 256u << 20;

}  // namespace

Result<Bytes> read_file(const std::string &path)
{
	return read_input(path, kMaxStream);
}

namespace {

class VectorBuffer : public Buffer {
public:
	explicit VectorBuffer(std::shared_ptr<const Bytes> bytes) : bytes_(std::move(bytes)) {}
	ByteSpan bytes() const override { return *bytes_; }

private:
	std::shared_ptr<const Bytes> bytes_;
};

// A mapped or read input file (vtice/read_input.hpp) as a Buffer.
class InputBuffer : public Buffer {
public:
	explicit InputBuffer(std::shared_ptr<const InputBytes> input) : input_(std::move(input)) {}
	ByteSpan bytes() const override { return input_->bytes(); }

private:
	std::shared_ptr<const InputBytes> input_;
};

}  // namespace

SharedBuffer share_bytes(Bytes bytes)
{
	return std::make_shared<VectorBuffer>(std::make_shared<const Bytes>(std::move(bytes)));
}

SharedBuffer share_bytes(std::shared_ptr<const Bytes> bytes)
{
	return std::make_shared<VectorBuffer>(std::move(bytes));
}

SharedBuffer share_input(std::shared_ptr<const InputBytes> input)
{
	return std::make_shared<InputBuffer>(std::move(input));
}

Result<SharedBuffer> open_file(const std::string &path)
{
	auto input = map_input(path, kMaxStream);
	if (!input)
		return input.error();
	return share_input(std::move(*input));
}

}  // namespace vtice::symbols
