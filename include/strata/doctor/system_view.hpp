// SystemView: everything the doctor reads about a machine goes through here, so a test can point
// it at a fixture tree (fake /proc, /sys, /etc/ld.so.cache, library dirs) and a made-up
// environment, and the live system is just root "/" plus the process environment.
#pragma once
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace strata::doctor {

// A read-only view of a whole file: memory-mapped when possible, so scanning a 500 MB library
// costs page faults rather than a copy.
class MappedFile {
 public:
  MappedFile() = default;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  MappedFile(MappedFile&& o) noexcept;
  MappedFile& operator=(MappedFile&& o) noexcept;
  ~MappedFile();

  // Maps `host_path` (a real path on this machine). Fails (empty result, `error` set) for
  // non-regular files and files larger than `max_bytes`.
  static std::optional<MappedFile> open(const std::string& host_path, std::uint64_t max_bytes,
                                        std::string* error = nullptr);
  std::span<const std::uint8_t> bytes() const noexcept { return {data_, size_}; }

 private:
  const std::uint8_t* data_ = nullptr;
  std::size_t size_ = 0;
  bool mapped_ = false;
};

struct DirEntry {
  std::string name;
  bool is_dir = false;
  bool is_symlink = false;
};

class SystemView {
 public:
  using Env = std::map<std::string, std::string>;

  // `root` is the directory that stands for "/"; `env` is the environment the probes see.
  SystemView(std::string root, Env env);
  // The machine the doctor runs on: root "/" and this process's environment.
  static SystemView live();

  const std::string& root() const noexcept { return root_; }
  bool is_live() const noexcept { return root_ == "/"; }
  // Path on this machine for an absolute path inside the view. For a non-live root, symlinks
  // are resolved inside the view first, so an absolute link target such as
  // /usr/local/cuda -> /usr/local/cuda-13.0 does not escape to the host.
  std::string host_path(std::string_view path) const;

  // Reads at most `max_bytes` (regular files, and pseudo-files such as /proc entries).
  std::optional<std::string> read_text(std::string_view path, std::size_t max_bytes = 1 << 20) const;
  // The last `max_bytes` of a file (logs); reads device files like /dev/kmsg without blocking.
  std::optional<std::string> read_tail(std::string_view path, std::size_t max_bytes) const;
  bool exists(std::string_view path) const;       // follows symlinks
  bool is_dir(std::string_view path) const;       // follows symlinks
  bool is_regular(std::string_view path) const;   // follows symlinks
  // Directory entries sorted by name, at most `max_entries`.
  std::vector<DirEntry> list_dir(std::string_view path, std::size_t max_entries = 20000) const;
  // Resolves symlinks the way the kernel would if the view's root were "/": absolute link
  // targets stay inside the view. Returns nullopt if the path does not exist or loops.
  std::optional<std::string> canonical(std::string_view path) const;
  std::optional<MappedFile> map(std::string_view path, std::uint64_t max_bytes, std::string* error = nullptr) const;

  std::optional<std::string> env(std::string_view name) const;
  const Env& environment() const noexcept { return env_; }
  // Splits a PATH-like variable; empty entries mean the current directory for ld.so, which we
  // report as "." (so they are visible in the evidence).
  std::vector<std::string> env_list(std::string_view name) const;

 private:
  std::string raw_host_path(std::string_view path) const;  // root + path, no link resolution
  std::string root_;
  Env env_;
};

// Path helpers for absolute, '/'-separated paths inside a view.
std::string path_join(std::string_view dir, std::string_view name);
std::string path_dirname(std::string_view path);
std::string path_basename(std::string_view path);
// Removes "." and ".." and duplicate slashes without touching the file system.
std::string path_normalize(std::string_view path);

}  // namespace strata::doctor
