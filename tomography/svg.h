// RenderSvg: a picture of a reconstruction. Left, the aggregated similarity matrix as a
// heatmap, rows and columns ordered by cluster with each cluster's block outlined (flagged
// nodes last, outside every block); right, the cluster graph: a circle per cluster with its
// size and per-node rate, and a line per pair of clusters labelled with the estimated Mbit/s
// in each direction. Pure string generation: a standalone SVG 1.1 document, names escaped.
// Pure; thread-safe.
#pragma once

#include <string>

#include "tomography/reconstruct.h"

namespace gridcast {

std::string RenderSvg(const TomographyResult& result);

}  // namespace gridcast
