#include "collectives/planners/all_to_all_mesh2d.h"

#include "collectives/planners/planner_util.h"

namespace gridcast {
namespace {

class Grid {
 public:
  explicit Grid(int p) : p_(p) {
    while (cols_ * cols_ < p) ++cols_;
    rows_ = (p + cols_ - 1) / cols_;
  }
  int Row(int member) const { return member / cols_; }
  int Col(int member) const { return member % cols_; }
  // The member at (row, col), or -1 for a hole.
  int At(int row, int col) const {
    const int member = row * cols_ + col;
    return member < p_ ? member : -1;
  }

  // Who in column `col` receives the row phase of a message from `sender`: its row peer, or
  // for a hole the paper's stand-in (sender's column mod (rows - 1), col). Holes only occur in
  // the last row, and then rows >= 2, so the stand-in is in a full row.
  int RowTarget(int sender, int col) const {
    const int peer = At(Row(sender), col);
    return peer >= 0 ? peer : At(Col(sender) % (rows_ - 1), col);
  }

  // `member` sends to the rest of its column, rows below it first (wrapping).
  void AddColumn(int member, Tree& tree) const {
    for (int step = 1; step < rows_; ++step) {
      const int peer = At((Row(member) + step) % rows_, Col(member));
      if (peer >= 0) tree[member].push_back(peer);
    }
  }

  int cols() const { return cols_; }

 private:
  int p_;
  int cols_ = 1;
  int rows_ = 1;
};

}  // namespace

Result<Plan> AllToAllMesh2dPlanner::MakePlan(const NetworkModel& net, uint64_t payload_bytes,
                                             const PlanOptions& options) const {
  return AllToAllPlan(net, payload_bytes, options, name(), [](int p, int root) {
    const Grid grid(p);
    Tree tree(p);
    for (int step = 1; step < grid.cols(); ++step) {
      const int col = (grid.Col(root) + step) % grid.cols();
      const int target = grid.RowTarget(root, col);
      tree[root].push_back(target);
      grid.AddColumn(target, tree);
    }
    grid.AddColumn(root, tree);
    return tree;
  });
}

}  // namespace gridcast
