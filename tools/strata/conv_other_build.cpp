#include "conv_other_build.hpp"

#include <dlfcn.h>

#include <cstring>
#include <type_traits>

namespace strata::cli {

// The entry points, by their mangled names: the C++ API of strata::dnn (a changed signature
// makes the load fail with the name, never a call through a wrong type).
struct OtherBuildConv::Entries {
  dnn::PreparedFilter (*prepare)(const dnn::Handle&, const dnn::TensorDesc&, const dnn::FilterDesc&, const void*,
                                 const dnn::ConvDesc&, const dnn::TensorDesc&, dnn::ConvAlgo);
  std::size_t (*workspace_prepared)(const dnn::Handle&, const dnn::TensorDesc&, const dnn::PreparedFilter&,
                                    const dnn::ConvDesc&, const dnn::TensorDesc&);
  std::size_t (*workspace)(const dnn::Handle&, const dnn::TensorDesc&, const dnn::FilterDesc&, const dnn::ConvDesc&,
                           const dnn::TensorDesc&, dnn::ConvAlgo);
  void (*forward_prepared)(const dnn::Handle&, const void*, const dnn::TensorDesc&, const void*,
                           const dnn::PreparedFilter&, const dnn::ConvDesc&, void*, std::size_t, const void*,
                           const dnn::TensorDesc&, void*);
  void (*forward)(const dnn::Handle&, const void*, const dnn::TensorDesc&, const void*, const dnn::FilterDesc&,
                  const void*, const dnn::ConvDesc&, dnn::ConvAlgo, void*, std::size_t, const void*,
                  const dnn::TensorDesc&, void*);
};

std::unique_ptr<OtherBuildConv> OtherBuildConv::load(const std::string& path, std::string& why_not) {
  void* so = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND);
  if (!so) {
    const char* e = dlerror();
    why_not = e ? e : "dlopen failed";
    return nullptr;
  }
  auto fn = std::make_shared<Entries>();
  auto bind = [&](auto& f, const char* symbol) {
    f = reinterpret_cast<std::remove_reference_t<decltype(f)>>(dlsym(so, symbol));
    if (!f && why_not.empty()) why_not = path + " lacks " + symbol;
  };
  bind(fn->prepare,
       "_ZN6strata3dnn22prepare_forward_filterERKNS0_6HandleERKNS0_10TensorDescERKNS0_10FilterDescEPKvRKNS0_8"
       "ConvDescES6_NS0_8ConvAlgoE");
  bind(fn->workspace_prepared,
       "_ZN6strata3dnn22forward_workspace_sizeERKNS0_6HandleERKNS0_10TensorDescERKNS0_14PreparedFilterERKNS0_8"
       "ConvDescES6_");
  bind(fn->workspace,
       "_ZN6strata3dnn22forward_workspace_sizeERKNS0_6HandleERKNS0_10TensorDescERKNS0_10FilterDescERKNS0_8"
       "ConvDescES6_NS0_8ConvAlgoE");
  bind(fn->forward_prepared,
       "_ZN6strata3dnn19convolution_forwardERKNS0_6HandleEPKvRKNS0_10TensorDescES5_RKNS0_14PreparedFilterERKNS0_8"
       "ConvDescEPvmS5_S8_SF_");
  bind(fn->forward,
       "_ZN6strata3dnn19convolution_forwardERKNS0_6HandleEPKvRKNS0_10TensorDescES5_RKNS0_10FilterDescES5_RKNS0_8"
       "ConvDescENS0_8ConvAlgoEPvmS5_S8_SG_");
  if (!why_not.empty()) return nullptr;
  std::unique_ptr<OtherBuildConv> b(new OtherBuildConv);
  b->name_ = path.substr(path.find_last_of('/') + 1);
  b->fn_ = std::move(fn);
  return b;
}

void OtherBuildConv::prepare(const dnn::Handle& h, const dnn::TensorDesc& x_desc, const void* x,
                             const dnn::FilterDesc& w_desc, const void* w, const dnn::ConvDesc& conv,
                             const dnn::TensorDesc& y_desc, void* y, dnn::ConvAlgo algo, bool prepared) {
  h_ = &h, x_desc_ = &x_desc, w_desc_ = &w_desc, conv_ = &conv, y_desc_ = &y_desc;
  const std::size_t x_bytes = std::size_t(x_desc.span()) * dtype_size(x_desc.dtype());
  x_ = make_aligned<std::byte>(x_bytes);
  std::memcpy(x_.get(), x, x_bytes);
  w_ = w, y_ = y, algo_ = algo, prepared_ = prepared;
  pf_ = prepared ? fn_->prepare(h, x_desc, w_desc, w, conv, y_desc, algo) : dnn::PreparedFilter{};
  ws_bytes_ = prepared ? fn_->workspace_prepared(h, x_desc, pf_, conv, y_desc)
                       : fn_->workspace(h, x_desc, w_desc, conv, y_desc, algo);
  ws_ = make_aligned<std::byte>(ws_bytes_ + 1);
}

void OtherBuildConv::run() {
  const float one = 1.f, zero = 0.f;
  if (prepared_)
    fn_->forward_prepared(*h_, &one, *x_desc_, x_.get(), pf_, *conv_, ws_.get(), ws_bytes_, &zero, *y_desc_, y_);
  else
    fn_->forward(*h_, &one, *x_desc_, x_.get(), *w_desc_, w_, *conv_, algo_, ws_.get(), ws_bytes_, &zero, *y_desc_, y_);
}

}  // namespace strata::cli
