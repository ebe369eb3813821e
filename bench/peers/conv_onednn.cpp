// See conv_onednn.hpp. Types come from oneDNN's C header; every function is resolved with
// dlsym, typed through decltype of its declaration (nothing is linked).
#include "peers/conv_onednn.hpp"

#include <cstring>
#include <vector>

#if __has_include(<oneapi/dnnl/dnnl.h>)
#include "peers/onednn_runtime.hpp"
#define STRATA_HAVE_DNNL_HEADER 1
#endif

namespace strata::bench {

#ifdef STRATA_HAVE_DNNL_HEADER

struct OnednnConv::State : OnednnRuntime {
#define STRATA_DNNL_FN(name) decltype(&::name) name = nullptr;
  STRATA_DNNL_FN(dnnl_memory_desc_init_by_tag)
  STRATA_DNNL_FN(dnnl_dilated_convolution_forward_desc_init)
  STRATA_DNNL_FN(dnnl_primitive_desc_query_md)
  STRATA_DNNL_FN(dnnl_reorder_primitive_desc_create)
#undef STRATA_DNNL_FN

  dnnl_primitive_desc_t pd = nullptr;
  dnnl_primitive_t conv = nullptr;
  dnnl_memory_t src = nullptr, wei = nullptr, dst = nullptr;
  dnnl_memory_desc_t dst_plain{};

  void release() {
    if (conv) dnnl_primitive_destroy(conv), conv = nullptr;
    if (pd) dnnl_primitive_desc_destroy(pd), pd = nullptr;
    for (dnnl_memory_t* m : {&src, &wei, &dst})
      if (*m) dnnl_memory_destroy(*m), *m = nullptr;
  }

  // Copies `from` (memory in one format) into `to` with a oneDNN reorder.
  bool reorder(dnnl_memory_t from_mem, const dnnl_memory_desc_t* from, dnnl_memory_t to_mem,
               const dnnl_memory_desc_t* to) {
    dnnl_primitive_desc_t rpd = nullptr;
    if (dnnl_reorder_primitive_desc_create(&rpd, from, engine, to, engine, nullptr) != dnnl_success) return false;
    dnnl_primitive_t r = nullptr;
    const bool ok = dnnl_primitive_create(&r, rpd) == dnnl_success;
    if (ok) {
      dnnl_exec_arg_t args[2] = {{DNNL_ARG_FROM, from_mem}, {DNNL_ARG_TO, to_mem}};
      dnnl_primitive_execute(r, stream, 2, args);
      dnnl_stream_wait(stream);
      dnnl_primitive_destroy(r);
    }
    dnnl_primitive_desc_destroy(rpd);
    return ok;
  }
};

std::unique_ptr<OnednnConv> OnednnConv::load(std::string& why_not) {
  std::unique_ptr<OnednnConv> p(new OnednnConv);
  p->st_ = std::make_unique<State>();
  State& s = *p->st_;
  if (!s.open({"libdnnl.so.3", "libdnnl.so.2"}, why_not)) return nullptr;
  p->library_ = s.library;
  const bool ok = s.sym(s.dnnl_memory_desc_init_by_tag, "dnnl_memory_desc_init_by_tag", why_not) &&
                  s.sym(s.dnnl_dilated_convolution_forward_desc_init, "dnnl_dilated_convolution_forward_desc_init",
                        why_not) &&
                  s.sym(s.dnnl_primitive_desc_query_md, "dnnl_primitive_desc_query_md", why_not) &&
                  s.sym(s.dnnl_reorder_primitive_desc_create, "dnnl_reorder_primitive_desc_create", why_not);
  if (!ok) return nullptr;
  return p;
}

OnednnConv::~OnednnConv() {
  if (st_ && st_->lib) st_->release();  // the engine and stream go with the runtime
}

void OnednnConv::set_threads(int n) {
  if (st_->omp_set_num_threads) st_->omp_set_num_threads(n);
}

bool OnednnConv::prepare(const ConvShape& sh, const float* x_nchw, const float* w_kcrs, bool bf16, std::string& err) {
  State& s = *st_;
  s.release();
  const int64_t oh = (sh.h + 2 * sh.pad_h - sh.r) / sh.stride_h + 1, ow = (sh.w + 2 * sh.pad_w - sh.s) / sh.stride_w + 1;
  dnnl_dims_t xd = {sh.n, sh.c, sh.h, sh.w}, wd = {sh.k, sh.c, sh.r, sh.s}, yd = {sh.n, sh.k, oh, ow};
  dnnl_dims_t strides = {sh.stride_h, sh.stride_w}, dil = {0, 0}, pad = {sh.pad_h, sh.pad_w};
  dnnl_memory_desc_t x_any, w_any, y_any, x_plain, w_plain;
  const dnnl_data_type_t dt = bf16 ? dnnl_bf16 : dnnl_f32;
  s.dnnl_memory_desc_init_by_tag(&x_any, 4, xd, dt, dnnl_format_tag_any);
  s.dnnl_memory_desc_init_by_tag(&w_any, 4, wd, dt, dnnl_format_tag_any);
  s.dnnl_memory_desc_init_by_tag(&y_any, 4, yd, dt, dnnl_format_tag_any);
  s.dnnl_memory_desc_init_by_tag(&x_plain, 4, xd, dnnl_f32, dnnl_nchw);
  s.dnnl_memory_desc_init_by_tag(&w_plain, 4, wd, dnnl_f32, dnnl_oihw);
  s.dnnl_memory_desc_init_by_tag(&s.dst_plain, 4, yd, dnnl_f32, dnnl_nchw);
  dnnl_convolution_desc_t cd;
  if (s.dnnl_dilated_convolution_forward_desc_init(&cd, dnnl_forward_inference, dnnl_convolution_auto, &x_any, &w_any,
                                                   nullptr, &y_any, strides, dil, pad, pad) != dnnl_success ||
      s.dnnl_primitive_desc_create(&s.pd, &cd, nullptr, s.engine, nullptr) != dnnl_success ||
      s.dnnl_primitive_create(&s.conv, s.pd) != dnnl_success) {
    err = "oneDNN could not create a convolution for this shape";
    return false;
  }
  const dnnl_memory_desc_t* src_md = s.dnnl_primitive_desc_query_md(s.pd, dnnl_query_src_md, 0);
  const dnnl_memory_desc_t* wei_md = s.dnnl_primitive_desc_query_md(s.pd, dnnl_query_weights_md, 0);
  const dnnl_memory_desc_t* dst_md = s.dnnl_primitive_desc_query_md(s.pd, dnnl_query_dst_md, 0);
  s.dnnl_memory_create(&s.src, src_md, s.engine, DNNL_MEMORY_ALLOCATE);
  s.dnnl_memory_create(&s.wei, wei_md, s.engine, DNNL_MEMORY_ALLOCATE);
  s.dnnl_memory_create(&s.dst, dst_md, s.engine, DNNL_MEMORY_ALLOCATE);
  dnnl_memory_t xm = nullptr, wm = nullptr;
  s.dnnl_memory_create(&xm, &x_plain, s.engine, const_cast<float*>(x_nchw));
  s.dnnl_memory_create(&wm, &w_plain, s.engine, const_cast<float*>(w_kcrs));
  const bool ok = s.reorder(xm, &x_plain, s.src, src_md) && s.reorder(wm, &w_plain, s.wei, wei_md);
  s.dnnl_memory_destroy(xm);
  s.dnnl_memory_destroy(wm);
  if (!ok) err = "oneDNN reorder into its chosen format failed";
  return ok;
}

void OnednnConv::run() {
  State& s = *st_;
  dnnl_exec_arg_t args[3] = {{DNNL_ARG_SRC, s.src}, {DNNL_ARG_WEIGHTS, s.wei}, {DNNL_ARG_DST, s.dst}};
  s.dnnl_primitive_execute(s.conv, s.stream, 3, args);
  s.dnnl_stream_wait(s.stream);
}

void OnednnConv::output_nchw(float* y) {
  State& s = *st_;
  dnnl_memory_t ym = nullptr;
  s.dnnl_memory_create(&ym, &s.dst_plain, s.engine, y);
  s.reorder(s.dst, s.dnnl_primitive_desc_query_md(s.pd, dnnl_query_dst_md, 0), ym, &s.dst_plain);
  s.dnnl_memory_destroy(ym);
}

std::string OnednnConv::implementation() const {
  const char* name = nullptr;
  if (st_->pd && st_->dnnl_primitive_desc_query(st_->pd, dnnl_query_impl_info_str, 0, &name) == dnnl_success && name)
    return name;
  return "?";
}

#else  // no oneDNN header at build time: the peer reports itself absent

struct OnednnConv::State {};
std::unique_ptr<OnednnConv> OnednnConv::load(std::string& why_not) {
  why_not = "built without oneDNN's header (Debian package libdnnl-dev)";
  return nullptr;
}
OnednnConv::~OnednnConv() = default;
void OnednnConv::set_threads(int) {}
bool OnednnConv::prepare(const ConvShape&, const float*, const float*, bool, std::string& err) {
  err = "unavailable";
  return false;
}
void OnednnConv::run() {}
void OnednnConv::output_nchw(float*) {}
std::string OnednnConv::implementation() const { return "?"; }

#endif

}  // namespace strata::bench
