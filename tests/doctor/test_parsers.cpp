// ELF reader, fatbin scanner (synthetic inputs incl. malformed ones), ld.so.cache parser and
// loader search order, version parsing.
#include <gtest/gtest.h>

#include <cstdio>
#include <set>

#include "fixture.hpp"
#include "strata/doctor/elf.hpp"
#include "strata/doctor/fatbin.hpp"
#include "strata/doctor/loader.hpp"
#include "strata/doctor/version.hpp"

using namespace strata::doctor;
using strata::doctor::test::FatEntry;

namespace {

std::set<std::string> names(const FatbinReport& r, FatbinReport::Scope s) {
  std::set<std::string> out;
  for (const auto& t : r.target_set(s)) out.insert(t.name());
  return out;
}

std::vector<std::uint8_t> concat(std::vector<std::uint8_t> a, const std::vector<std::uint8_t>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

}  // namespace

TEST(DoctorVersion, ParseCompareAndFind) {
  EXPECT_EQ(Version::parse("580.65.06")->str(), "580.65.06");
  EXPECT_LT(*Version::parse("575.57.08"), *Version::parse("580.65.06"));
  EXPECT_EQ(*Version::parse("13.0"), *Version::parse("13.0.0"));
  EXPECT_FALSE(Version::parse("13.").has_value());
  EXPECT_FALSE(Version::parse("a.1").has_value());
  EXPECT_EQ(Version::find_in("NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.90.07  Tue")->str(), "550.90.07");
}

TEST(DoctorElf, DynamicSectionFields) {
  test::ElfSpec spec;
  spec.soname = "libcudnn_graph.so.9";
  spec.needed = {"libz.so.1", "libstdc++.so.6"};
  spec.runpath = "$ORIGIN:$ORIGIN/../../cu13/lib";
  auto bytes = test::build_elf(spec);
  std::string err;
  auto elf = parse_elf(bytes, &err);
  ASSERT_TRUE(elf) << err;
  EXPECT_EQ(elf->soname, "libcudnn_graph.so.9");
  EXPECT_EQ(elf->needed, (std::vector<std::string>{"libz.so.1", "libstdc++.so.6"}));
  EXPECT_TRUE(elf->has_runpath);
  EXPECT_FALSE(elf->has_rpath);
  EXPECT_EQ(elf->runpath, (std::vector<std::string>{"$ORIGIN", "$ORIGIN/../../cu13/lib"}));
}

TEST(DoctorElf, RejectsWhatItCannotRead) {
  std::string err;
  std::vector<std::uint8_t> junk(100, 0x41);
  EXPECT_FALSE(parse_elf(junk, &err));
  test::ElfSpec spec;
  spec.elf_class = 1;
  EXPECT_FALSE(parse_elf(test::build_elf(spec), &err));
  EXPECT_NE(err.find("32-bit"), std::string::npos);
  auto good = test::build_elf(test::ElfSpec{});
  // Every truncation of a valid file is handled without crashing.
  for (std::size_t n = 0; n < good.size(); n += 7) parse_elf(std::span(good.data(), n));
}

TEST(DoctorElf, CubinSmFromEflags) {
  ElfInfo cubin;
  cubin.abi_version = 8;
  cubin.e_flags = 0x06005a04;  // sm_90 (CUDA 13 layout)
  EXPECT_EQ(cubin_sm(cubin), 90);
  cubin.e_flags = 0x06007902;
  EXPECT_EQ(cubin_sm(cubin), 121);
  cubin.abi_version = 7;
  cubin.e_flags = 0x00460546;  // older cubins: SM in the low byte
  EXPECT_EQ(cubin_sm(cubin), 0x46);
}

TEST(DoctorFatbin, VariantsKindsAndIsaFromEntryHeaders) {
  // The flag values nvcc 13.0 writes (expected_probe_outputs.txt, "Flag / variant matrix").
  auto c = test::fatbin_container({{2, 90, 0x100011, 1, 8, 64, 64},       // sm_90a
                                   {2, 100, 0x1200011, 1, 8, 112, 64},    // sm_100f
                                   {2, 100, 0x1100011, 1, 8, 112, 64},    // sm_100a
                                   {2, 75, 0x2011, 1, 8, 64, 64},         // sm_75, LZ4
                                   {1, 120, 0x8011, 9, 0, 80, 64},        // compute_120, zstd, ISA 9.0
                                   {1, 100, 0x200011, 9, 1, 80, 64},      // compute_100f, ISA 9.1
                                   {8, 80, 0x11, 1, 65, 120, 64}});       // lto_80
  test::ElfSpec spec;
  spec.sections.push_back({".nv_fatbin", 1, c});
  auto bytes = test::build_elf(spec);
  auto elf = parse_elf(bytes);
  ASSERT_TRUE(elf);
  auto r = scan_elf_fatbins(bytes, *elf);
  EXPECT_EQ(names(r, FatbinReport::Scope::registered),
            (std::set<std::string>{"sm_90a", "sm_100f", "sm_100a", "sm_75", "compute_120", "compute_100f", "lto_80"}));
  EXPECT_EQ(r.max_ptx_isa(FatbinReport::Scope::all)->str(), "9.1");
  EXPECT_EQ(r.targets.at({ImageKind::sass, 75, ArchVariant::plain}).compressed_lz4, 1u);
  EXPECT_EQ(r.targets.at({ImageKind::ptx, 120, ArchVariant::plain}).compressed_zstd, 1u);
  EXPECT_EQ(r.containers, 1u);
  EXPECT_TRUE(r.warnings.empty());
}

TEST(DoctorFatbin, PaddingBetweenContainersAndDeepSections) {
  auto a = test::fatbin_container({{2, 80, 0x11, 1, 8, 64, 64}});
  auto b = test::fatbin_container({{2, 86, 0x11, 1, 8, 64, 64}});
  std::vector<std::uint8_t> zeros(24, 0);
  test::ElfSpec spec;
  spec.sections.push_back({".nv_fatbin", 1, concat(concat(a, zeros), b)});
  // A library that loads its own kernels keeps them in a data section, among other bytes,
  // including a decoy magic that does not validate.
  std::vector<std::uint8_t> ldata(37, 0x5a);
  std::vector<std::uint8_t> decoy = {0x50, 0xed, 0x55, 0xba, 9, 0, 16, 0, 1, 0, 0, 0, 0, 0, 0, 0};
  ldata = concat(concat(concat(ldata, decoy), test::fatbin_container({{2, 120, 0x1000011, 1, 8, 112, 64}})), std::vector<std::uint8_t>(5, 1));
  spec.sections.push_back({".ldata", 1, ldata});
  spec.sections.push_back({"__nv_relfatbin", 1, test::fatbin_container({{1, 70, 0x8011, 9, 0, 96, 64}})});
  spec.sections.push_back({".bss", 8, {}});
  auto bytes = test::build_elf(spec);
  auto elf = parse_elf(bytes);
  ASSERT_TRUE(elf);
  auto r = scan_elf_fatbins(bytes, *elf);
  EXPECT_EQ(names(r, FatbinReport::Scope::registered), (std::set<std::string>{"sm_80", "sm_86"}));
  EXPECT_EQ(names(r, FatbinReport::Scope::runnable), (std::set<std::string>{"sm_80", "sm_86", "sm_120"}));
  EXPECT_EQ(names(r, FatbinReport::Scope::all), (std::set<std::string>{"sm_80", "sm_86", "sm_120", "compute_70"}));
  EXPECT_EQ(r.containers, 4u);
  FatbinScanOptions shallow;
  shallow.deep = false;
  EXPECT_EQ(names(scan_elf_fatbins(bytes, *elf, shallow), FatbinReport::Scope::runnable),
            (std::set<std::string>{"sm_80", "sm_86"}));
}

TEST(DoctorFatbin, MalformedInputIsBoundedAndReported) {
  auto c = test::fatbin_container({{2, 80, 0x11, 1, 8, 64, 64}, {2, 90, 0x11, 1, 8, 64, 64}});
  // Entry size that runs past the container.
  auto bad = c;
  bad[16 + 8] = 0xff;
  bad[16 + 9] = 0xff;
  auto r = scan_raw_fatbin(bad);
  EXPECT_FALSE(r.warnings.empty());
  // Container size past the end.
  auto bad2 = c;
  bad2[8] = 0xff;
  bad2[12] = 0x7f;
  r = scan_raw_fatbin(bad2);
  EXPECT_FALSE(r.warnings.empty());
  EXPECT_EQ(r.entries, 0u);
  // Header size below the minimum.
  auto bad3 = c;
  bad3[16 + 4] = 8;
  EXPECT_NO_FATAL_FAILURE(scan_raw_fatbin(bad3));
  // Every truncation and every single-byte corruption is survived.
  for (std::size_t n = 0; n <= c.size(); ++n) scan_raw_fatbin(std::span(c.data(), n));
  for (std::size_t i = 0; i < c.size(); ++i) {
    auto m = c;
    m[i] ^= 0xa5;
    scan_raw_fatbin(m);
  }
}

TEST(DoctorFatbin, LimitsTruncateInsteadOfGrowing) {
  std::vector<std::uint8_t> many;
  for (int i = 0; i < 50; ++i) many = concat(many, test::fatbin_container({{2, 80, 0x11, 1, 8, 64, 64}}));
  FatbinLimits lim;
  lim.max_containers = 10;
  auto r = scan_raw_fatbin(many, lim);
  EXPECT_TRUE(r.truncated);
  EXPECT_EQ(r.containers, 10u);
  lim = {};
  lim.max_entries = 3;
  r = scan_raw_fatbin(many, lim);
  EXPECT_TRUE(r.truncated);
  EXPECT_EQ(r.entries, 3u);
}

TEST(DoctorLdCache, RoundTripAndLookup) {
  auto bytes = test::build_ld_cache({{"libcuda.so.1", "/usr/lib/x86_64-linux-gnu/libcuda.so.1"}, {"libz.so.1", "/lib/libz.so.1"}});
  std::string err;
  auto c = parse_ld_so_cache(bytes, &err);
  ASSERT_TRUE(c) << err;
  ASSERT_EQ(c->entries.size(), 2u);
  EXPECT_EQ(c->find("libcuda.so.1", kEmX86_64)->path, "/usr/lib/x86_64-linux-gnu/libcuda.so.1");
  EXPECT_EQ(c->find("libcuda.so.1", kEmAarch64), nullptr);
  for (std::size_t n = 0; n < bytes.size(); ++n) parse_ld_so_cache(std::span(bytes.data(), n));
}

TEST(DoctorLdCache, AgreesWithLdconfigOnThisMachine) {
  auto f = MappedFile::open("/etc/ld.so.cache", 64 << 20);
  FILE* p = popen("ldconfig -p 2>/dev/null || /sbin/ldconfig -p 2>/dev/null", "r");
  if (!f || !p) GTEST_SKIP() << "no ld.so.cache or ldconfig here";
  std::set<std::pair<std::string, std::string>> expected;
  char line[4096];
  while (fgets(line, sizeof line, p)) {
    std::string s(line);
    auto arrow = s.find(" => ");
    if (arrow == std::string::npos) continue;
    std::string name = s.substr(s.find_first_not_of(" \t"), s.find(" (") - s.find_first_not_of(" \t"));
    std::string path = s.substr(arrow + 4);
    while (!path.empty() && (path.back() == '\n' || path.back() == ' ')) path.pop_back();
    expected.insert({name, path});
  }
  pclose(p);
  if (expected.empty()) GTEST_SKIP() << "ldconfig -p printed nothing";
  auto c = parse_ld_so_cache(f->bytes());
  ASSERT_TRUE(c);
  std::set<std::pair<std::string, std::string>> got;
  for (const auto& e : c->entries) got.insert({e.name, e.path});
  EXPECT_EQ(got, expected);
}

TEST(DoctorLoader, SearchOrderFollowsLdSo) {
  test::FixtureTree t;
  for (const char* dir : {"/opt/rpath", "/opt/llp", "/opt/runpath", "/opt/cached", "/usr/lib/x86_64-linux-gnu"})
    t.library(std::string(dir) + "/libfoo.so.1");
  t.ld_cache({{"libfoo.so.1", "/opt/cached/libfoo.so.1"}});
  Requester with_rpath{"/app/bin/prog", {}};
  with_rpath.elf.has_rpath = true;
  with_rpath.elf.rpath = {"/opt/rpath"};
  Requester with_runpath{"/app/bin/prog", {}};
  with_runpath.elf.has_runpath = true;
  with_runpath.elf.runpath = {"/opt/runpath"};
  {
    auto sys = t.view({{"LD_LIBRARY_PATH", "/opt/llp"}});
    LoaderModel ld(sys);
    EXPECT_EQ(*ld.resolve("libfoo.so.1", &with_rpath).path, "/opt/rpath/libfoo.so.1");  // RPATH beats LD_LIBRARY_PATH
    EXPECT_EQ(*ld.resolve("libfoo.so.1", &with_runpath).path, "/opt/llp/libfoo.so.1");  // LD_LIBRARY_PATH beats RUNPATH
    EXPECT_EQ(ld.resolve("libfoo.so.1", &with_runpath).via, "LD_LIBRARY_PATH");
  }
  {
    auto sys = t.view();
    LoaderModel ld(sys);
    EXPECT_EQ(*ld.resolve("libfoo.so.1", &with_runpath).path, "/opt/runpath/libfoo.so.1");
    EXPECT_EQ(*ld.resolve("libfoo.so.1").path, "/opt/cached/libfoo.so.1");
    EXPECT_EQ(ld.resolve("libfoo.so.1").via, "ld.so.cache");
    // RUNPATH and RPATH together: RPATH is ignored.
    Requester both = with_runpath;
    both.elf.has_rpath = true;
    both.elf.rpath = {"/opt/rpath"};
    EXPECT_EQ(*ld.resolve("libfoo.so.1", &both).path, "/opt/runpath/libfoo.so.1");
  }
  t.write("/etc/ld.so.cache", std::string("garbage"));
  {
    auto sys = t.view();
    LoaderModel ld(sys);
    EXPECT_FALSE(ld.cache_present());
    EXPECT_EQ(*ld.resolve("libfoo.so.1").path, "/usr/lib/x86_64-linux-gnu/libfoo.so.1");
    EXPECT_EQ(ld.resolve("libfoo.so.1").via, "system dir");
  }
}

TEST(DoctorLoader, OriginExpansionAndWrongClassSkipped) {
  test::FixtureTree t;
  test::ElfSpec arm;
  arm.machine = kEmAarch64;
  t.library("/site/nvidia/cu13/lib/libcublasLt.so.13", arm);  // wrong machine: skipped like ld.so does
  t.library("/site/nvidia/cublas/lib/libcublasLt.so.13");
  auto sys = t.view();
  LoaderModel ld(sys);
  Requester cublas{"/site/nvidia/cublas/lib/libcublas.so.13", {}};
  cublas.elf.has_runpath = true;
  cublas.elf.runpath = {"$ORIGIN/../../cu13/lib", "${ORIGIN}"};
  auto r = ld.resolve("libcublasLt.so.13", &cublas);
  ASSERT_TRUE(r.path);
  EXPECT_EQ(*r.path, "/site/nvidia/cublas/lib/libcublasLt.so.13");
  EXPECT_EQ(r.steps.front().result, "wrong ELF class or machine");
  EXPECT_EQ(expand_dst("$ORIGIN/x:$LIB", "/a/b", kEmX86_64), "/a/b/x:lib/x86_64-linux-gnu");
}

TEST(DoctorSystemView, CanonicalStaysInsideTheRoot) {
  test::FixtureTree t;
  t.write("/usr/local/cuda-13.0/lib64/libcudart.so.13", std::string("x"));
  t.symlink("/usr/local/cuda-13.0", "/usr/local/cuda");  // absolute target: inside the view
  t.symlink("libcudart.so.13", "/usr/local/cuda-13.0/lib64/libcudart.so");
  auto sys = t.view();
  EXPECT_EQ(*sys.canonical("/usr/local/cuda/lib64/libcudart.so"), "/usr/local/cuda-13.0/lib64/libcudart.so.13");
  t.symlink("/loop2", "/loop1");
  t.symlink("/loop1", "/loop2");
  EXPECT_FALSE(sys.canonical("/loop1").has_value());
}
