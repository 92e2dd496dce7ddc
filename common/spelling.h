// "Did you mean": the known name nearest to a mistyped one, for errors about unknown keys and
// commands.
#pragma once

#include <string>
#include <vector>

namespace gridcast {

// Edits (insertions, deletions, substitutions, two neighbours swapped) from `a` to `b`.
size_t EditDistance(const std::string& a, const std::string& b);

// The name of `known` nearest to `typed`, when at most two edits away (and fewer than half of
// `typed`); else empty.
std::string NearestName(const std::string& typed, const std::vector<std::string>& known);

// " (did you mean 'NAME'?)" for the nearest name, else "".
std::string DidYouMean(const std::string& typed, const std::vector<std::string>& known);

// For a command line its parser refused: "unknown option '--windw' (did you mean '--window'?)"
// for the first of `args` that looks like a long option ("--name" or "--name=value") and is not
// one of `known_options` ("--name" each); empty when every one is known.
std::string UnknownOption(const std::vector<std::string>& args, const std::vector<std::string>& known_options);

}  // namespace gridcast
