// A small inline-SVG chart for `hpo report` (hpo/report/report.h): a plot area with a linear, log
// or category axis on each side, ticks and grid lines, polylines, point markers, horizontal bars (a
// timeline's lanes), hover titles, and links to "#anchor"s of the same page; plus the HTML escaping
// the report uses for every text taken from a journal.
//
//   SvgChart chart(720, 360, {AxisScale::kLog, 1e-5, 1e-3, "lr"}, {AxisScale::kLinear, 0, 1, "r"});
//   chart.Line({{1e-5, 0.2}, {1e-4, 0.6}}, "#1f77b4", "trial 3");
//   chart.Point(1e-4, 0.6, Marker::kDot, "#1f77b4", "trial 3: 0.6", "#trial-3");
//   std::string svg = chart.Render();   // <svg ...>...</svg> and an HTML legend
//
// Guarantees: the output is self-contained SVG/HTML (no external reference of any kind; links
// are only the "#..." anchors given); every caller text (labels, titles, legend) is escaped;
// non-finite coordinates are skipped (a point, a line's vertex) and finite ones outside the
// axes are clamped to the plot area, so nothing is drawn outside it.
// Thread-safety: an SvgChart is a plain value; not thread-safe.
#ifndef TUNEFLEET_HPO_REPORT_SVG_CHART_H_
#define TUNEFLEET_HPO_REPORT_SVG_CHART_H_

#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace tunefleet {
namespace hpo {

// `text` with & < > " ' replaced by entities: safe in element content and quoted attributes;
// the ':' of "://" too (as "&#58;", which shows the same), so quoted URLs leave no "://".
std::string EscapeHtml(const std::string& text);

// `v` in few characters: "0.25", "5749", "0.001", and below 1e-3 or from 1e6 on "1e-5",
// "3.16e-4", "2e6".
std::string ShortNumber(double v);

enum class AxisScale { kLinear, kLog, kCategory };

struct Axis {
  AxisScale scale = AxisScale::kLinear;
  double lo = 0;  // data range; kLog: both > 0; kCategory: ignored (categories' indices)
  double hi = 1;
  std::string label;
  // kCategory: the labels of positions 0, 1, ... (left to right on x, top-down on y).
  std::vector<std::string> categories;
  // Tick positions; empty: automatic (1-2-5 steps; decades on a log axis; every category).
  std::vector<double> ticks;
  // Tick labels; default: ShortNumber.
  std::function<std::string(double)> format;
};

// The data range [lo, hi] of `values` (non-finite ones and, for a log axis, non-positive ones
// ignored), widened by `pad` of its span on each side (kLog: in decades); a degenerate or empty
// range becomes a small one around its value (or [0, 1], [1e-5, 1e-3] when empty).
std::pair<double, double> PaddedRange(const std::vector<double>& values, AxisScale scale,
                                      double pad = 0.05);

// kSquare is hollow; kBlock a filled square (legends of bars).
enum class Marker { kDot, kRing, kCross, kSquare, kStar, kBlock };

class SvgChart {
 public:
  // Width and height of the whole SVG in px; `left_margin` leaves room for long y labels.
  SvgChart(int width, int height, Axis x, Axis y, int left_margin = 64);

  // A polyline through `points` (data coordinates; non-finite vertices skipped), with a hover
  // title; `css_class` lets the page's stylesheet style it (e.g. "curve" for hover widening).
  void Line(const std::vector<std::pair<double, double>>& points, const std::string& color,
            const std::string& title, double width = 1.5, const std::string& css_class = "");
  // A marker at (x, y); `href` ("#trial-3") makes it a link; "" for none.
  void Point(double x, double y, Marker marker, const std::string& color, const std::string& title,
             const std::string& href = "");
  // A bar from x0 to x1 at y (a category's position), `thickness` of the category's band
  // (0..1), with `label` drawn inside when it fits.
  void Bar(double x0, double x1, double y, double thickness, const std::string& color,
           const std::string& title, const std::string& label, const std::string& href = "");
  // A legend entry under the chart.
  void Legend(const std::string& label, Marker marker, const std::string& color);

  // The y value at the bottom edge of the plot area (where failed trials are marked).
  double y_bottom() const { return y_.lo; }

  // <svg> with axes, grid, ticks, labels and everything added, then the legend (<div>).
  std::string Render() const;

 private:
  double Px(double x) const;  // data -> pixel, clamped to the plot area
  double Py(double y) const;
  std::string Ticks() const;
  std::string MarkerSvg(double px, double py, Marker marker, const std::string& color) const;

  int width_;
  int height_;
  Axis x_;
  Axis y_;
  int left_;
  int right_ = 16;
  int top_ = 14;
  int bottom_ = 44;
  std::string body_;
  std::vector<std::pair<std::string, std::pair<Marker, std::string>>> legend_;
};

}  // namespace hpo
}  // namespace tunefleet

#endif  // TUNEFLEET_HPO_REPORT_SVG_CHART_H_
