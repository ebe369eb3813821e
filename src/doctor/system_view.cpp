// SystemView: file access relative to an injectable root, with sizes bounded everywhere.
#include "strata/doctor/system_view.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

extern char** environ;

namespace strata::doctor {

// ---- MappedFile ----------------------------------------------------------------------------

MappedFile::MappedFile(MappedFile&& o) noexcept : data_(o.data_), size_(o.size_), mapped_(o.mapped_) {
  o.data_ = nullptr;
  o.size_ = 0;
  o.mapped_ = false;
}

MappedFile& MappedFile::operator=(MappedFile&& o) noexcept {
  if (this != &o) {
    this->~MappedFile();
    new (this) MappedFile(std::move(o));
  }
  return *this;
}

MappedFile::~MappedFile() {
  if (mapped_ && data_) munmap(const_cast<std::uint8_t*>(data_), size_);
}

std::optional<MappedFile> MappedFile::open(const std::string& host_path, std::uint64_t max_bytes, std::string* error) {
  auto fail = [&](std::string why) -> std::optional<MappedFile> {
    if (error) *error = host_path + ": " + why;
    return std::nullopt;
  };
  int fd = ::open(host_path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return fail(std::strerror(errno));
  struct stat st {};
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return fail("not a regular file");
  }
  if (std::uint64_t(st.st_size) > max_bytes) {
    ::close(fd);
    return fail("larger than the " + std::to_string(max_bytes >> 20) + " MiB limit");
  }
  MappedFile f;
  f.size_ = std::size_t(st.st_size);
  if (f.size_ > 0) {
    void* p = mmap(nullptr, f.size_, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
      ::close(fd);
      return fail(std::string("mmap: ") + std::strerror(errno));
    }
    f.data_ = static_cast<const std::uint8_t*>(p);
    f.mapped_ = true;
  }
  ::close(fd);
  return f;
}

// ---- paths ---------------------------------------------------------------------------------

std::string path_join(std::string_view dir, std::string_view name) {
  if (name.starts_with('/')) return std::string(name);
  std::string out(dir);
  if (out.empty() || out.back() != '/') out += '/';
  out += name;
  return out;
}

std::string path_dirname(std::string_view path) {
  auto pos = path.rfind('/');
  if (pos == std::string_view::npos) return ".";
  if (pos == 0) return "/";
  return std::string(path.substr(0, pos));
}

std::string path_basename(std::string_view path) {
  auto pos = path.rfind('/');
  return std::string(pos == std::string_view::npos ? path : path.substr(pos + 1));
}

std::string path_normalize(std::string_view path) {
  std::vector<std::string_view> parts;
  std::size_t i = 0;
  while (i < path.size()) {
    std::size_t j = path.find('/', i);
    if (j == std::string_view::npos) j = path.size();
    std::string_view part = path.substr(i, j - i);
    if (part == "..") {
      if (!parts.empty()) parts.pop_back();
    } else if (!part.empty() && part != ".") {
      parts.push_back(part);
    }
    i = j + 1;
  }
  std::string out;
  for (auto p : parts) {
    out += '/';
    out += p;
  }
  return out.empty() ? "/" : out;
}

// ---- SystemView ----------------------------------------------------------------------------

SystemView::SystemView(std::string root, Env env) : root_(std::move(root)), env_(std::move(env)) {
  while (root_.size() > 1 && root_.back() == '/') root_.pop_back();
  if (root_.empty()) root_ = "/";
}

SystemView SystemView::live() {
  Env env;
  for (char** e = environ; e && *e; ++e) {
    std::string_view kv(*e);
    auto eq = kv.find('=');
    if (eq != std::string_view::npos) env.emplace(std::string(kv.substr(0, eq)), std::string(kv.substr(eq + 1)));
  }
  return SystemView("/", std::move(env));
}

std::string SystemView::raw_host_path(std::string_view path) const {
  std::string norm = path_normalize(path);
  if (root_ == "/") return norm;
  return norm == "/" ? root_ : root_ + norm;
}

std::string SystemView::host_path(std::string_view path) const {
  if (root_ == "/") return path_normalize(path);
  if (auto real = canonical(path)) return raw_host_path(*real);
  // A missing file: resolve the directory part so the caller's error names the right place.
  if (auto dir = canonical(path_dirname(path))) return raw_host_path(path_join(*dir, path_basename(path)));
  return raw_host_path(path);
}

static std::optional<std::string> read_fd(int fd, std::size_t max_bytes) {
  std::string out;
  char buf[65536];
  while (out.size() < max_bytes) {
    ssize_t n = ::read(fd, buf, std::min(sizeof buf, max_bytes - out.size()));
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EPIPE) break;  // /dev/kmsg: end of buffer / overwritten record
      return out.empty() ? std::nullopt : std::optional<std::string>(out);
    }
    if (n == 0) break;
    out.append(buf, std::size_t(n));
  }
  return out;
}

std::optional<std::string> SystemView::read_text(std::string_view path, std::size_t max_bytes) const {
  int fd = ::open(host_path(path).c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return std::nullopt;
  struct stat st {};
  if (fstat(fd, &st) != 0 || S_ISDIR(st.st_mode)) {
    ::close(fd);
    return std::nullopt;
  }
  auto out = read_fd(fd, max_bytes);
  ::close(fd);
  return out;
}

std::optional<std::string> SystemView::read_tail(std::string_view path, std::size_t max_bytes) const {
  int fd = ::open(host_path(path).c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return std::nullopt;
  struct stat st {};
  if (fstat(fd, &st) != 0 || S_ISDIR(st.st_mode)) {
    ::close(fd);
    return std::nullopt;
  }
  std::optional<std::string> out;
  if (S_ISREG(st.st_mode)) {
    if (std::uint64_t(st.st_size) > max_bytes) lseek(fd, off_t(st.st_size - off_t(max_bytes)), SEEK_SET);
    out = read_fd(fd, max_bytes);
  } else {
    // A record device such as /dev/kmsg: read everything available (bounded), keep the tail.
    out = read_fd(fd, max_bytes * 4);
    if (out && out->size() > max_bytes) out = out->substr(out->size() - max_bytes);
  }
  ::close(fd);
  return out;
}

bool SystemView::exists(std::string_view path) const {
  struct stat st {};
  return ::stat(host_path(path).c_str(), &st) == 0;
}

bool SystemView::is_dir(std::string_view path) const {
  struct stat st {};
  return ::stat(host_path(path).c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool SystemView::is_regular(std::string_view path) const {
  struct stat st {};
  return ::stat(host_path(path).c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

std::vector<DirEntry> SystemView::list_dir(std::string_view path, std::size_t max_entries) const {
  std::vector<DirEntry> out;
  std::string dir = host_path(path);
  DIR* d = ::opendir(dir.c_str());
  if (!d) return out;
  while (dirent* e = ::readdir(d)) {
    std::string name = e->d_name;
    if (name == "." || name == "..") continue;
    DirEntry de{name, false, false};
    struct stat st {};
    std::string full = dir + "/" + name;
    if (::lstat(full.c_str(), &st) == 0) {
      de.is_symlink = S_ISLNK(st.st_mode);
      if (de.is_symlink) {
        // Judge the target inside the view, not on the host.
        de.is_dir = is_dir(path_join(path, name));
      } else {
        de.is_dir = S_ISDIR(st.st_mode);
      }
    }
    out.push_back(std::move(de));
    if (out.size() >= max_entries) break;
  }
  ::closedir(d);
  std::sort(out.begin(), out.end(), [](const DirEntry& a, const DirEntry& b) { return a.name < b.name; });
  return out;
}

std::optional<std::string> SystemView::canonical(std::string_view path) const {
  // Walk component by component, expanding symlinks against the view's root (at most 40
  // expansions, as Linux allows).
  std::vector<std::string> todo;
  {
    std::string norm = path_normalize(path);
    std::size_t i = 1;
    while (i <= norm.size()) {
      std::size_t j = norm.find('/', i);
      if (j == std::string::npos) j = norm.size();
      if (j > i) todo.push_back(norm.substr(i, j - i));
      i = j + 1;
    }
  }
  std::reverse(todo.begin(), todo.end());
  std::string cur = "/";
  int links = 0;
  while (!todo.empty()) {
    const std::string part = todo.back();  // a copy: GCC 12 misreports the moved-from string
    todo.pop_back();
    if (part == ".") continue;
    if (part == "..") {
      cur = path_dirname(cur);
      continue;
    }
    std::string next = path_join(cur, part);
    std::string host = raw_host_path(next);
    struct stat st {};
    if (::lstat(host.c_str(), &st) != 0) return std::nullopt;
    if (S_ISLNK(st.st_mode)) {
      if (++links > 40) return std::nullopt;
      char buf[4096];
      ssize_t n = ::readlink(host.c_str(), buf, sizeof buf - 1);
      if (n < 0) return std::nullopt;
      std::string target(buf, std::size_t(n));
      std::vector<std::string> parts;
      std::size_t i = 0;
      while (i <= target.size()) {
        std::size_t j = target.find('/', i);
        if (j == std::string::npos) j = target.size();
        if (j > i) parts.push_back(target.substr(i, j - i));
        i = j + 1;
      }
      for (auto it = parts.rbegin(); it != parts.rend(); ++it) todo.push_back(*it);
      if (target.starts_with('/')) cur = "/";
      continue;
    }
    cur = next;
  }
  return cur;
}

std::optional<MappedFile> SystemView::map(std::string_view path, std::uint64_t max_bytes, std::string* error) const {
  return MappedFile::open(host_path(path), max_bytes, error);
}

std::optional<std::string> SystemView::env(std::string_view name) const {
  auto it = env_.find(std::string(name));
  if (it == env_.end()) return std::nullopt;
  return it->second;
}

std::vector<std::string> SystemView::env_list(std::string_view name) const {
  std::vector<std::string> out;
  auto v = env(name);
  if (!v || v->empty()) return out;
  std::size_t i = 0;
  while (i <= v->size()) {
    std::size_t j = v->find(':', i);
    if (j == std::string::npos) j = v->size();
    std::string item = v->substr(i, j - i);
    out.push_back(item.empty() ? "." : item);
    i = j + 1;
  }
  return out;
}

}  // namespace strata::doctor
