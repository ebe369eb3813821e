# One place for compiler flags shared by every strata target.
add_library(strata_warnings INTERFACE)
target_compile_options(strata_warnings INTERFACE
  $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wshadow -Wno-psabi
    # GCC 12 reports false -Wrestrict positives inside libstdc++'s string operator+ (GCC bug 105329).
    $<$<CXX_COMPILER_ID:GNU>:-Wno-restrict>>
  $<$<AND:$<COMPILE_LANGUAGE:CXX>,$<BOOL:${STRATA_WERROR}>>:-Werror>)

# strata_add_library(name SOURCES ...): a module library with the project's conventions.
function(strata_add_library name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS;PRIVATE_DEPS" ${ARGN})
  add_library(${name} ${ARG_SOURCES})
  add_library(strata::${name} ALIAS ${name})
  target_include_directories(${name} PUBLIC
    $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>
    $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
  target_link_libraries(${name} PUBLIC ${ARG_DEPS} PRIVATE strata_warnings ${ARG_PRIVATE_DEPS})
  set_target_properties(${name} PROPERTIES VERSION ${PROJECT_VERSION} SOVERSION ${PROJECT_VERSION_MAJOR}
    OUTPUT_NAME ${name})
  set_property(GLOBAL APPEND PROPERTY STRATA_EXPORTED_TARGETS ${name})
endfunction()

# Per-ISA compile flags for kernel sources: strata_isa_sources(avx2 file.cpp ...).
# Only these files get the flags, so the rest of the library runs on any x86-64 CPU.
# -fno-trapping-math / -fno-math-errno let loops with selects and rounding vectorise (epilogues,
# activations); they do not change any result (no reassociation, unlike -ffast-math).
# Hidden visibility: the tile templates instantiated here are inline functions, which every
# library compiling them would otherwise export; the dynamic linker then binds one library's
# copy for all of them (libstrata_blas ran libstrata_dnn's epilogue code, built with other
# inlining decisions: a 27% slowdown once). Kernel files export nothing to other libraries.
set(STRATA_FLAGS_portable -fno-trapping-math -fno-math-errno -fvisibility=hidden -fvisibility-inlines-hidden)
set(STRATA_FLAGS_avx2 -mavx2 -mfma -mf16c ${STRATA_FLAGS_portable})
set(STRATA_FLAGS_avx512 ${STRATA_FLAGS_avx2} -mavx512f -mavx512bw -mavx512vl -mavx512dq)
set(STRATA_FLAGS_avx512bf16 ${STRATA_FLAGS_avx512} -mavx512bf16 -mavx512vnni)
set(STRATA_FLAGS_amx ${STRATA_FLAGS_avx512bf16} -mamx-tile -mamx-bf16 -mamx-int8)
set(STRATA_FLAGS_avxvnni ${STRATA_FLAGS_avx2} -mavxvnni)
function(strata_isa_sources isa)
  # STRATA_KERNEL_ISA names the inline namespace of the tile templates (tile/isa_namespace.hpp).
  set_source_files_properties(${ARGN} PROPERTIES COMPILE_OPTIONS "${STRATA_FLAGS_${isa}}"
                              COMPILE_DEFINITIONS "STRATA_KERNEL_ISA=${isa}")
endfunction()
