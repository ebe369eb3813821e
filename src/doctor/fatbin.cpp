// Fatbin container walker and searcher (layout in docs/doctor.md and FATBIN.md): reads only the
// container and entry headers, validates every size against its enclosing range, and stops at
// the limits in FatbinLimits so hostile input costs bounded time and memory.
#include "strata/doctor/fatbin.hpp"

#include <cstring>

#include "byte_reader.hpp"

namespace strata::doctor {

using detail::in_range;
using detail::read_le;

namespace {

constexpr std::uint64_t kFlagLz4 = 0x2000, kFlagZstd = 0x8000, kFlagArchSpecific = 0x100000,
                        kFlagFamily = 0x200000;
constexpr std::uint32_t kMinEntryHeader = 64;
constexpr std::uint32_t kStrictMaxEntryHeader = 512;  // candidates found by searching must look sane

struct EntryHeader {
  std::uint16_t kind = 0;
  std::uint32_t header_size = 0;
  std::uint64_t size = 0;
  std::uint16_t minor = 0, major = 0;
  std::uint32_t arch = 0;
  std::uint64_t flags = 0;
};

std::optional<EntryHeader> read_entry(std::span<const std::uint8_t> b, std::uint64_t at) {
  if (!in_range(b.size(), at, kMinEntryHeader)) return std::nullopt;
  EntryHeader e;
  e.kind = *read_le<std::uint16_t>(b, at);
  e.header_size = *read_le<std::uint32_t>(b, at + 0x04);
  e.size = *read_le<std::uint64_t>(b, at + 0x08);
  e.minor = *read_le<std::uint16_t>(b, at + 0x18);
  e.major = *read_le<std::uint16_t>(b, at + 0x1a);
  e.arch = *read_le<std::uint32_t>(b, at + 0x1c);
  e.flags = *read_le<std::uint64_t>(b, at + 0x28);
  return e;
}

bool known_kind(std::uint16_t k) { return k == 1 || k == 2 || k == 8; }

class Scanner {
 public:
  Scanner(FatbinReport& report, const FatbinLimits& limits) : r_(report), lim_(limits) {}

  // Validates the container at `pos` of `sec` and, when `record`, adds its entries.
  // Returns the container's total size, or 0 if it is not a valid container.
  std::uint64_t container(std::span<const std::uint8_t> sec, std::uint64_t pos, bool strict, const std::string& name,
                          bool record) {
    auto magic = read_le<std::uint32_t>(sec, pos);
    auto version = read_le<std::uint16_t>(sec, pos + 4);
    auto hdr = read_le<std::uint16_t>(sec, pos + 6);
    auto fat_size = read_le<std::uint64_t>(sec, pos + 8);
    if (!magic || *magic != kFatbinMagic || !fat_size) return 0;
    if (strict && (*version != 1 || *hdr != 16 || *fat_size == 0)) return 0;
    if (*hdr < 16 || !in_range(sec.size(), pos, std::uint64_t(*hdr)) || !in_range(sec.size() - pos, *hdr, *fat_size)) {
      if (!strict) warn(name, pos, "container size runs past the end of the section");
      return 0;
    }
    const std::uint64_t begin = pos + *hdr, end = begin + *fat_size;
    auto body = sec.subspan(0, end);
    // Pass 1 validates, pass 2 records: a half-valid candidate adds nothing.
    for (int pass = strict ? 0 : 1; pass < 2; ++pass) {
      std::uint64_t at = begin;
      while (at < end) {
        if (end - at < kMinEntryHeader) break;  // trailing padding
        auto e = read_entry(body, at);
        if (!e || e->kind == 0) break;
        const std::uint32_t max_hdr = strict ? kStrictMaxEntryHeader : lim_.max_entry_header;
        if (!known_kind(e->kind) || e->header_size < kMinEntryHeader || e->header_size > max_hdr ||
            !in_range(end - at, e->header_size, e->size)) {
          if (pass == 0) return 0;
          warn(name, at, "malformed entry header; rest of the container skipped");
          break;
        }
        if (pass == 1 && record) {
          if (r_.entries >= lim_.max_entries) {
            r_.truncated = true;
            return *hdr + *fat_size;
          }
          add(*e, name);
        }
        at += e->header_size + e->size;
      }
    }
    return *hdr + *fat_size;
  }

  // .nv_fatbin / __nv_relfatbin: containers back to back, possibly separated by zero padding.
  void walk(std::span<const std::uint8_t> sec, const std::string& name) {
    SectionScan& s = section(name, true);
    std::uint64_t pos = 0;
    while (pos + 16 <= sec.size()) {
      if (r_.containers >= lim_.max_containers || r_.truncated) {
        r_.truncated = true;
        return;
      }
      auto magic = read_le<std::uint32_t>(sec, pos);
      if (magic == kFatbinMagic) {
        std::uint64_t before = r_.entries;
        std::uint64_t size = container(sec, pos, false, name, true);
        if (size == 0) return;  // warned; nothing after a broken size can be trusted
        ++r_.containers;
        ++s.containers;
        s.entries += r_.entries - before;
        pos += size;
        continue;
      }
      if (read_le<std::uint64_t>(sec, pos) == 0u) {
        pos += 8;
        continue;
      }
      // Unknown bytes: resynchronise at the next magic.
      std::uint64_t next = find_magic(sec, pos + 1);
      if (next == sec.size()) break;
      warn(name, pos, "bytes between containers skipped");
      pos = next;
    }
  }

  // Other sections: search for the magic and accept only candidates that validate strictly.
  void search(std::span<const std::uint8_t> sec, const std::string& name) {
    std::uint64_t pos = 0;
    while (pos + 16 <= sec.size()) {
      if (scanned_ + (sec.size() - pos) > lim_.max_scan_bytes || r_.containers >= lim_.max_containers ||
          r_.truncated) {
        r_.truncated = true;
        return;
      }
      std::uint64_t hit = find_magic(sec, pos);
      if (hit + 16 > sec.size()) break;
      std::uint64_t size = container(sec, hit, true, name, false);
      if (size == 0) {
        scanned_ += hit + 1 - pos;
        pos = hit + 1;
        continue;
      }
      std::uint64_t before = r_.entries;
      container(sec, hit, true, name, true);
      SectionScan& s = section(name, false);
      ++s.containers;
      ++r_.containers;
      s.entries += r_.entries - before;
      scanned_ += hit + size - pos;
      pos = hit + size;
    }
    scanned_ += sec.size() > pos ? sec.size() - pos : 0;
  }

 private:
  static std::uint64_t find_magic(std::span<const std::uint8_t> sec, std::uint64_t from) {
    static constexpr std::uint8_t kMagicBytes[4] = {0x50, 0xed, 0x55, 0xba};
    if (from >= sec.size()) return sec.size();
    const void* p = memmem(sec.data() + from, sec.size() - from, kMagicBytes, 4);
    return p ? std::uint64_t(static_cast<const std::uint8_t*>(p) - sec.data()) : sec.size();
  }

  void add(const EntryHeader& e, const std::string& section_name) {
    ImageTarget t;
    t.kind = e.kind == 1 ? ImageKind::ptx : e.kind == 2 ? ImageKind::sass : ImageKind::ltoir;
    t.arch = int(e.arch);
    t.variant = (e.flags & kFlagArchSpecific) ? ArchVariant::a : (e.flags & kFlagFamily) ? ArchVariant::f : ArchVariant::plain;
    TargetStats& st = r_.targets[t];
    ++st.entries;
    ++r_.entries;
    if (e.flags & kFlagZstd) ++st.compressed_zstd;
    else if (e.flags & kFlagLz4) ++st.compressed_lz4;
    Version v;
    v.parts = {int(e.major), int(e.minor)};
    if (st.max_version < v) st.max_version = v;
    if (st.sections.size() < 64) st.sections.insert(section_name);
  }

  SectionScan& section(const std::string& name, bool walked) {
    for (auto& s : r_.sections)
      if (s.name == name) return s;
    r_.sections.push_back({name, 0, 0, walked});
    return r_.sections.back();
  }

  void warn(const std::string& name, std::uint64_t pos, const char* what) {
    if (r_.warnings.size() < 32) r_.warnings.push_back(name + "+0x" + hex(pos) + ": " + what);
  }

  static std::string hex(std::uint64_t v) {
    char buf[24];
    std::snprintf(buf, sizeof buf, "%llx", static_cast<unsigned long long>(v));
    return buf;
  }

  FatbinReport& r_;
  const FatbinLimits& lim_;
  std::uint64_t scanned_ = 0;
};

bool in_scope(const std::set<std::string>& sections, FatbinReport::Scope scope) {
  if (scope == FatbinReport::Scope::all) return true;
  for (const auto& s : sections) {
    if (scope == FatbinReport::Scope::registered && s == ".nv_fatbin") return true;
    if (scope == FatbinReport::Scope::runnable && s != "__nv_relfatbin") return true;
  }
  return false;
}

}  // namespace

std::string ImageTarget::name() const {
  std::string out = kind == ImageKind::sass ? "sm_" : kind == ImageKind::ptx ? "compute_" : "lto_";
  out += std::to_string(arch);
  if (variant == ArchVariant::a) out += 'a';
  if (variant == ArchVariant::f) out += 'f';
  return out;
}

std::set<ImageTarget> FatbinReport::target_set(Scope scope) const {
  std::set<ImageTarget> out;
  for (const auto& [t, st] : targets)
    if (in_scope(st.sections, scope)) out.insert(t);
  return out;
}

std::set<ImageTarget> FatbinReport::targets_in(std::string_view section) const {
  std::set<ImageTarget> out;
  for (const auto& [t, st] : targets)
    if (st.sections.count(std::string(section))) out.insert(t);
  return out;
}

std::string FatbinReport::listing(ImageKind kind, Scope scope) const {
  std::string out;
  for (const auto& t : target_set(scope)) {
    if (t.kind != kind) continue;
    if (!out.empty()) out += ' ';
    out += t.name();
  }
  return out;
}

std::optional<Version> FatbinReport::max_ptx_isa(Scope scope) const {
  std::optional<Version> best;
  for (const auto& [t, st] : targets)
    if (t.kind == ImageKind::ptx && in_scope(st.sections, scope) && (!best || *best < st.max_version)) best = st.max_version;
  return best;
}

FatbinReport scan_elf_fatbins(std::span<const std::uint8_t> file, const ElfInfo& elf, const FatbinScanOptions& options) {
  FatbinReport report;
  Scanner scanner(report, options.limits);
  auto section_bytes = [&](const ElfSection& s) -> std::optional<std::span<const std::uint8_t>> {
    if (s.type == kShtNobits || s.type == 0 || !in_range(file.size(), s.offset, s.size) || s.size == 0) return std::nullopt;
    return file.subspan(s.offset, s.size);
  };
  for (const auto& s : elf.sections)
    if (s.name == ".nv_fatbin" || s.name == "__nv_relfatbin")
      if (auto bytes = section_bytes(s)) scanner.walk(*bytes, s.name);
  if (options.deep)
    for (const auto& s : elf.sections)
      if (s.name != ".nv_fatbin" && s.name != "__nv_relfatbin")
        if (auto bytes = section_bytes(s)) scanner.search(*bytes, s.name);
  return report;
}

FatbinReport scan_raw_fatbin(std::span<const std::uint8_t> bytes, const FatbinLimits& limits) {
  FatbinReport report;
  Scanner scanner(report, limits);
  scanner.walk(bytes, "<fatbin>");
  return report;
}

FatbinReport scan_any(std::span<const std::uint8_t> bytes, const FatbinScanOptions& options, std::string* error) {
  if (looks_like_elf(bytes)) {
    auto elf = parse_elf(bytes, error);
    if (!elf) return {};
    return scan_elf_fatbins(bytes, *elf, options);
  }
  if (read_le<std::uint32_t>(bytes, 0) == kFatbinMagic) return scan_raw_fatbin(bytes, options.limits);
  if (error) *error = "neither an ELF file nor a fatbin";
  return {};
}

}  // namespace strata::doctor
