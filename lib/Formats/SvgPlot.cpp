//===- SvgPlot.cpp - SVG line plots ---------------------------------------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "mxfp4/Formats/SvgPlot.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iterator>
#include <limits>
#include <optional>

using namespace mlir::mxfp4;

namespace {
/// The canvas and the plot area inside it, in SVG pixels.
constexpr int kWidth = 900, kHeight = 540;
constexpr int kLeft = 76, kRight = kWidth - 24, kTop = 44,
              kBottom = kHeight - 56;

/// Matplotlib's "tab10" palette: ten colours that stay apart in print and for
/// the common forms of colour blindness.
constexpr const char *kColors[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728",
                                   "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
                                   "#bcbd22", "#17becf"};
constexpr size_t kNumColors = std::size(kColors);

/// An axis range [lo, hi] with hi > lo.
struct Range {
  double lo, hi;
};
} // namespace

namespace {
/// The SVG being written: `<<` appends text and numbers.
struct SvgText {
  std::string text;
  SvgText &operator<<(const std::string &s) {
    text += s;
    return *this;
  }
  SvgText &operator<<(const char *s) {
    text += s;
    return *this;
  }
  SvgText &operator<<(char c) {
    text += c;
    return *this;
  }
  SvgText &operator<<(int v) {
    text += std::to_string(v);
    return *this;
  }
};
} // namespace

/// Appends `text` to `os` with the XML special characters escaped.
static void writeEscaped(std::string &os, const std::string &text) {
  for (char c : text) {
    switch (c) {
    case '&':
      os += "&amp;";
      break;
    case '<':
      os += "&lt;";
      break;
    case '>':
      os += "&gt;";
      break;
    case '"':
      os += "&quot;";
      break;
    case '\'':
      os += "&apos;";
      break;
    default:
      // Control characters other than tab and newline are invalid in XML.
      if (static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\n')
        os += ' ';
      else
        os += c;
    }
  }
}

/// Returns a round tick spacing (1, 2 or 5 times a power of ten) that splits
/// `span` into about `target` intervals.
static double getTickStep(double span, int target) {
  double raw = span / target;
  double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  double fraction = raw / magnitude;
  double nice = fraction < 1.5 ? 1 : fraction < 3 ? 2 : fraction < 7 ? 5 : 10;
  return nice * magnitude;
}

/// Returns the multiples of `step` in `range`.
static std::vector<double> getTicks(Range range, double step) {
  std::vector<double> ticks;
  if (!std::isfinite(step) || step <= 0)
    return ticks;
  double first = std::ceil(range.lo / step - 1e-9);
  double last = std::floor(range.hi / step + 1e-9);
  if (!std::isfinite(first) || !std::isfinite(last) || last - first > 50)
    return ticks;
  for (double k = first; k <= last; ++k)
    ticks.push_back(k * step);
  return ticks;
}

/// Formats a tick value; ticks `step` apart get just enough decimals to
/// differ, and values of 10,000 and more get a k/M/B/T suffix.
static std::string formatTick(double value, double step) {
  double magnitude = std::max(std::fabs(value), std::fabs(step));
  double scale = 1;
  const char *suffix = "";
  if (magnitude >= 1e12) {
    scale = 1e12, suffix = "T";
  } else if (magnitude >= 1e9) {
    scale = 1e9, suffix = "B";
  } else if (magnitude >= 1e6) {
    scale = 1e6, suffix = "M";
  } else if (magnitude >= 1e4) {
    scale = 1e3, suffix = "k";
  }
  double scaledStep = step / scale;
  int decimals = scaledStep >= 1
                     ? 0
                     : std::min(12, static_cast<int>(std::ceil(
                                        -std::log10(scaledStep) - 1e-9)));
  double scaled = value / scale;
  // Ticks computed as k * step can land a hair off zero.
  if (std::fabs(scaled) < scaledStep * 1e-6)
    scaled = 0;
  if (scaled == 0)
    return "0";
  char text[48];
  std::snprintf(text, sizeof(text), "%.*f%s", decimals, scaled, suffix);
  return text;
}

/// Returns `range` widened when it is empty, so the data maps to the middle.
static Range widen(double lo, double hi) {
  if (hi - lo > 1e-12 * std::max(1.0, std::fabs(lo)))
    return {lo, hi};
  double half = std::max(std::fabs(lo) * 0.05, 0.5);
  return {lo - half, hi + half};
}

/// Returns the y range: from the lowest point to the 98th percentile of the
/// points after each series' first tenth, with margins. The first tenth holds
/// the initial loss (ln of the vocabulary size), which would squash the part
/// of the curves worth reading; isolated later spikes are clipped too.
static Range getYRange(const std::vector<PlotSeries> &series) {
  double lo = std::numeric_limits<double>::infinity();
  std::vector<double> tail, all;
  for (const PlotSeries &s : series) {
    size_t n = std::min(s.x.size(), s.y.size());
    size_t numFinite = 0;
    for (size_t i = 0; i < n; ++i)
      numFinite += std::isfinite(s.x[i]) && std::isfinite(s.y[i]);
    size_t skip = numFinite >= 10 ? numFinite / 10 : 0;
    size_t seen = 0;
    for (size_t i = 0; i < n; ++i) {
      if (!std::isfinite(s.x[i]) || !std::isfinite(s.y[i]))
        continue;
      lo = std::min(lo, s.y[i]);
      all.push_back(s.y[i]);
      if (seen++ >= skip)
        tail.push_back(s.y[i]);
    }
  }
  if (all.empty())
    return {0, 1};
  std::vector<double> &values = tail.empty() ? all : tail;
  std::sort(values.begin(), values.end());
  double hi = values[static_cast<size_t>(0.98 * (values.size() - 1))];
  hi = std::max(hi, lo);
  double span = hi - lo;
  if (!std::isfinite(span))
    return widen(lo, lo);
  Range range = widen(lo, hi);
  if (range.lo == lo && range.hi == hi) {
    range.lo -= 0.04 * span;
    range.hi += 0.08 * span;
  }
  // A loss is not negative; do not waste room below zero.
  if (lo >= 0 && range.lo < 0)
    range.lo = 0;
  return range;
}

std::string mlir::mxfp4::renderSvgPlot(const std::string &title,
                                       const std::vector<PlotSeries> &series,
                                       const std::string &xLabel,
                                       const std::string &yLabel) {
  // The x range spans every drawable point.
  double xMin = std::numeric_limits<double>::infinity(), xMax = -xMin;
  size_t numPoints = 0;
  for (const PlotSeries &s : series)
    for (size_t i = 0, e = std::min(s.x.size(), s.y.size()); i < e; ++i)
      if (std::isfinite(s.x[i]) && std::isfinite(s.y[i])) {
        xMin = std::min(xMin, s.x[i]);
        xMax = std::max(xMax, s.x[i]);
        ++numPoints;
      }
  Range xRange = numPoints ? widen(xMin, xMax) : Range{0, 1};
  if (!std::isfinite(xRange.hi - xRange.lo))
    xRange = {-std::numeric_limits<double>::max() / 2,
              std::numeric_limits<double>::max() / 2};
  Range yRange = getYRange(series);

  auto toX = [&](double x) {
    double px =
        kLeft + (x - xRange.lo) / (xRange.hi - xRange.lo) * (kRight - kLeft);
    return std::clamp(px, -1e5, 1e5);
  };
  // Points far outside the range are pulled in to keep the numbers sane; the
  // clip path hides them either way.
  auto toY = [&](double y) {
    double py =
        kBottom - (y - yRange.lo) / (yRange.hi - yRange.lo) * (kBottom - kTop);
    return std::clamp(py, -1e5, 1e5);
  };

  SvgText os;
  auto num = [](double v) {
    char text[32];
    std::snprintf(text, sizeof(text), "%.1f", v);
    return std::string(text);
  };
  os << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
     << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << kWidth
     << "\" height=\"" << kHeight << "\" viewBox=\"0 0 " << kWidth << ' '
     << kHeight
     << "\" font-family=\"Helvetica, Arial, sans-serif\" font-size=\"12\">\n"
     << "<title>";
  writeEscaped(os.text, title);
  os << "</title>\n"
     << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
     << "<defs><clipPath id=\"plot-area\"><rect x=\"" << kLeft << "\" y=\""
     << kTop << "\" width=\"" << kRight - kLeft << "\" height=\""
     << kBottom - kTop << "\"/></clipPath></defs>\n";

  // Title and axis labels.
  os << "<text x=\"" << (kLeft + kRight) / 2
     << "\" y=\"26\" text-anchor=\"middle\" font-size=\"15\" "
        "font-weight=\"bold\">";
  writeEscaped(os.text, title);
  os << "</text>\n<text x=\"" << (kLeft + kRight) / 2 << "\" y=\""
     << kHeight - 14 << "\" text-anchor=\"middle\">";
  writeEscaped(os.text, xLabel);
  os << "</text>\n<text transform=\"translate(18 " << (kTop + kBottom) / 2
     << ") rotate(-90)\" text-anchor=\"middle\">";
  writeEscaped(os.text, yLabel);
  os << "</text>\n";

  // Grid lines and tick labels.
  double xStep = getTickStep(xRange.hi - xRange.lo, 7);
  double yStep = getTickStep(yRange.hi - yRange.lo, 6);
  os << "<g stroke=\"#e0e0e0\" stroke-width=\"1\">\n";
  for (double x : getTicks(xRange, xStep))
    os << "<line x1=\"" << num(toX(x)) << "\" y1=\"" << kTop << "\" x2=\""
       << num(toX(x)) << "\" y2=\"" << kBottom << "\"/>\n";
  for (double y : getTicks(yRange, yStep))
    os << "<line x1=\"" << kLeft << "\" y1=\"" << num(toY(y)) << "\" x2=\""
       << kRight << "\" y2=\"" << num(toY(y)) << "\"/>\n";
  os << "</g>\n<g fill=\"#333\">\n";
  for (double x : getTicks(xRange, xStep))
    os << "<text x=\"" << num(toX(x)) << "\" y=\"" << kBottom + 18
       << "\" text-anchor=\"middle\">" << formatTick(x, xStep) << "</text>\n";
  for (double y : getTicks(yRange, yStep))
    os << "<text x=\"" << kLeft - 8 << "\" y=\"" << num(toY(y))
       << "\" dy=\"0.35em\" text-anchor=\"end\">" << formatTick(y, yStep)
       << "</text>\n";
  os << "</g>\n<rect x=\"" << kLeft << "\" y=\"" << kTop << "\" width=\""
     << kRight - kLeft << "\" height=\"" << kBottom - kTop
     << "\" fill=\"none\" stroke=\"#333\"/>\n";
  if (!numPoints)
    os << "<text x=\"" << (kLeft + kRight) / 2 << "\" y=\""
       << (kTop + kBottom) / 2
       << "\" text-anchor=\"middle\" fill=\"#888\">no data</text>\n";

  // The curves. A series with more points than the plot has pixels keeps,
  // per pixel column, only its lowest and highest point: the picture is the
  // same and the file stays small.
  auto getDash = [](const PlotSeries &s, size_t index) -> const char * {
    if (s.dashed)
      return "7 4";
    // Past ten series the colours repeat; a dotted line tells them apart.
    return index >= kNumColors ? "2 3" : nullptr;
  };
  os << "<g clip-path=\"url(#plot-area)\" fill=\"none\" stroke-width=\"1.6\" "
        "stroke-linejoin=\"round\" stroke-linecap=\"round\">\n";
  for (size_t index = 0; index < series.size(); ++index) {
    const PlotSeries &s = series[index];
    const char *color = kColors[index % kNumColors];
    size_t n = std::min(s.x.size(), s.y.size());
    bool decimate = n > static_cast<size_t>(4 * (kRight - kLeft));
    // Few points get a marker each; many only where a point stands alone.
    bool markAll = n <= 40;
    SvgText pathStream;
    std::vector<std::pair<double, double>> markers;
    size_t segmentLength = 0;
    // The pending points of the current pixel column when decimating.
    struct Pixel {
      double x, y;
    };
    std::optional<Pixel> columnMin, columnMax;
    long column = std::numeric_limits<long>::min();
    auto emit = [&](double px, double py) {
      pathStream << (segmentLength++ ? " L" : " M") << num(px) << ','
                 << num(py);
    };
    auto flushColumn = [&] {
      if (!columnMin)
        return;
      emit(columnMin->x, columnMin->y);
      if (columnMax->x != columnMin->x || columnMax->y != columnMin->y)
        emit(columnMax->x, columnMax->y);
      columnMin.reset();
      columnMax.reset();
    };
    auto endSegment = [&](double px, double py) {
      flushColumn();
      // A lone point draws no line; mark it.
      if (segmentLength == 1 && !markAll)
        markers.push_back({px, py});
      segmentLength = 0;
    };
    double lastX = 0, lastY = 0;
    for (size_t i = 0; i < n; ++i) {
      if (!std::isfinite(s.x[i]) || !std::isfinite(s.y[i])) {
        if (segmentLength || columnMin)
          endSegment(lastX, lastY);
        continue;
      }
      double px = toX(s.x[i]), py = toY(s.y[i]);
      lastX = px, lastY = py;
      if (!decimate) {
        emit(px, py);
        continue;
      }
      long pixel = static_cast<long>(std::floor(px));
      if (pixel != column)
        flushColumn();
      column = pixel;
      // SVG y grows downwards: the lowest loss has the largest py.
      if (!columnMin) {
        columnMin = columnMax = Pixel{px, py};
      } else if (py > columnMin->y) {
        columnMin = Pixel{px, py};
      } else if (py < columnMax->y) {
        columnMax = Pixel{px, py};
      }
    }
    if (segmentLength || columnMin)
      endSegment(lastX, lastY);
    if (markAll)
      for (size_t i = 0; i < n; ++i)
        if (std::isfinite(s.x[i]) && std::isfinite(s.y[i]))
          markers.push_back({toX(s.x[i]), toY(s.y[i])});

    std::string path = pathStream.text;
    if (!path.empty()) {
      os << "<path stroke=\"" << color << '"';
      if (const char *dash = getDash(s, index))
        os << " stroke-dasharray=\"" << dash << '"';
      os << " d=\"" << path.substr(path.find_first_not_of(' ')) << "\"/>\n";
    }
    for (auto [px, py] : markers)
      os << "<circle cx=\"" << num(px) << "\" cy=\"" << num(py)
         << "\" r=\"2.5\" fill=\"" << color << "\" stroke=\"none\"/>\n";
  }
  os << "</g>\n";

  // The legend, in the top right corner, where falling loss curves leave
  // room.
  size_t maxLabel = 0;
  for (const PlotSeries &s : series)
    maxLabel = std::max(maxLabel, s.label.size());
  if (maxLabel) {
    double rowHeight = 18;
    double width = 44 + 6.8 * std::min<size_t>(maxLabel, 60);
    double height = 8 + rowHeight * series.size();
    double left = kRight - 10 - width, top = kTop + 10;
    os << "<g>\n<rect x=\"" << num(left) << "\" y=\"" << num(top)
       << "\" width=\"" << num(width) << "\" height=\"" << num(height)
       << "\" fill=\"white\" fill-opacity=\"0.88\" stroke=\"#bbb\"/>\n";
    for (size_t index = 0; index < series.size(); ++index) {
      const PlotSeries &s = series[index];
      double y = top + 4 + rowHeight * (index + 0.5);
      os << "<line x1=\"" << num(left + 8) << "\" y1=\"" << num(y) << "\" x2=\""
         << num(left + 34) << "\" y2=\"" << num(y) << "\" stroke=\""
         << kColors[index % kNumColors] << "\" stroke-width=\"2\"";
      if (const char *dash = getDash(s, index))
        os << " stroke-dasharray=\"" << dash << '"';
      os << "/>\n<text x=\"" << num(left + 40) << "\" y=\"" << num(y)
         << "\" dy=\"0.35em\">";
      writeEscaped(os.text, s.label);
      os << "</text>\n";
    }
    os << "</g>\n";
  }
  os << "</svg>\n";
  return os.text;
}

PlotSeries mlir::mxfp4::getMovingAverage(const PlotSeries &series,
                                         const std::string &label) {
  // A trailing average over about 20 points, bias-corrected at the start.
  PlotSeries smoothed{label, {}, {}};
  double average = 0, weight = 0;
  for (size_t i = 0; i < series.x.size() && i < series.y.size(); ++i) {
    if (!std::isfinite(series.y[i]))
      continue;
    average = 0.95 * average + 0.05 * series.y[i];
    weight = 0.95 * weight + 0.05;
    smoothed.x.push_back(series.x[i]);
    smoothed.y.push_back(average / weight);
  }
  return smoothed;
}
