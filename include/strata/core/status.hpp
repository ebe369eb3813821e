// Status codes and the exception every strata C++ API throws.
#pragma once
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>

namespace strata {

enum class Status {
  success = 0,
  invalid_argument,       // a caller-supplied value is out of its domain
  not_supported,          // valid request this build / CPU / device cannot serve
  out_of_memory,
  insufficient_workspace, // the workspace given is smaller than the plan needs
  device_error,           // a device runtime call failed
  internal_error,
};

const char* status_name(Status s) noexcept;

// strata::Error carries a Status, the name of the offending argument (may be empty) and a
// sentence a user can act on.
class Error : public std::runtime_error {
 public:
  Error(Status status, std::string argument, const std::string& message);
  Status status() const noexcept { return status_; }
  const std::string& argument() const noexcept { return argument_; }

 private:
  Status status_;
  std::string argument_;
};

[[noreturn]] void throw_error(Status status, std::string_view argument, std::string_view message);

// Argument check used at every public entry point: throws invalid_argument naming `argument`.
inline void check_arg(bool ok, std::string_view argument, std::string_view message) {
  if (!ok) throw_error(Status::invalid_argument, argument, message);
}
// The same with a message that is formatted (sizes, names) only when the check fails: built
// eagerly, such messages cost microseconds on every successful call of a small operation.
template <class Message, class = std::enable_if_t<std::is_invocable_v<Message>>>
inline void check_arg(bool ok, std::string_view argument, Message&& message) {
  if (!ok) throw_error(Status::invalid_argument, argument, std::string(message()));
}

}  // namespace strata
