// hpo/report/svg_chart.h: escaping, number text, ranges, and a chart that never draws outside its
// plot area, never writes a non-finite coordinate and links only to "#..." anchors.
#include "hpo/report/svg_chart.h"

#include <cmath>
#include <string>

#include "gtest/gtest.h"

namespace tunefleet {
namespace hpo {
namespace {

TEST(EscapeHtmlTest, EscapesMarkupQuotesAndUrlSchemes) {
  EXPECT_EQ(EscapeHtml("<a href=\"x\">'&'</a>"),
            "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;");
  EXPECT_EQ(EscapeHtml("see https://x.org/a"), "see https&#58;//x.org/a");
  EXPECT_EQ(EscapeHtml("local:0-3 a:b"), "local:0-3 a:b");
  EXPECT_EQ(EscapeHtml("ends with :"), "ends with :");
}

TEST(ShortNumberTest, FewCharacters) {
  EXPECT_EQ(ShortNumber(0), "0");
  EXPECT_EQ(ShortNumber(0.25), "0.25");
  EXPECT_EQ(ShortNumber(5749), "5749");
  EXPECT_EQ(ShortNumber(0.30000000000000004), "0.3");
  EXPECT_EQ(ShortNumber(1e-5), "1e-5");
  EXPECT_EQ(ShortNumber(3.16e-4), "3.16e-4");
  EXPECT_EQ(ShortNumber(2e6), "2e6");
  EXPECT_EQ(ShortNumber(NAN), "NaN");
}

TEST(PaddedRangeTest, IgnoresNonFiniteAndWidensDegenerateRanges) {
  auto [lo, hi] = PaddedRange({0.5, 0.7, NAN, INFINITY}, AxisScale::kLinear, 0.0);
  EXPECT_DOUBLE_EQ(lo, 0.5);
  EXPECT_DOUBLE_EQ(hi, 0.7);
  auto [llo, lhi] = PaddedRange({1e-4, -1, 0}, AxisScale::kLog, 0.0);
  EXPECT_LT(llo, 1e-4);
  EXPECT_GT(lhi, 1e-4);
  auto [elo, ehi] = PaddedRange({}, AxisScale::kLinear);
  EXPECT_LT(elo, ehi);
}

TEST(SvgChartTest, DrawsInsideThePlotAreaAndLinksOnlyToAnchors) {
  SvgChart chart(400, 200, {AxisScale::kLog, 1e-5, 1e-3, "lr"}, {AxisScale::kLinear, 0, 1, "m"});
  chart.Line({{1e-5, 0.1}, {NAN, 0.5}, {1e-4, INFINITY}, {1e-3, 0.9}}, "#123456", "t<1>");
  chart.Point(1e-9, 5, Marker::kDot, "#000", "far", "#trial-1");       // clamped into the area
  chart.Point(1e-4, NAN, Marker::kRing, "#000", "nan");                // not drawn
  chart.Point(1e-4, 0.5, Marker::kCross, "#000", "x", "http://evil");  // drawn, not linked
  const std::string svg = chart.Render();
  EXPECT_NE(svg.find("<title>t&lt;1&gt;</title>"), std::string::npos);
  EXPECT_EQ(svg.find("nan"), std::string::npos);
  EXPECT_EQ(svg.find("inf"), std::string::npos);
  EXPECT_EQ(svg.find("evil"), std::string::npos);
  EXPECT_NE(svg.find("<a href=\"#trial-1\">"), std::string::npos);
  EXPECT_EQ(svg.find("<title>nan"), std::string::npos);
  // The clamped point sits on the plot area's corner (left margin 64, top margin 14).
  EXPECT_NE(svg.find("cx=\"64.0\" cy=\"14.0\""), std::string::npos) << svg;
  // Decade ticks of a log axis, in exponent form.
  for (const char* tick : {">1e-5<", ">1e-4<", ">1e-3<"}) {
    EXPECT_NE(svg.find(tick), std::string::npos) << tick;
  }
}

TEST(SvgChartTest, LegendAndBars) {
  Axis y{AxisScale::kCategory, 0, 0, ""};
  y.categories = {"a:0", "a:1"};
  SvgChart chart(300, 120, {AxisScale::kLinear, 0, 100, "s"}, y);
  chart.Bar(0, 50, 1, 0.7, "#0a0", "trial 1", "#1", "#trial-1");
  chart.Legend("COMPLETE <ok>", Marker::kBlock, "#0a0");
  const std::string svg = chart.Render();
  EXPECT_NE(svg.find(">a:0</text>"), std::string::npos);
  EXPECT_NE(svg.find(">#1</text>"), std::string::npos);
  EXPECT_NE(svg.find("COMPLETE &lt;ok&gt;</span>"), std::string::npos);
}

}  // namespace
}  // namespace hpo
}  // namespace tunefleet
