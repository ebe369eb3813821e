#pragma once
namespace strata {
const char* version_string() noexcept;  // "0.1.0"
}
