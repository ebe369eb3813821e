// oneDNN's C API as the bench's peers use it (conv_onednn, matmul_onednn), loaded at run time:
// the library, one CPU engine and stream, OpenMP's thread setter, and the functions every
// primitive needs, each typed through decltype of the header's declaration (nothing linked).
// A peer's State derives from it and resolves its own extra functions with `sym`.
// Include only where <oneapi/dnnl/dnnl.h> exists.
#pragma once
#include <dlfcn.h>
#include <oneapi/dnnl/dnnl.h>

#include <initializer_list>
#include <string>
#include <type_traits>

namespace strata::bench {

struct OnednnRuntime {
  void* lib = nullptr;
  std::string library;  // the file that was opened
#define STRATA_DNNL_FN(name) decltype(&::name) name = nullptr;
  STRATA_DNNL_FN(dnnl_engine_create)
  STRATA_DNNL_FN(dnnl_engine_destroy)
  STRATA_DNNL_FN(dnnl_stream_create)
  STRATA_DNNL_FN(dnnl_stream_destroy)
  STRATA_DNNL_FN(dnnl_stream_wait)
  STRATA_DNNL_FN(dnnl_primitive_desc_create)
  STRATA_DNNL_FN(dnnl_primitive_desc_destroy)
  STRATA_DNNL_FN(dnnl_primitive_desc_query)
  STRATA_DNNL_FN(dnnl_primitive_create)
  STRATA_DNNL_FN(dnnl_primitive_destroy)
  STRATA_DNNL_FN(dnnl_primitive_execute)
  STRATA_DNNL_FN(dnnl_memory_create)
  STRATA_DNNL_FN(dnnl_memory_destroy)
#undef STRATA_DNNL_FN
  void (*omp_set_num_threads)(int) = nullptr;
  dnnl_engine_t engine = nullptr;
  dnnl_stream_t stream = nullptr;

  OnednnRuntime() = default;
  OnednnRuntime(const OnednnRuntime&) = delete;
  OnednnRuntime& operator=(const OnednnRuntime&) = delete;
  // The library stays loaded: its OpenMP threads may still be parked.
  ~OnednnRuntime() {
    if (stream) dnnl_stream_destroy(stream);
    if (engine) dnnl_engine_destroy(engine);
  }

  // Resolves `name` into fn; false with `why_not` naming it when the library lacks it.
  template <class Fn>
  bool sym(Fn& fn, const char* name, std::string& why_not) {
    fn = reinterpret_cast<Fn>(dlsym(lib, name));
    if (!fn) why_not = std::string("symbol ") + name + " missing in " + library;
    return fn != nullptr;
  }

  // Opens the first of `names` that loads, resolves the functions above, finds OpenMP's
  // thread setter (Debian's oneDNN runs on OpenMP) and creates the engine and stream. False
  // with `why_not` set otherwise.
  bool open(std::initializer_list<const char*> names, std::string& why_not) {
    for (const char* name : names)
      if ((lib = dlopen(name, RTLD_NOW | RTLD_LOCAL))) {
        library = name;
        break;
      }
    if (!lib) {
      why_not = "libdnnl.so not found (Debian package libdnnl-dev)";
      return false;
    }
    const bool ok = sym(dnnl_engine_create, "dnnl_engine_create", why_not) &&
                    sym(dnnl_engine_destroy, "dnnl_engine_destroy", why_not) &&
                    sym(dnnl_stream_create, "dnnl_stream_create", why_not) &&
                    sym(dnnl_stream_destroy, "dnnl_stream_destroy", why_not) &&
                    sym(dnnl_stream_wait, "dnnl_stream_wait", why_not) &&
                    sym(dnnl_primitive_desc_create, "dnnl_primitive_desc_create", why_not) &&
                    sym(dnnl_primitive_desc_destroy, "dnnl_primitive_desc_destroy", why_not) &&
                    sym(dnnl_primitive_desc_query, "dnnl_primitive_desc_query", why_not) &&
                    sym(dnnl_primitive_create, "dnnl_primitive_create", why_not) &&
                    sym(dnnl_primitive_destroy, "dnnl_primitive_destroy", why_not) &&
                    sym(dnnl_primitive_execute, "dnnl_primitive_execute", why_not) &&
                    sym(dnnl_memory_create, "dnnl_memory_create", why_not) &&
                    sym(dnnl_memory_destroy, "dnnl_memory_destroy", why_not);
    if (!ok) return false;
    omp_set_num_threads = reinterpret_cast<void (*)(int)>(dlsym(RTLD_DEFAULT, "omp_set_num_threads"));
    if (!omp_set_num_threads)
      if (void* gomp = dlopen("libgomp.so.1", RTLD_NOW | RTLD_NOLOAD))
        omp_set_num_threads = reinterpret_cast<void (*)(int)>(dlsym(gomp, "omp_set_num_threads"));
    if (dnnl_engine_create(&engine, dnnl_cpu, 0) != dnnl_success ||
        dnnl_stream_create(&stream, engine, dnnl_stream_default_flags) != dnnl_success) {
      why_not = "oneDNN engine/stream creation failed";
      return false;
    }
    return true;
  }
};

}  // namespace strata::bench
