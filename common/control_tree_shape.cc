#include "common/control_tree_shape.h"

#include <cstdint>

namespace gridcast {

int ControlParent(int member, int fanout) { return member == 0 ? -1 : (member - 1) / fanout; }

std::vector<int> ControlChildren(int member, int members, int fanout) {
  std::vector<int> children;
  const int64_t first = int64_t{fanout} * member + 1;
  for (int64_t c = first; c < first + fanout && c < members; ++c) children.push_back(static_cast<int>(c));
  return children;
}

std::vector<int> ControlSubtree(int member, int members, int fanout) {
  std::vector<int> subtree = {member};
  for (size_t i = 0; i < subtree.size(); ++i) {
    for (int c : ControlChildren(subtree[i], members, fanout)) subtree.push_back(c);
  }
  return subtree;
}

}  // namespace gridcast
