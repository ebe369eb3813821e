#include "strata/core/status.hpp"

namespace strata {

const char* status_name(Status s) noexcept {
  switch (s) {
    case Status::success: return "success";
    case Status::invalid_argument: return "invalid_argument";
    case Status::not_supported: return "not_supported";
    case Status::out_of_memory: return "out_of_memory";
    case Status::insufficient_workspace: return "insufficient_workspace";
    case Status::device_error: return "device_error";
    case Status::internal_error: return "internal_error";
  }
  return "unknown";
}

static std::string format_message(Status s, const std::string& argument, const std::string& message) {
  std::string out = "strata: ";
  out += status_name(s);
  if (!argument.empty()) out += " (argument '" + argument + "')";
  out += ": " + message;
  return out;
}

Error::Error(Status status, std::string argument, const std::string& message)
    : std::runtime_error(format_message(status, argument, message)),
      status_(status), argument_(std::move(argument)) {}

void throw_error(Status status, std::string_view argument, std::string_view message) {
  throw Error(status, std::string(argument), std::string(message));
}

}  // namespace strata
