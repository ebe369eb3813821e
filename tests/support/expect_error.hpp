// The check every test of bad arguments makes: the call throws strata::Error naming the argument
// (and, where given, with this status). What must stay unwritten is checked by each caller.
#pragma once
#include <gtest/gtest.h>

#include <optional>
#include <string>

#include "strata/core/status.hpp"

namespace strata::test {

template <class Call>
void expect_argument_error(const std::string& argument, Call&& call, std::optional<Status> status = std::nullopt) {
  try {
    call();
    ADD_FAILURE() << "no error for " << argument;
  } catch (const Error& e) {
    if (status) {
      EXPECT_EQ(e.status(), *status);
    }
    EXPECT_EQ(e.argument(), argument) << e.what();
  }
}

}  // namespace strata::test
