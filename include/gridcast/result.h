// Result<T>: a value or a non-OK Status (abseil's StatusOr, without abseil).
//
// There is deliberately no default constructor, so `return {};` cannot pass for success.
#pragma once

#include <cassert>
#include <utility>
#include <variant>

#include "status.h"  // beside this header, in the tree and where installed

namespace gridcast {

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : data_(std::in_place_index<1>, std::move(value)) {}  // NOLINT: implicit by design
  Result(Status status) : data_(std::in_place_index<0>, std::move(status)) {  // NOLINT
    assert(!std::get<0>(data_).ok() && "Result needs a value or a non-OK status");
  }

  bool ok() const { return data_.index() == 1; }
  const Status& status() const {
    static const Status kOk;
    return ok() ? kOk : std::get<0>(data_);
  }

  // REQUIRES: ok().
  T& value() & { assert(ok()); return std::get<1>(data_); }
  const T& value() const& { assert(ok()); return std::get<1>(data_); }
  T&& value() && { assert(ok()); return std::get<1>(std::move(data_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

 private:
  std::variant<Status, T> data_;
};

}  // namespace gridcast

#define GRIDCAST_CONCAT_INNER_(a, b) a##b
#define GRIDCAST_CONCAT_(a, b) GRIDCAST_CONCAT_INNER_(a, b)
#define GRIDCAST_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                                     \
  if (!tmp.ok()) return tmp.status();                    \
  lhs = std::move(tmp).value()

// `GRIDCAST_ASSIGN_OR_RETURN(auto x, MakeX());` declares x from a Result or returns its error.
#define GRIDCAST_ASSIGN_OR_RETURN(lhs, expr) \
  GRIDCAST_ASSIGN_OR_RETURN_IMPL_(GRIDCAST_CONCAT_(gridcast_result_, __LINE__), lhs, expr)
