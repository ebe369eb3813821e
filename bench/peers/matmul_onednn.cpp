// See matmul_onednn.hpp. Types come from oneDNN's C header; every function is resolved with
// dlsym, typed through decltype of its declaration (nothing is linked).
#include "peers/matmul_onednn.hpp"

// The *_desc_init functions used here are oneDNN 2.x's C API (3.x replaced them), so only a 2.x
// header enables the adapter, and it loads the library of that major version.
#if __has_include(<oneapi/dnnl/dnnl.h>)
#include <oneapi/dnnl/dnnl.h>
#if DNNL_VERSION_MAJOR == 2
#include "peers/onednn_runtime.hpp"
#define STRATA_HAVE_DNNL_HEADER 1
#endif
#endif

namespace strata::bench {

#ifdef STRATA_HAVE_DNNL_HEADER

struct OnednnMatmul::State : OnednnRuntime {
#define STRATA_DNNL_FN(name) decltype(&::name) name = nullptr;
  STRATA_DNNL_FN(dnnl_memory_desc_init_by_strides)
  STRATA_DNNL_FN(dnnl_matmul_desc_init)
  STRATA_DNNL_FN(dnnl_memory_set_data_handle)
#undef STRATA_DNNL_FN

  dnnl_primitive_desc_t pd = nullptr;
  dnnl_primitive_t matmul = nullptr;
  dnnl_memory_t src = nullptr, wei = nullptr, dst = nullptr;
  const char* impl = nullptr;  // owned by pd

  void release() {
    if (matmul) dnnl_primitive_destroy(matmul), matmul = nullptr;
    if (pd) dnnl_primitive_desc_destroy(pd), pd = nullptr;
    for (dnnl_memory_t* m : {&src, &wei, &dst})
      if (*m) dnnl_memory_destroy(*m), *m = nullptr;
    impl = nullptr;
  }

  // A strided descriptor of one operand: 2-D for a single matrix, 3-D with the batch outermost.
  bool describe(dnnl_memory_desc_t& md, dnnl_data_type_t type, const MatmulLayout& l, int64_t rows, int64_t cols,
                int64_t row_stride, int64_t col_stride, int64_t batch_stride) {
    if (l.batch == 1) {
      const dnnl_dims_t dims = {rows, cols}, strides = {row_stride, col_stride};
      return dnnl_memory_desc_init_by_strides(&md, 2, dims, type, strides) == dnnl_success;
    }
    const dnnl_dims_t dims = {l.batch, rows, cols}, strides = {batch_stride, row_stride, col_stride};
    return dnnl_memory_desc_init_by_strides(&md, 3, dims, type, strides) == dnnl_success;
  }
};

std::unique_ptr<OnednnMatmul> OnednnMatmul::load(std::string& why_not) {
  std::unique_ptr<OnednnMatmul> p(new OnednnMatmul);
  p->st_ = std::make_unique<State>();
  State& s = *p->st_;
  if (!s.open({"libdnnl.so.2"}, why_not)) return nullptr;
  p->library_ = s.library;
  const bool ok = s.sym(s.dnnl_memory_desc_init_by_strides, "dnnl_memory_desc_init_by_strides", why_not) &&
                  s.sym(s.dnnl_matmul_desc_init, "dnnl_matmul_desc_init", why_not) &&
                  s.sym(s.dnnl_memory_set_data_handle, "dnnl_memory_set_data_handle", why_not);
  if (!ok) return nullptr;
  return p;
}

OnednnMatmul::~OnednnMatmul() {
  if (st_ && st_->lib) st_->release();  // the engine and stream go with the runtime
}

void OnednnMatmul::set_threads(int n) {
  if (st_->omp_set_num_threads) st_->omp_set_num_threads(n);
}

bool OnednnMatmul::prepare(MatmulTypes types, const MatmulLayout& l, std::string& err) {
  State& s = *st_;
  s.release();
  // oneDNN 2.6.3 dies of SIGFPE inside dnnl_primitive_desc_create (one of its implementations'
  // blocking divides by the empty dimension), so it is never asked.
  if (l.m == 0 || l.n == 0 || l.k == 0) {
    err = "an empty dimension (oneDNN 2.6.3's matmul crashes on it)";
    return false;
  }
  const bool bf16 = types == MatmulTypes::bf16bf16f32;
  const dnnl_data_type_t ta = bf16 ? dnnl_bf16 : dnnl_u8, tb = bf16 ? dnnl_bf16 : dnnl_s8;
  const dnnl_data_type_t tc = bf16 ? dnnl_f32 : dnnl_s32;
  dnnl_memory_desc_t a_md, b_md, c_md;
  if (!s.describe(a_md, ta, l, l.m, l.k, l.a_row, l.a_col, l.a_batch) ||
      !s.describe(b_md, tb, l, l.k, l.n, l.b_row, l.b_col, l.b_batch) ||
      !s.describe(c_md, tc, l, l.m, l.n, l.c_row, l.c_col, l.c_batch)) {
    err = "oneDNN rejected the operand strides";
    return false;
  }
  dnnl_matmul_desc_t md;
  dnnl_status_t st = s.dnnl_matmul_desc_init(&md, &a_md, &b_md, nullptr, &c_md);
  if (st == dnnl_success) st = s.dnnl_primitive_desc_create(&s.pd, &md, nullptr, s.engine, nullptr);
  if (st == dnnl_success) st = s.dnnl_primitive_create(&s.matmul, s.pd);
  // The memories get the caller's buffers in run(); DNNL_MEMORY_NONE allocates nothing here.
  if (st == dnnl_success) st = s.dnnl_memory_create(&s.src, &a_md, s.engine, DNNL_MEMORY_NONE);
  if (st == dnnl_success) st = s.dnnl_memory_create(&s.wei, &b_md, s.engine, DNNL_MEMORY_NONE);
  if (st == dnnl_success) st = s.dnnl_memory_create(&s.dst, &c_md, s.engine, DNNL_MEMORY_NONE);
  if (st != dnnl_success) {
    err = "oneDNN could not create a matmul for this problem (dnnl_status_t " + std::to_string(int(st)) + ")";
    s.release();
    return false;
  }
  if (s.dnnl_primitive_desc_query(s.pd, dnnl_query_impl_info_str, 0, &s.impl) != dnnl_success) s.impl = nullptr;
  return true;
}

void OnednnMatmul::run(const void* a, const void* b, void* c) {
  State& s = *st_;
  // oneDNN only reads src and weights; its handles are non-const for all memories alike.
  s.dnnl_memory_set_data_handle(s.src, const_cast<void*>(a));
  s.dnnl_memory_set_data_handle(s.wei, const_cast<void*>(b));
  s.dnnl_memory_set_data_handle(s.dst, c);
  const dnnl_exec_arg_t args[3] = {{DNNL_ARG_SRC, s.src}, {DNNL_ARG_WEIGHTS, s.wei}, {DNNL_ARG_DST, s.dst}};
  s.dnnl_primitive_execute(s.matmul, s.stream, 3, args);
  s.dnnl_stream_wait(s.stream);
}

const char* OnednnMatmul::impl() const { return st_->impl ? st_->impl : "?"; }

#else  // no oneDNN 2.x header at build time: the peer reports itself absent

struct OnednnMatmul::State {};
std::unique_ptr<OnednnMatmul> OnednnMatmul::load(std::string& why_not) {
  why_not = "built without oneDNN 2.x's header (Debian package libdnnl-dev)";
  return nullptr;
}
OnednnMatmul::~OnednnMatmul() = default;
void OnednnMatmul::set_threads(int) {}
bool OnednnMatmul::prepare(MatmulTypes, const MatmulLayout&, std::string& err) {
  err = "unavailable";
  return false;
}
void OnednnMatmul::run(const void*, const void*, void*) {}
const char* OnednnMatmul::impl() const { return "?"; }

#endif

}  // namespace strata::bench
