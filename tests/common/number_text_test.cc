// Shortest round-trip text of doubles, and Python's repr of them.
#include "common/number_text.h"

#include <cstdlib>

#include "gtest/gtest.h"

namespace tunefleet {
namespace {

TEST(NumberTextTest, ShortestTextReadsBackTheSameDouble) {
  EXPECT_EQ(ShortestText(1e-5), "1e-05");
  EXPECT_EQ(ShortestText(0.001), "0.001");
  EXPECT_EQ(ShortestText(3), "3");
  EXPECT_EQ(ShortestText(0.1 + 0.2), "0.30000000000000004");
  for (double v : {1.0 / 3, 2.154434690031884e-3, 123456789.125, -7.5e-300}) {
    EXPECT_EQ(std::strtod(ShortestText(v).c_str(), nullptr), v) << v;
  }
}

TEST(NumberTextTest, PythonReprKeepsFloatsFloats) {
  EXPECT_EQ(PythonRepr(3), "3.0");
  EXPECT_EQ(PythonRepr(1e-5), "1e-05");
  EXPECT_EQ(PythonRepr(0.5), "0.5");
  EXPECT_EQ(PythonRepr(1e22), "1e+22");
  // Python writes whole floats below 1e16 in positional notation: repr(10.0) is '10.0', where
  // the shortest %g text is "1e+01" (a sweep's lr range up to 10 journaled as 1e+01 once).
  EXPECT_EQ(PythonRepr(10), "10.0");
  EXPECT_EQ(PythonRepr(1e15), "1000000000000000.0");
  EXPECT_EQ(PythonRepr(1e16), "1e+16");
  EXPECT_EQ(PythonRepr(123456789012345678.0), "1.2345678901234568e+17");
}

}  // namespace
}  // namespace tunefleet
