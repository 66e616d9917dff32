// The kernel's BTF, loaded once (kernel_btf.hpp).
#include "kernel_btf.hpp"

namespace vtice::console {

Result<const dbg::btf::Types *> KernelBtf::types()
{
	if (borrow_) {
		if (!borrowed_)
			borrowed_.emplace(borrow_());
		return *borrowed_;
	}
	if (!loaded_)
		loaded_.emplace(dbg::btf::load_file(path_));
	if (!*loaded_)
		return loaded_->error();
	return &**loaded_;
}

}  // namespace vtice::console
