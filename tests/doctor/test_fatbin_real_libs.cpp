// The fatbin scanner against the CUDA 13.0 libraries installed here, compared with the
// architecture inventory an independent parser produced (tests/doctor/data, copied from the
// shared research material). Skipped when the toolkit is not installed.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "strata/doctor/fatbin.hpp"
#include "strata/doctor/system_view.hpp"

using namespace strata::doctor;

namespace {

std::string read_all(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

std::set<std::string> words(const std::string& s) {
  std::set<std::string> out;
  std::istringstream is(s);
  for (std::string w; is >> w;) out.insert(w);
  return out;
}

std::set<std::string> names(const std::set<ImageTarget>& ts, ImageKind kind) {
  std::set<std::string> out;
  for (const auto& t : ts)
    if (t.kind == kind) out.insert(t.name());
  return out;
}

struct Expected {
  std::set<std::string> sass, ptx;  // from .nv_fatbin (and __nv_relfatbin when present)
};

// "## /usr/local/cuda/lib64/libX  (0.1s) sections=[...] containers=N" then "  SASS: ..." "  PTX: ...".
std::map<std::string, Expected> parse_summary(const std::string& text) {
  std::map<std::string, Expected> out;
  std::istringstream is(text);
  std::string line, current;
  while (std::getline(is, line)) {
    if (line.rfind("## ", 0) == 0) {
      current = line.substr(3, line.find(' ', 3) - 3);
    } else if (!current.empty() && line.rfind("  SASS:", 0) == 0) {
      out[current].sass = words(line.substr(7));
    } else if (!current.empty() && line.rfind("  PTX:", 0) == 0) {
      out[current].ptx = words(line.substr(6));
    } else if (line.empty() || line[0] == '/') {
      current.clear();
    }
  }
  return out;
}

// "/path invalid-magic-hits 0" then "  .section {'SASS': ['75', '90a'], 'PTX': [...], 'kind8': [...]} ...".
std::map<std::string, std::map<std::string, Expected>> parse_deep(const std::string& text) {
  std::map<std::string, std::map<std::string, Expected>> out;
  std::istringstream is(text);
  std::string line, current;
  std::regex list_re("'(SASS|PTX)': \\[([^\\]]*)\\]");
  std::regex item_re("'([0-9]+[af]?)'");
  while (std::getline(is, line)) {
    if (line.find("invalid-magic-hits") != std::string::npos) {
      current = line.substr(0, line.find(' '));
    } else if (!current.empty() && line.rfind("  .", 0) == 0) {
      std::string section = line.substr(2, line.find(' ', 2) - 2);
      Expected& e = out[current][section];
      for (std::sregex_iterator it(line.begin(), line.end(), list_re), end; it != end; ++it) {
        std::string kind = (*it)[1], items = (*it)[2];
        for (std::sregex_iterator a(items.begin(), items.end(), item_re), e2; a != e2; ++a)
          (kind == "SASS" ? e.sass : e.ptx).insert((kind == "SASS" ? "sm_" : "compute_") + (*a)[1].str());
      }
    }
  }
  return out;
}

const std::string kInventory = std::string(STRATA_DOCTOR_TEST_DATA) + "/libs_cuda13_arch_inventory.txt";

}  // namespace

TEST(DoctorFatbinRealLibs, AgreesWithInventoryForRegisteredSections) {
  auto expected = parse_summary(read_all(kInventory));
  ASSERT_GE(expected.size(), 10u) << "inventory not parsed";
  int checked = 0;
  for (const auto& [path, exp] : expected) {
    auto file = MappedFile::open(path, 4ull << 30);
    if (!file) continue;
    std::string err;
    auto elf = parse_elf(file->bytes(), &err);
    ASSERT_TRUE(elf) << path << ": " << err;
    FatbinScanOptions opts;
    opts.deep = false;
    auto r = scan_elf_fatbins(file->bytes(), *elf, opts);
    auto all = r.target_set(FatbinReport::Scope::all);
    EXPECT_EQ(names(all, ImageKind::sass), exp.sass) << path;
    EXPECT_EQ(names(all, ImageKind::ptx), exp.ptx) << path;
    EXPECT_TRUE(r.warnings.empty()) << path << ": " << r.warnings.front();
    ++checked;
  }
  if (checked == 0) GTEST_SKIP() << "CUDA 13.0 libraries not installed in /usr/local/cuda/lib64";
}

TEST(DoctorFatbinRealLibs, DeepScanFindsKernelsOutsideNvFatbin) {
  auto expected = parse_deep(read_all(kInventory));
  ASSERT_GE(expected.size(), 3u) << "inventory not parsed";
  int checked = 0;
  for (const auto& [path, sections] : expected) {
    auto file = MappedFile::open(path, 4ull << 30);
    if (!file) continue;
    auto elf = parse_elf(file->bytes());
    ASSERT_TRUE(elf) << path;
    auto r = scan_elf_fatbins(file->bytes(), *elf, {});
    EXPECT_FALSE(r.truncated) << path;
    std::set<std::string> found, listed;
    for (const auto& sec : r.sections) found.insert(sec.name);
    for (const auto& [section, exp] : sections) listed.insert(section);
    EXPECT_EQ(found, listed) << path << ": containers found in unexpected sections (false hits?)";
    for (const auto& [section, exp] : sections) {
      auto got = r.targets_in(section);
      EXPECT_EQ(names(got, ImageKind::sass), exp.sass) << path << " " << section;
      EXPECT_EQ(names(got, ImageKind::ptx), exp.ptx) << path << " " << section;
    }
    ++checked;
  }
  if (checked == 0) GTEST_SKIP() << "CUDA 13.0 libraries not installed in /usr/local/cuda/lib64";
}

TEST(DoctorFatbinRealLibs, CudnnPtxIsaIs91) {
  const std::string path = "/usr/local/cuda/lib64/libcudnn_engines_precompiled.so.9";
  auto file = MappedFile::open(path, 4ull << 30);
  if (!file) GTEST_SKIP() << path << " not installed";
  auto elf = parse_elf(file->bytes());
  ASSERT_TRUE(elf);
  FatbinScanOptions opts;
  opts.deep = false;
  auto r = scan_elf_fatbins(file->bytes(), *elf, opts);
  auto isa = r.max_ptx_isa(FatbinReport::Scope::registered);
  ASSERT_TRUE(isa);
  EXPECT_EQ(isa->str(), "9.1");
  EXPECT_EQ(r.containers, 1379u);
}
