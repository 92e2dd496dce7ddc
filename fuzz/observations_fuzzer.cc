// Observations JSON (tomography's input: `gridcast tomography` reads files users bring).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "tomography/observations.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  gridcast::Result<gridcast::Observations> one = gridcast::ObservationsFromJson(text);
  if (one.ok()) {
    if (!gridcast::ValidateObservations(*one).ok()) __builtin_trap();  // parsing validates
    // What parses writes back to JSON that parses to an equal value.
    gridcast::Result<gridcast::Observations> again = gridcast::ObservationsFromJson(gridcast::ObservationsToJson(*one));
    if (!again.ok() || !(*again == *one)) __builtin_trap();
  }
  (void)gridcast::ObservationRunsFromJson(text);
  return 0;
}
