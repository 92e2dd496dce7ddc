// RenderSvg: a well-formed document naming every node, with names escaped.
#include "tomography/svg.h"

#include <gtest/gtest.h>

#include "tests/unit/tomography/synthetic.h"

namespace gridcast {
namespace {

// Tags balance and nest; attribute values and text hold no raw '<' or '&' (only entities).
bool WellFormed(const std::string& xml, std::string& error) {
  std::vector<std::string> open;
  size_t i = 0;
  while (i < xml.size()) {
    if (xml[i] == '&') {
      const size_t end = xml.find(';', i);
      const std::string entity = xml.substr(i, end == std::string::npos ? 0 : end - i + 1);
      if (entity != "&amp;" && entity != "&lt;" && entity != "&gt;" && entity != "&quot;" &&
          entity != "&apos;") {
        error = "bad entity at " + std::to_string(i);
        return false;
      }
      i = end + 1;
      continue;
    }
    if (xml[i] != '<') {
      if (xml[i] == '>') {
        error = "stray '>' at " + std::to_string(i);
        return false;
      }
      ++i;
      continue;
    }
    const size_t end = xml.find('>', i);
    if (end == std::string::npos) {
      error = "unterminated tag";
      return false;
    }
    std::string tag = xml.substr(i + 1, end - i - 1);
    if (tag.find('<') != std::string::npos) {
      error = "'<' inside a tag at " + std::to_string(i);
      return false;
    }
    i = end + 1;
    if (tag.front() == '?') continue;
    const bool closing = tag.front() == '/';
    const bool empty = tag.back() == '/';
    const std::string name =
        tag.substr(closing ? 1 : 0, tag.find_first_of(" /", closing ? 1 : 0) - (closing ? 1 : 0));
    if (closing) {
      if (open.empty() || open.back() != name) {
        error = "closing </" + name + "> does not match";
        return false;
      }
      open.pop_back();
    } else if (!empty) {
      open.push_back(name);
    }
  }
  if (!open.empty()) error = "unclosed <" + open.back() + ">";
  return open.empty();
}

TEST(SvgTest, WellFormedAndNamesEveryNode) {
  testing::SyntheticNetwork net = testing::TwoSites();
  net.clusters[1][3] = "b<&>\"'3";  // must be escaped
  std::vector<Observations> runs;
  for (uint64_t seed : {1, 2}) runs.push_back(testing::SyntheticRun(net, "a-0", seed));
  for (Observations& run : runs) run.members.push_back({.name = "silent"});
  Result<TomographyResult> result = Reconstruct(runs, {});
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  ASSERT_EQ(result->clusters.size(), 2u);

  const std::string svg = RenderSvg(*result);
  std::string error;
  EXPECT_TRUE(WellFormed(svg, error)) << error;
  EXPECT_EQ(svg.rfind("<?xml", 0), 0u);
  for (const auto& cluster : net.clusters) {
    for (const std::string& name : cluster) {
      if (name.find('<') != std::string::npos) continue;
      EXPECT_NE(svg.find(">" + name + "<"), std::string::npos) << name;
    }
  }
  EXPECT_NE(svg.find("b&lt;&amp;&gt;&quot;&apos;3"), std::string::npos);
  EXPECT_NE(svg.find("silent"), std::string::npos);
  EXPECT_NE(svg.find("C1: 8 nodes"), std::string::npos);
  const size_t edge = svg.find("C1-&gt;C2 ");
  ASSERT_NE(edge, std::string::npos);
  EXPECT_NEAR(std::stod(svg.substr(edge + 10)), result->inter_cluster_bps[0][1] / 1e6, 0.01);
  EXPECT_EQ(std::count(svg.begin(), svg.end(), '\n') > 16 * 16, true);  // a cell per pair

  std::string bad = "<svg><g></svg>";
  EXPECT_FALSE(WellFormed(bad, error));  // the checker can fail
}

TEST(SvgTest, EmptyResult) {
  Result<TomographyResult> none = Reconstruct({}, {});
  ASSERT_TRUE(none.ok());
  std::string error;
  EXPECT_TRUE(WellFormed(RenderSvg(*none), error)) << error;
}

}  // namespace
}  // namespace gridcast
