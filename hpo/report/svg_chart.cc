#include "hpo/report/svg_chart.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace tunefleet {
namespace hpo {
namespace {

// Pixel coordinates with one decimal: small files, no visible rounding.
std::string N(double v) { return absl::StrFormat("%.1f", v); }

// Ticks of a linear axis: multiples of 1, 2 or 5 x 10^k, about `want` of them in [lo, hi].
std::vector<double> LinearTicks(double lo, double hi, int want) {
  std::vector<double> ticks;
  if (!(hi > lo)) return {lo};
  const double raw = (hi - lo) / want;
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  double step = mag;
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    step = m * mag;
    if (step >= raw) break;
  }
  for (double t = std::ceil(lo / step) * step; t <= hi + step * 1e-9; t += step) {
    ticks.push_back(std::abs(t) < step * 1e-9 ? 0.0 : t);
  }
  return ticks;
}

// Ticks of a log axis: the decades in [lo, hi], with 2x and 5x (or every integer multiple)
// when the range spans few decades.
std::vector<double> LogTicks(double lo, double hi) {
  const int first = static_cast<int>(std::floor(std::log10(lo)));
  const int last = static_cast<int>(std::ceil(std::log10(hi)));
  const int decades = last - first;
  std::vector<double> mults = {1};
  if (decades <= 1) {
    mults = {1, 2, 3, 4, 5, 6, 7, 8, 9};
  } else if (decades <= 3) {
    mults = {1, 2, 5};
  } else if (decades <= 5) {
    mults = {1, 3};
  }
  std::vector<double> ticks;
  for (int e = first; e <= last; ++e) {
    for (double m : mults) {
      const double t = m * std::pow(10.0, e);
      if (t >= lo * (1 - 1e-9) && t <= hi * (1 + 1e-9)) ticks.push_back(t);
    }
  }
  return ticks;
}

// A log axis's tick: "1e-5", "3e-4" (all below 1 and from 1e4 on in this form, so a row of
// them reads alike); "2", "64", "500" in between.
std::string LogTickText(double v) {
  if (v >= 1 && v < 1e4) return absl::StrFormat("%g", v);
  if (v == 0 || !std::isfinite(v)) return ShortNumber(v);
  int e = static_cast<int>(std::floor(std::log10(std::abs(v)) + 1e-9));
  return absl::StrCat(absl::StrFormat("%.2g", v / std::pow(10.0, e)), "e", e);
}

}  // namespace

std::string EscapeHtml(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
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
        out += "&#39;";
        break;
      // "://" as "&#58;//": shows the same, and the page holds no "://" even where a journal
      // text quotes a URL.
      case ':':
        out += text.compare(i + 1, 2, "//") == 0 ? "&#58;" : ":";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string ShortNumber(double v) {
  if (!std::isfinite(v)) return std::isnan(v) ? "NaN" : (v > 0 ? "inf" : "-inf");
  if (v == 0 || (std::abs(v) >= 1e-3 && std::abs(v) < 1e6)) return absl::StrFormat("%.6g", v);
  // Mantissa and exponent: "1e-5", "3.16e-4", "2e6".
  int e = static_cast<int>(std::floor(std::log10(std::abs(v))));
  std::string m = absl::StrFormat("%.3g", v / std::pow(10.0, e));
  if (m == "10" || m == "-10") {
    ++e;
    m = absl::StrFormat("%.3g", v / std::pow(10.0, e));
  }
  return absl::StrCat(m, "e", e);
}

std::pair<double, double> PaddedRange(const std::vector<double>& values, AxisScale scale,
                                      double pad) {
  const bool log = scale == AxisScale::kLog;
  double lo = INFINITY, hi = -INFINITY;
  for (double v : values) {
    if (!std::isfinite(v) || (log && v <= 0)) continue;
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  if (lo > hi) return log ? std::make_pair(1e-5, 1e-3) : std::make_pair(0.0, 1.0);
  if (log) {
    double llo = std::log10(lo), lhi = std::log10(hi);
    if (lhi - llo < 1e-9) {
      llo -= 0.5;
      lhi += 0.5;
    }
    const double span = lhi - llo;
    return {std::pow(10.0, llo - pad * span), std::pow(10.0, lhi + pad * span)};
  }
  if (hi - lo < 1e-12 * std::max(1.0, std::abs(hi))) {
    const double half = std::abs(lo) > 0 ? std::abs(lo) * 0.05 : 0.5;
    return {lo - half, hi + half};
  }
  const double span = hi - lo;
  return {lo - pad * span, hi + pad * span};
}

SvgChart::SvgChart(int width, int height, Axis x, Axis y, int left_margin)
    : width_(width), height_(height), x_(std::move(x)), y_(std::move(y)), left_(left_margin) {
  for (Axis* a : {&x_, &y_}) {
    if (a->scale == AxisScale::kCategory) {
      a->lo = -0.5;
      a->hi = static_cast<double>(std::max<size_t>(1, a->categories.size())) - 0.5;
    } else if (a->scale == AxisScale::kLog && !(a->lo > 0 && a->hi > a->lo)) {
      a->lo = 1e-5;
      a->hi = 1e-3;
    } else if (!(a->hi > a->lo)) {
      a->hi = a->lo + 1;
    }
    if (!a->format) a->format = a->scale == AxisScale::kLog ? LogTickText : ShortNumber;
  }
  if (x_.label.empty()) bottom_ = 28;
}

double SvgChart::Px(double x) const {
  const double x0 = left_, x1 = width_ - right_;
  double f = x_.scale == AxisScale::kLog
                 ? (std::log10(x) - std::log10(x_.lo)) / (std::log10(x_.hi) - std::log10(x_.lo))
                 : (x - x_.lo) / (x_.hi - x_.lo);
  f = std::clamp(f, 0.0, 1.0);
  return x0 + f * (x1 - x0);
}

double SvgChart::Py(double y) const {
  const double y0 = height_ - bottom_, y1 = top_;
  double f;
  if (y_.scale == AxisScale::kCategory) {
    f = 1.0 - (y - y_.lo) / (y_.hi - y_.lo);  // position 0 at the top
  } else if (y_.scale == AxisScale::kLog) {
    f = (std::log10(y) - std::log10(y_.lo)) / (std::log10(y_.hi) - std::log10(y_.lo));
  } else {
    f = (y - y_.lo) / (y_.hi - y_.lo);
  }
  f = std::clamp(f, 0.0, 1.0);
  return y0 + f * (y1 - y0);
}

void SvgChart::Line(const std::vector<std::pair<double, double>>& points, const std::string& color,
                    const std::string& title, double width, const std::string& css_class) {
  std::string pts;
  int n = 0;
  for (const auto& [x, y] : points) {
    if (!std::isfinite(x) || !std::isfinite(y) || (x_.scale == AxisScale::kLog && x <= 0)) continue;
    absl::StrAppend(&pts, n++ == 0 ? "" : " ", N(Px(x)), ",", N(Py(y)));
  }
  if (n == 0) return;
  absl::StrAppend(&body_, "<polyline",
                  css_class.empty() ? "" : " class=\"" + EscapeHtml(css_class) + "\"", " points=\"",
                  pts, "\" fill=\"none\" stroke=\"", EscapeHtml(color), "\" stroke-width=\"",
                  N(width), "\"><title>", EscapeHtml(title), "</title></polyline>\n");
}

std::string SvgChart::MarkerSvg(double px, double py, Marker marker,
                                const std::string& color) const {
  const std::string c = EscapeHtml(color);
  switch (marker) {
    case Marker::kDot:
      return absl::StrCat("<circle cx=\"", N(px), "\" cy=\"", N(py), "\" r=\"5\" fill=\"", c,
                          "\" stroke=\"#fff\" stroke-width=\"1\"/>");
    case Marker::kRing:
      return absl::StrCat("<circle cx=\"", N(px), "\" cy=\"", N(py),
                          "\" r=\"4.5\" fill=\"#fff\" stroke=\"", c, "\" stroke-width=\"1.8\"/>");
    case Marker::kCross:
      return absl::StrCat("<path d=\"M", N(px - 4), " ", N(py - 4), "L", N(px + 4), " ", N(py + 4),
                          "M", N(px - 4), " ", N(py + 4), "L", N(px + 4), " ", N(py - 4),
                          "\" stroke=\"", c, "\" stroke-width=\"2.2\" fill=\"none\"/>");
    case Marker::kSquare:
      return absl::StrCat("<rect x=\"", N(px - 3.5), "\" y=\"", N(py - 3.5),
                          "\" width=\"7\" height=\"7\" fill=\"#fff\" stroke=\"", c,
                          "\" stroke-width=\"1.8\"/>");
    case Marker::kBlock:
      return absl::StrCat("<rect x=\"", N(px - 5), "\" y=\"", N(py - 5),
                          "\" width=\"10\" height=\"10\" rx=\"2\" fill=\"", c, "\"/>");
    case Marker::kStar: {
      std::string pts;
      for (int i = 0; i < 10; ++i) {
        const double r = i % 2 == 0 ? 9.0 : 3.8;
        const double a = -M_PI / 2 + i * M_PI / 5;
        absl::StrAppend(&pts, i == 0 ? "" : " ", N(px + r * std::cos(a)), ",",
                        N(py + r * std::sin(a)));
      }
      return absl::StrCat("<polygon points=\"", pts, "\" fill=\"", c,
                          "\" stroke=\"#333\" stroke-width=\"1\"/>");
    }
  }
  return "";
}

void SvgChart::Point(double x, double y, Marker marker, const std::string& color,
                     const std::string& title, const std::string& href) {
  if (!std::isfinite(x) || !std::isfinite(y) || (x_.scale == AxisScale::kLog && x <= 0) ||
      (y_.scale == AxisScale::kLog && y <= 0)) {
    return;
  }
  std::string g = absl::StrCat("<g class=\"pt\"><title>", EscapeHtml(title), "</title>",
                               MarkerSvg(Px(x), Py(y), marker, color), "</g>");
  if (!href.empty() && href[0] == '#') {
    g = absl::StrCat("<a href=\"", EscapeHtml(href), "\">", g, "</a>");
  }
  absl::StrAppend(&body_, g, "\n");
}

void SvgChart::Bar(double x0, double x1, double y, double thickness, const std::string& color,
                   const std::string& title, const std::string& label, const std::string& href) {
  if (!std::isfinite(x0) || !std::isfinite(x1) || !std::isfinite(y)) return;
  const double band = (height_ - bottom_ - top_) / (y_.hi - y_.lo);
  const double h = std::clamp(thickness, 0.05, 1.0) * band;
  const double px0 = Px(std::min(x0, x1));
  const double w = std::max(1.5, Px(std::max(x0, x1)) - px0);
  const double cy = Py(y);
  std::string g = absl::StrCat("<g class=\"bar\"><title>", EscapeHtml(title), "</title><rect x=\"",
                               N(px0), "\" y=\"", N(cy - h / 2), "\" width=\"", N(w),
                               "\" height=\"", N(h), "\" rx=\"2\" fill=\"", EscapeHtml(color),
                               "\" stroke=\"#fff\" stroke-width=\"0.8\"/>");
  // About 6.5 px per character of the 11 px labels.
  if (!label.empty() && w > 6.5 * static_cast<double>(label.size()) + 6 && h >= 11) {
    absl::StrAppend(&g, "<text class=\"in\" x=\"", N(px0 + w / 2), "\" y=\"", N(cy + 4),
                    "\" text-anchor=\"middle\">", EscapeHtml(label), "</text>");
  }
  g += "</g>";
  if (!href.empty() && href[0] == '#') {
    g = absl::StrCat("<a href=\"", EscapeHtml(href), "\">", g, "</a>");
  }
  absl::StrAppend(&body_, g, "\n");
}

void SvgChart::Legend(const std::string& label, Marker marker, const std::string& color) {
  legend_.push_back({label, {marker, color}});
}

std::string SvgChart::Ticks() const {
  std::string out;
  const double x0 = left_, x1 = width_ - right_, y0 = height_ - bottom_, y1 = top_;
  auto ticks = [](const Axis& a) {
    std::vector<double> t;
    if (!a.ticks.empty()) {
      for (double v : a.ticks) {
        if (v >= a.lo && v <= a.hi) t.push_back(v);
      }
    } else if (a.scale == AxisScale::kCategory) {
      for (size_t i = 0; i < a.categories.size(); ++i) t.push_back(static_cast<double>(i));
    } else if (a.scale == AxisScale::kLog) {
      t = LogTicks(a.lo, a.hi);
    } else {
      t = LinearTicks(a.lo, a.hi, 6);
    }
    return t;
  };
  auto label = [](const Axis& a, double v) {
    if (a.scale == AxisScale::kCategory) {
      const size_t i = static_cast<size_t>(std::lround(v));
      return i < a.categories.size() ? a.categories[i] : std::string();
    }
    return a.format(v);
  };
  // x ticks: thin them when their labels would collide.
  std::vector<double> xt = ticks(x_);
  size_t widest = 1;
  for (double v : xt) widest = std::max(widest, label(x_, v).size());
  const double room = (x1 - x0) / std::max<size_t>(1, xt.size());
  const size_t every = std::max<size_t>(
      1, static_cast<size_t>(std::ceil((6.5 * static_cast<double>(widest) + 8) / room)));
  for (size_t i = 0; i < xt.size(); ++i) {
    const double px = Px(xt[i]);
    if (x_.scale != AxisScale::kCategory) {
      absl::StrAppend(&out, "<line class=\"gl\" x1=\"", N(px), "\" y1=\"", N(y1), "\" x2=\"", N(px),
                      "\" y2=\"", N(y0), "\"/>");
    }
    if (i % every != 0) continue;
    absl::StrAppend(&out, "<text x=\"", N(px), "\" y=\"", N(y0 + 15), "\" text-anchor=\"middle\">",
                    EscapeHtml(label(x_, xt[i])), "</text>");
  }
  for (double v : ticks(y_)) {
    const double py = Py(v);
    if (y_.scale != AxisScale::kCategory) {
      absl::StrAppend(&out, "<line class=\"gl\" x1=\"", N(x0), "\" y1=\"", N(py), "\" x2=\"", N(x1),
                      "\" y2=\"", N(py), "\"/>");
    }
    absl::StrAppend(&out, "<text x=\"", N(x0 - 6), "\" y=\"", N(py + 4), "\" text-anchor=\"end\">",
                    EscapeHtml(label(y_, v)), "</text>");
  }
  absl::StrAppend(&out, "<rect class=\"frame\" x=\"", N(x0), "\" y=\"", N(y1), "\" width=\"",
                  N(x1 - x0), "\" height=\"", N(y0 - y1), "\"/>");
  if (!x_.label.empty()) {
    absl::StrAppend(&out, "<text class=\"axis\" x=\"", N((x0 + x1) / 2), "\" y=\"",
                    N(height_ - 6.0), "\" text-anchor=\"middle\">", EscapeHtml(x_.label),
                    "</text>");
  }
  if (!y_.label.empty()) {
    absl::StrAppend(&out, "<text class=\"axis\" transform=\"translate(13,", N((y0 + y1) / 2),
                    ") rotate(-90)\" text-anchor=\"middle\">", EscapeHtml(y_.label), "</text>");
  }
  return out;
}

std::string SvgChart::Render() const {
  std::string out = absl::StrCat("<svg class=\"chart\" width=\"", width_, "\" height=\"", height_,
                                 "\" viewBox=\"0 0 ", width_, " ", height_, "\" role=\"img\">\n",
                                 Ticks(), "\n", body_, "</svg>\n");
  if (!legend_.empty()) {
    out += "<div class=\"legend\">";
    for (const auto& [label, mark] : legend_) {
      absl::StrAppend(&out, "<span><svg width=\"18\" height=\"18\" viewBox=\"0 0 18 18\">",
                      MarkerSvg(9, 9, mark.first, mark.second), "</svg>", EscapeHtml(label),
                      "</span>");
    }
    out += "</div>\n";
  }
  return out;
}

}  // namespace hpo
}  // namespace tunefleet
