#include "common/spelling.h"

#include <algorithm>

namespace gridcast {

size_t EditDistance(const std::string& a, const std::string& b) {
  // Three rows of the dynamic programme: two letters swapped count as one edit (as typos go).
  std::vector<size_t> before(b.size() + 1), previous(b.size() + 1), row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) previous[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      row[j] = std::min({previous[j] + 1, row[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) row[j] = std::min(row[j], before[j - 2] + 1);
    }
    before.swap(previous);
    previous.swap(row);
  }
  return previous[b.size()];
}

std::string NearestName(const std::string& typed, const std::vector<std::string>& known) {
  std::string nearest;
  size_t best = std::min<size_t>(3, (typed.size() + 1) / 2);  // closer than this
  for (const std::string& name : known) {
    const size_t distance = EditDistance(typed, name);
    if (name.empty() || distance >= best) continue;
    best = distance;
    nearest = name;
  }
  return nearest;
}

std::string DidYouMean(const std::string& typed, const std::vector<std::string>& known) {
  const std::string nearest = NearestName(typed, known);
  return nearest.empty() ? "" : " (did you mean '" + nearest + "'?)";
}

std::string UnknownOption(const std::vector<std::string>& args, const std::vector<std::string>& known_options) {
  for (const std::string& arg : args) {
    if (arg == "--") break;  // what follows is not options
    if (arg.size() <= 2 || arg.rfind("--", 0) != 0) continue;
    const std::string name = arg.substr(0, arg.find('='));
    if (std::find(known_options.begin(), known_options.end(), name) == known_options.end()) {
      return "unknown option '" + name + "'" + DidYouMean(name, known_options);
    }
  }
  return "";
}

}  // namespace gridcast
