// ld.so's search order, modelled from files (glibc elf/dl-load.c behaviour, re-derived from its
// documented order; see ld.so(8)).
#include "strata/doctor/loader.hpp"

#include <cstring>

#include "byte_reader.hpp"

namespace strata::doctor {

using detail::in_range;
using detail::read_cstr;
using detail::read_le;

namespace {

constexpr char kNewMagic[] = "glibc-ld.so.cache1.1";  // 17 + 3 bytes, no NUL in the file
constexpr char kOldMagic[] = "ld.so-1.7.0";            // 11 bytes
constexpr std::size_t kNewHeader = 48, kNewEntry = 24, kOldEntry = 12;

bool flags_suit(std::int32_t flags, std::uint16_t machine) {
  const int type = flags & 0xff, arch = flags & 0xff00;
  if (type != 0x03 && type != 0x01) return false;  // FLAG_ELF_LIBC6 / FLAG_ELF
  if (machine == kEmX86_64) return arch == 0x0300;
  if (machine == kEmAarch64) return arch == 0x0a00;
  return true;
}

bool parse_new(std::span<const std::uint8_t> b, std::size_t at, LdCache& out, std::size_t max_entries) {
  if (!in_range(b.size(), at, kNewHeader) || std::memcmp(b.data() + at, kNewMagic, 20) != 0) return false;
  std::uint32_t n = *read_le<std::uint32_t>(b, at + 20);
  if (n > max_entries || !in_range(b.size() - at, kNewHeader, std::uint64_t(n) * kNewEntry)) return false;
  auto strings = b.subspan(at);  // offsets are relative to the new header
  out.format = "glibc-ld.so.cache1.1";
  // Entries may share strings: bound the bytes copied (a real cache holds well under 1 MiB).
  std::size_t copied = 0;
  for (std::uint32_t i = 0; i < n && copied < (std::size_t(64) << 20); ++i) {
    std::size_t e = at + kNewHeader + std::size_t(i) * kNewEntry;
    LdCacheEntry entry;
    entry.flags = *read_le<std::int32_t>(b, e);
    auto key = read_cstr(strings, *read_le<std::uint32_t>(b, e + 4), 4096);
    auto value = read_cstr(strings, *read_le<std::uint32_t>(b, e + 8), 4096);
    if (!key || !value) continue;
    copied += key->size() + value->size();
    entry.name = *key;
    entry.path = *value;
    out.entries.push_back(std::move(entry));
  }
  return true;
}

}  // namespace

const LdCacheEntry* LdCache::find(std::string_view name, std::uint16_t machine) const {
  for (const auto& e : entries)
    if (e.name == name && flags_suit(e.flags, machine)) return &e;
  return nullptr;
}

std::optional<LdCache> parse_ld_so_cache(std::span<const std::uint8_t> b, std::string* error, std::size_t max_entries) {
  LdCache cache;
  if (parse_new(b, 0, cache, max_entries)) return cache;
  if (b.size() >= 16 && std::memcmp(b.data(), kOldMagic, 11) == 0) {
    std::uint32_t n = *read_le<std::uint32_t>(b, 12);
    if (n <= max_entries && in_range(b.size(), 16, std::uint64_t(n) * kOldEntry)) {
      // The new format usually follows the old table, aligned to 8; prefer it.
      std::size_t after = 16 + std::size_t(n) * kOldEntry;
      std::size_t aligned = (after + 7) & ~std::size_t(7);
      if (parse_new(b, aligned, cache, max_entries)) return cache;
      auto strings = b.subspan(after);
      cache.format = "ld.so-1.7.0";
      std::size_t copied = 0;
      for (std::uint32_t i = 0; i < n && copied < (std::size_t(64) << 20); ++i) {
        std::size_t e = 16 + std::size_t(i) * kOldEntry;
        auto key = read_cstr(strings, *read_le<std::uint32_t>(b, e + 4), 4096);
        auto value = read_cstr(strings, *read_le<std::uint32_t>(b, e + 8), 4096);
        if (!key || !value) continue;
        copied += key->size() + value->size();
        cache.entries.push_back({*key, *value, *read_le<std::int32_t>(b, e)});
      }
      return cache;
    }
  }
  if (error) *error = "not an ld.so.cache file (unknown magic or truncated)";
  return std::nullopt;
}

std::string Resolution::summary() const {
  if (!path) return name + " -> not found (" + std::to_string(steps.size()) + " places tried)";
  return name + " -> " + *path + " (via " + via + ")";
}

const std::vector<std::string>& system_library_dirs(std::uint16_t machine) {
  static const std::vector<std::string> x86 = {"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib64",
                                               "/usr/lib64", "/lib", "/usr/lib"};
  static const std::vector<std::string> arm = {"/lib/aarch64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/lib64",
                                               "/usr/lib64", "/lib", "/usr/lib"};
  return machine == kEmAarch64 ? arm : x86;
}

std::string expand_dst(std::string_view dir, std::string_view origin, std::uint16_t machine) {
  std::string out;
  const std::string lib = machine == kEmAarch64 ? "lib/aarch64-linux-gnu" : "lib/x86_64-linux-gnu";
  const std::string platform = machine == kEmAarch64 ? "aarch64" : "x86_64";
  std::size_t i = 0;
  while (i < dir.size()) {
    if (dir[i] == '$') {
      auto try_token = [&](std::string_view token, std::string_view value) {
        std::string braced = "${" + std::string(token) + "}";
        std::string plain = "$" + std::string(token);
        if (dir.substr(i).starts_with(braced)) {
          out += value;
          i += braced.size();
          return true;
        }
        if (dir.substr(i).starts_with(plain)) {
          out += value;
          i += plain.size();
          return true;
        }
        return false;
      };
      if (try_token("ORIGIN", origin) || try_token("LIB", lib) || try_token("PLATFORM", platform)) continue;
    }
    out += dir[i++];
  }
  return out;
}

LoaderModel::LoaderModel(const SystemView& sys) : sys_(sys) {
#if defined(__aarch64__)
  machine_ = kEmAarch64;
#endif
  // An image of another architecture (--root on an arm64 rootfs, a Jetson fixture): its own
  // dynamic loader says which ELF machine its libraries must have.
  const bool arm = sys_.exists("/lib/ld-linux-aarch64.so.1"), x86 = sys_.exists("/lib64/ld-linux-x86-64.so.2");
  if (arm != x86) machine_ = arm ? kEmAarch64 : kEmX86_64;
  if (auto f = sys_.map("/etc/ld.so.cache", 64 << 20)) {
    if (auto c = parse_ld_so_cache(f->bytes())) {
      cache_ = std::move(*c);
      cache_present_ = true;
    }
  }
}

std::string LoaderModel::check_candidate(const std::string& path) const {
  auto head = sys_.read_text(path, 64);
  if (!head) return "absent";
  std::span<const std::uint8_t> b(reinterpret_cast<const std::uint8_t*>(head->data()), head->size());
  if (!looks_like_elf(b) || b.size() < 20) return "not ELF";
  if (b[4] != 2 || b[5] != 1 || *read_le<std::uint16_t>(b, 18) != machine_) return "wrong ELF class or machine";
  return "found";
}

std::optional<Requester> LoaderModel::load_requester(const std::string& path) const {
  auto f = sys_.map(path, 8ull << 30);
  if (!f) return std::nullopt;
  auto elf = parse_elf(f->bytes());
  if (!elf) return std::nullopt;
  auto real = sys_.canonical(path);
  return Requester{real.value_or(path), std::move(*elf)};
}

std::vector<std::pair<std::string, std::string>> LoaderModel::search_dirs(const Requester* req) const {
  std::vector<std::pair<std::string, std::string>> dirs;
  const std::string origin = req ? path_dirname(req->path) : std::string();
  auto add_list = [&](const std::vector<std::string>& list, const std::string& source) {
    for (const auto& d : list) {
      if (d.empty()) continue;
      dirs.emplace_back(path_normalize(expand_dst(d, origin, machine_)), source);
    }
  };
  if (req && req->elf.has_rpath && !req->elf.has_runpath) add_list(req->elf.rpath, "RPATH of " + req->path);
  add_list(sys_.env_list("LD_LIBRARY_PATH"), "LD_LIBRARY_PATH");
  if (req && req->elf.has_runpath) add_list(req->elf.runpath, "RUNPATH of " + req->path);
  return dirs;
}

Resolution LoaderModel::resolve(std::string_view name, const Requester* req) const {
  Resolution r;
  r.name = std::string(name);
  auto try_path = [&](const std::string& path, const std::string& dir, const std::string& source) {
    std::string result = check_candidate(path);
    r.steps.push_back({dir, source, result});
    if (result == "found") {
      r.path = path;
      r.via = source;
      return true;
    }
    return false;
  };
  if (name.find('/') != std::string_view::npos) {
    try_path(std::string(name), path_dirname(name), "explicit path");
    return r;
  }
  for (const auto& [dir, source] : search_dirs(req))
    if (try_path(path_join(dir, name), dir, source)) return r;
  if (const LdCacheEntry* e = cache_.find(name, machine_)) {
    if (try_path(e->path, path_dirname(e->path), "ld.so.cache")) return r;
  } else {
    r.steps.push_back({"/etc/ld.so.cache", "ld.so.cache", cache_present_ ? "no entry" : "cache missing"});
  }
  for (const auto& dir : system_library_dirs(machine_))
    if (try_path(path_join(dir, name), dir, "system dir")) return r;
  return r;
}

}  // namespace strata::doctor
