// Tables with one row per enumerator (a digest's name, width and function; a mode's parts),
// checked when they compile. What lists the enumerators is a switch without a default, which
// -Wswitch holds to every enumerator; OneRowPerEnumerator then wants a row for each of them. So a
// new enumerator fails to compile until its switch case and its row are written, where a
// ternary would have given it another enumerator's meaning. Thread-safe (constexpr).
#pragma once

#include <cstddef>

namespace gridcast {

// Whether `rows` has exactly one row (its enumerator in the member `kField`) for each value of
// 0..255 that `is_enumerator` accepts, and none for any other value. REQUIRES: the enum's values
// lie in 0..255.
template <auto kField, typename Row, size_t N, typename Enum>
constexpr bool OneRowPerEnumerator(const Row (&rows)[N], bool (*is_enumerator)(Enum)) {
  for (int value = 0; value < 256; ++value) {
    int listed = 0;
    for (const Row& row : rows) listed += static_cast<int>(row.*kField) == value ? 1 : 0;
    if (listed != (is_enumerator(static_cast<Enum>(value)) ? 1 : 0)) return false;
  }
  return true;
}

}  // namespace gridcast
