#include "tomography/svg.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <numbers>

namespace gridcast {
namespace {

std::string Escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string Num(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.4g", value);
  return buffer;
}

std::string Mbit(double bps) { return bps > 0 ? Num(bps / 1e6) + " Mbit/s" : "n/a"; }

// White (0) to dark blue (1).
std::string Shade(double fraction) {
  fraction = std::clamp(fraction, 0.0, 1.0);
  const int r = static_cast<int>(std::lround(255 - 227 * fraction));
  const int g = static_cast<int>(std::lround(255 - 175 * fraction));
  const int b = static_cast<int>(std::lround(255 - 95 * fraction));
  char buffer[16];
  std::snprintf(buffer, sizeof buffer, "#%02x%02x%02x", r, g, b);
  return buffer;
}

std::string Text(double x, double y, const std::string& text, const std::string& attributes = "") {
  return "<text x=\"" + Num(x) + "\" y=\"" + Num(y) + "\"" + attributes + ">" + Escape(text) +
         "</text>\n";
}

}  // namespace

// Stays whole: one picture drawn top to bottom, whose parts share every coordinate.
std::string RenderSvg(const TomographyResult& result) {
  const Similarity& sim = result.similarity;
  std::map<std::string, int> index;
  for (size_t i = 0; i < sim.names.size(); ++i) index[sim.names[i]] = static_cast<int>(i);
  std::vector<int> order;  // matrix rows: clusters in result order, then flagged nodes
  for (const auto& cluster : result.clusters) {
    for (const std::string& name : cluster) order.push_back(index.at(name));
  }
  for (const FlaggedNode& f : result.flagged) order.push_back(index.at(f.name));

  const int n = static_cast<int>(order.size());
  const double cell = n > 0 ? std::clamp(480.0 / n, 4.0, 24.0) : 24.0;
  const double label_w = 130, top = 150, matrix = cell * n;
  const double graph_x = label_w + matrix + 60, graph_w = 520;
  const double flagged_h = 14.0 * static_cast<double>(result.flagged.size());
  const double width = graph_x + graph_w, height = top + std::max(matrix, 420.0 + flagged_h) + 40;
  const bool labels = cell >= 8;

  std::string svg = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  svg += "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"" + Num(width) +
         "\" height=\"" + Num(height) + "\" font-family=\"sans-serif\" font-size=\"11\">\n";
  svg += "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  svg += Text(10, 20,
              "gridcast tomography: " + std::to_string(result.runs) + " runs, " +
                  std::to_string(result.clusters.size()) + " clusters, " +
                  std::to_string(result.flagged.size()) + " flagged",
              " font-size=\"14\"");

  double peak = 0;
  for (int i : order) {
    for (int j : order) peak = std::max(peak, sim.weight.at(i, j));
  }
  svg += "<g id=\"heatmap\">\n";
  for (int r = 0; r < n; ++r) {
    const double y = top + r * cell;
    if (labels) {
      svg += Text(label_w - 4, y + cell * 0.75, sim.names[order[r]], " text-anchor=\"end\"");
      svg += Text(0, 0, sim.names[order[r]],
                  " transform=\"translate(" + Num(label_w + r * cell + cell * 0.75) + "," +
                      Num(top - 4) + ") rotate(-90)\"");
    }
    for (int c = 0; c < n; ++c) {
      const double w = sim.weight.at(order[r], order[c]);
      svg += "<rect x=\"" + Num(label_w + c * cell) + "\" y=\"" + Num(y) + "\" width=\"" +
             Num(cell) + "\" height=\"" + Num(cell) + "\" fill=\"" +
             Shade(peak > 0 ? w / peak : 0) + "\"/>\n";
    }
  }
  double start = 0;
  for (const auto& cluster : result.clusters) {
    const double size = cell * static_cast<double>(cluster.size());
    svg += "<rect x=\"" + Num(label_w + start) + "\" y=\"" + Num(top + start) + "\" width=\"" +
           Num(size) + "\" height=\"" + Num(size) +
           "\" fill=\"none\" stroke=\"#d62728\" stroke-width=\"2\"/>\n";
    start += size;
  }
  svg += "</g>\n";

  // Cluster graph: clusters on a circle, biggest first at the top.
  const size_t k = result.clusters.size();
  const double cx = graph_x + graph_w / 2, cy = top + 200, ring = k > 1 ? 150.0 : 0.0;
  std::vector<std::pair<double, double>> at;
  for (size_t c = 0; c < k; ++c) {
    const double angle = 2 * std::numbers::pi * static_cast<double>(c) / static_cast<double>(k) -
                         std::numbers::pi / 2;
    at.emplace_back(cx + ring * std::cos(angle), cy + ring * std::sin(angle));
  }
  svg += "<g id=\"clusters\">\n";
  for (size_t a = 0; a < k; ++a) {
    for (size_t b = a + 1; b < k; ++b) {
      const auto [x1, y1] = at[a];
      const auto [x2, y2] = at[b];
      svg += "<line x1=\"" + Num(x1) + "\" y1=\"" + Num(y1) + "\" x2=\"" + Num(x2) + "\" y2=\"" +
             Num(y2) + "\" stroke=\"#888\" stroke-width=\"1.5\"/>\n";
      svg += Text((x1 + x2) / 2, (y1 + y2) / 2 - 4,
                  "C" + std::to_string(a + 1) + "->C" + std::to_string(b + 1) + " " +
                      Mbit(result.inter_cluster_bps[a][b]),
                  " text-anchor=\"middle\"");
      svg += Text((x1 + x2) / 2, (y1 + y2) / 2 + 10,
                  "C" + std::to_string(b + 1) + "->C" + std::to_string(a + 1) + " " +
                      Mbit(result.inter_cluster_bps[b][a]),
                  " text-anchor=\"middle\"");
    }
  }
  for (size_t c = 0; c < k; ++c) {
    const auto [x, y] = at[c];
    svg += "<circle cx=\"" + Num(x) + "\" cy=\"" + Num(y) +
           "\" r=\"42\" fill=\"#c6dbef\" stroke=\"#08519c\"/>\n";
    svg += Text(
        x, y - 8,
        "C" + std::to_string(c + 1) + ": " + std::to_string(result.clusters[c].size()) + " nodes",
        " text-anchor=\"middle\"");
    svg += Text(x, y + 8, Mbit(result.intra_cluster_bps[c]), " text-anchor=\"middle\"");
    svg += Text(x, y + 21, "per node", " text-anchor=\"middle\"");
  }
  double y = cy + ring + 70;
  for (const FlaggedNode& f : result.flagged) {
    svg += Text(graph_x, y, "flagged " + f.name + ": " + f.reason);
    y += 14;
  }
  svg += "</g>\n</svg>\n";
  return svg;
}

}  // namespace gridcast
