#include "kernel_ram.hpp"

#include <cstring>

#include "../hex.hpp"
#include "symbols/bytes.hpp"

namespace vtice::dbg::vmcore {

namespace {

// x86-64's physical address width at most (SDM Vol. 3A 4.1.4: MAXPHYADDR <= 52).
constexpr std::uint64_t kPhysicalLimit = 1ull << 52;
// /proc/iomem of a large server has a few hundred top-level entries.
constexpr unsigned kMaxResources = 65536;
constexpr std::uint64_t kPage = 4096;

struct ResourceLayout {
	btf::Member start, end, name, sibling, child;
	std::uint64_t size = 0;
};

Result<ResourceLayout> resource_layout(const btf::Types &types)
{
	auto id = types.find("struct resource");
	if (!id)
		return id.error();
	ResourceLayout l;
	for (auto [field, out] : {std::pair{"start", &l.start}, {"end", &l.end}, {"name", &l.name},
				   {"sibling", &l.sibling}, {"child", &l.child}}) {
		auto m = types.member(*id, field);
		if (!m)
			return m.error();
		if (m->size != 8 || m->bitfield_bits)
			return make_error(std::string("struct resource.") + field + " is not 8 bytes in this kernel's BTF");
		*out = *m;
	}
	auto size = types.size_of(*id);
	if (!size)
		return size.error();
	l.size = *size;
	return l;
}

// resource_layout() checked each member is 8 bytes inside the struct.
std::uint64_t field(const std::vector<std::uint8_t> &bytes, const btf::Member &m)
{
	return symbols::load_le<std::uint64_t>(bytes.data() + m.bit_offset / 8);
}

// Whether the entry's name is "System RAM": exactly its bytes and the NUL,
// so a name at the end of a mapped page still reads.
bool named_system_ram(Session &session, std::uint64_t address)
{
	static constexpr char kName[] = "System RAM";
	auto bytes = session.read_memory(address, sizeof kName);
	return bytes && std::memcmp(bytes->data(), kName, sizeof kName) == 0;
}

}  // namespace

Result<std::vector<PhysicalRange>> system_ram(Session &session, const btf::Types &types)
{
	auto layout = resource_layout(types);
	if (!layout)
		return layout.error();
	auto root = session.resolve_location("iomem_resource");
	if (!root)
		return make_error("no symbol iomem_resource: " + root.error().message);
	auto root_bytes = session.read_memory(*root, layout->size);
	if (!root_bytes)
		return make_error("reading iomem_resource: " + root_bytes.error().message);
	std::vector<PhysicalRange> ram;
	std::uint64_t node = field(*root_bytes, layout->child);
	unsigned visited = 0;
	for (; node; ++visited) {
		if (visited == kMaxResources)
			return make_error("the iomem resource list has more than " + std::to_string(kMaxResources) +
					  " entries (a loop?)");
		auto bytes = session.read_memory(node, layout->size);
		if (!bytes)
			return make_error("reading struct resource at " + hex(node) + ": " + bytes.error().message);
		std::uint64_t start = field(*bytes, layout->start), end = field(*bytes, layout->end);
		node = field(*bytes, layout->sibling);
		if (!named_system_ram(session, field(*bytes, layout->name)))
			continue;
		if (end < start || end >= kPhysicalLimit)
			return make_error("System RAM " + hex(start) + "-" + hex(end) + " is not a physical range");
		std::uint64_t first = (start + kPage - 1) / kPage * kPage, last = (end + 1) / kPage * kPage;
		if (last <= first)
			continue;
		if (!ram.empty() && first < ram.back().start + ram.back().size)
			return make_error("System RAM " + hex(start) + "-" + hex(end) + " overlaps or precedes the one before it");
		ram.push_back({first, last - first});
	}
	if (ram.empty())
		return make_error("the iomem resource tree lists no System RAM");
	return ram;
}

}  // namespace vtice::dbg::vmcore
