// ELF64 little-endian reader: section headers and the dynamic section, every offset checked.
#include "strata/doctor/elf.hpp"

#include "byte_reader.hpp"

namespace strata::doctor {

using detail::in_range;
using detail::read_cstr;
using detail::read_le;

namespace {

constexpr std::int64_t kDtNull = 0, kDtNeeded = 1, kDtStrtab = 5, kDtStrsz = 10, kDtSoname = 14, kDtRpath = 15,
                       kDtRunpath = 29;
constexpr std::uint32_t kPtLoad = 1, kPtDynamic = 2;

std::vector<std::string> split_colon(const std::string& s) {
  std::vector<std::string> out;
  std::size_t i = 0;
  while (i <= s.size()) {
    std::size_t j = s.find(':', i);
    if (j == std::string::npos) j = s.size();
    out.push_back(s.substr(i, j - i));
    i = j + 1;
  }
  return out;
}

struct DynamicTable {
  std::uint64_t offset = 0, size = 0;     // file range of the Elf64_Dyn array
  std::uint64_t strtab_off = 0, strtab_size = 0;
  bool strtab_known = false;
};

// Maps a virtual address to a file offset through the PT_LOAD segments.
std::optional<std::uint64_t> vaddr_to_offset(std::span<const std::uint8_t> b, std::uint64_t phoff, std::uint16_t phnum,
                                             std::uint16_t phentsize, std::uint64_t vaddr) {
  for (std::uint16_t i = 0; i < phnum; ++i) {
    std::uint64_t p = phoff + std::uint64_t(i) * phentsize;
    auto type = read_le<std::uint32_t>(b, p);
    auto off = read_le<std::uint64_t>(b, p + 8);
    auto va = read_le<std::uint64_t>(b, p + 16);
    auto filesz = read_le<std::uint64_t>(b, p + 32);
    if (!type || !off || !va || !filesz) return std::nullopt;
    if (*type == kPtLoad && vaddr >= *va && vaddr - *va < *filesz) return *off + (vaddr - *va);
  }
  return std::nullopt;
}

}  // namespace

const ElfSection* ElfInfo::section(std::string_view name) const {
  for (const auto& s : sections)
    if (s.name == name) return &s;
  return nullptr;
}

bool looks_like_elf(std::span<const std::uint8_t> b) {
  return b.size() >= 4 && b[0] == 0x7f && b[1] == 'E' && b[2] == 'L' && b[3] == 'F';
}

std::optional<ElfInfo> parse_elf(std::span<const std::uint8_t> b, std::string* error, const ElfLimits& limits) {
  auto fail = [&](const char* why) -> std::optional<ElfInfo> {
    if (error) *error = why;
    return std::nullopt;
  };
  if (b.size() < 64 || !looks_like_elf(b)) return fail("not an ELF file");
  if (b[4] != 2) return fail("32-bit ELF is not supported");
  if (b[5] != 1) return fail("big-endian ELF is not supported");
  ElfInfo info;
  info.osabi = b[7];
  info.abi_version = b[8];
  info.type = *read_le<std::uint16_t>(b, 16);
  info.machine = *read_le<std::uint16_t>(b, 18);
  const std::uint64_t phoff = *read_le<std::uint64_t>(b, 32);
  const std::uint64_t shoff = *read_le<std::uint64_t>(b, 40);
  info.e_flags = *read_le<std::uint32_t>(b, 48);
  const std::uint16_t phentsize = *read_le<std::uint16_t>(b, 54);
  const std::uint16_t phnum = *read_le<std::uint16_t>(b, 56);
  const std::uint16_t shentsize = *read_le<std::uint16_t>(b, 58);
  std::uint64_t shnum = *read_le<std::uint16_t>(b, 60);
  std::uint32_t shstrndx = *read_le<std::uint16_t>(b, 62);

  DynamicTable dyn;
  bool have_dynamic = false;
  if (shoff != 0) {
    if (shentsize < 64) return fail("section header entry too small");
    // Extended numbering: a zero count or SHN_XINDEX index lives in section header 0.
    if (shnum == 0 || shstrndx == 0xffff) {
      auto s0size = read_le<std::uint64_t>(b, shoff + 32);
      auto s0link = read_le<std::uint32_t>(b, shoff + 40);
      if (!s0size || !s0link) return fail("section header table out of range");
      if (shnum == 0) shnum = *s0size;
      if (shstrndx == 0xffff) shstrndx = *s0link;
    }
    if (shnum > limits.max_sections) return fail("too many sections");
    if (!in_range(b.size(), shoff, shnum * shentsize)) return fail("section header table out of range");
    // Section names come from the section-name string table.
    std::uint64_t names_off = 0, names_size = 0;
    if (shstrndx < shnum) {
      std::uint64_t h = shoff + std::uint64_t(shstrndx) * shentsize;
      names_off = *read_le<std::uint64_t>(b, h + 24);
      names_size = *read_le<std::uint64_t>(b, h + 32);
      if (!in_range(b.size(), names_off, names_size)) names_size = 0;
    }
    auto names = names_size ? b.subspan(names_off, names_size) : std::span<const std::uint8_t>{};
    info.sections.reserve(std::size_t(shnum));
    for (std::uint64_t i = 0; i < shnum; ++i) {
      std::uint64_t h = shoff + i * shentsize;
      ElfSection s;
      std::uint32_t name_off = *read_le<std::uint32_t>(b, h);
      s.type = *read_le<std::uint32_t>(b, h + 4);
      s.flags = *read_le<std::uint64_t>(b, h + 8);
      s.addr = *read_le<std::uint64_t>(b, h + 16);
      s.offset = *read_le<std::uint64_t>(b, h + 24);
      s.size = *read_le<std::uint64_t>(b, h + 32);
      std::uint32_t link = *read_le<std::uint32_t>(b, h + 40);
      // Section names are short; a small cap keeps many sections sharing one long string cheap.
      s.name = read_cstr(names, name_off, 256).value_or("");
      if (s.type == kShtDynamic && !have_dynamic && in_range(b.size(), s.offset, s.size) && link < shnum) {
        std::uint64_t lh = shoff + std::uint64_t(link) * shentsize;
        dyn.offset = s.offset;
        dyn.size = s.size;
        dyn.strtab_off = *read_le<std::uint64_t>(b, lh + 24);
        dyn.strtab_size = *read_le<std::uint64_t>(b, lh + 32);
        dyn.strtab_known = in_range(b.size(), dyn.strtab_off, dyn.strtab_size);
        have_dynamic = true;
      }
      info.sections.push_back(std::move(s));
    }
  }
  // Without section headers (stripped by sstrip, or hand-made): find PT_DYNAMIC instead.
  if (!have_dynamic && phoff != 0 && phentsize >= 56 && in_range(b.size(), phoff, std::uint64_t(phnum) * phentsize)) {
    for (std::uint16_t i = 0; i < phnum; ++i) {
      std::uint64_t p = phoff + std::uint64_t(i) * phentsize;
      if (*read_le<std::uint32_t>(b, p) != kPtDynamic) continue;
      dyn.offset = *read_le<std::uint64_t>(b, p + 8);
      dyn.size = *read_le<std::uint64_t>(b, p + 32);
      have_dynamic = in_range(b.size(), dyn.offset, dyn.size);
      break;
    }
  }
  if (!have_dynamic) return info;

  // First pass: locate the string table if the section headers did not give it.
  std::uint64_t count = std::min<std::uint64_t>(dyn.size / 16, limits.max_dynamic_entries);
  if (!dyn.strtab_known) {
    std::optional<std::uint64_t> strtab_va, strsz;
    for (std::uint64_t i = 0; i < count; ++i) {
      std::int64_t tag = *read_le<std::int64_t>(b, dyn.offset + i * 16);
      std::uint64_t val = *read_le<std::uint64_t>(b, dyn.offset + i * 16 + 8);
      if (tag == kDtNull) break;
      if (tag == kDtStrtab) strtab_va = val;
      if (tag == kDtStrsz) strsz = val;
    }
    if (strtab_va && strsz && phoff != 0) {
      if (auto off = vaddr_to_offset(b, phoff, phnum, phentsize, *strtab_va); off && in_range(b.size(), *off, *strsz)) {
        dyn.strtab_off = *off;
        dyn.strtab_size = *strsz;
        dyn.strtab_known = true;
      }
    }
  }
  if (!dyn.strtab_known) return info;
  auto strtab = b.subspan(dyn.strtab_off, dyn.strtab_size);
  // Entries may all point at one long string: bound the total copied, not just each string.
  std::size_t copied = 0;
  for (std::uint64_t i = 0; i < count && copied < limits.max_total_strings; ++i) {
    std::int64_t tag = *read_le<std::int64_t>(b, dyn.offset + i * 16);
    std::uint64_t val = *read_le<std::uint64_t>(b, dyn.offset + i * 16 + 8);
    if (tag == kDtNull) break;
    if (tag != kDtNeeded && tag != kDtSoname && tag != kDtRpath && tag != kDtRunpath) continue;
    auto s = read_cstr(strtab, val, limits.max_string);
    if (!s) continue;
    copied += s->size() + 1;
    switch (tag) {
      case kDtNeeded: info.needed.push_back(*s); break;
      case kDtSoname: info.soname = *s; break;
      case kDtRpath: info.rpath = split_colon(*s); info.has_rpath = true; break;
      case kDtRunpath: info.runpath = split_colon(*s); info.has_runpath = true; break;
      default: break;
    }
  }
  return info;
}

int cubin_sm(const ElfInfo& cubin) {
  if (cubin.abi_version >= 8) return int((cubin.e_flags >> 8) & 0xff);
  return int(cubin.e_flags & 0xff);
}

}  // namespace strata::doctor
