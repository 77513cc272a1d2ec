"""The house's two build shapes, so each BUILD.bazel says only what differs.

cc_pair(name = "x", deps = [...]): the library of one .h/.cc pair, x.h and x.cc (one library per
pair is the house rule, docs/ARCHITECTURE.md).
cc_unit_test(name = "x_test", deps = [...]): a GoogleTest test of one file, x_test.cc, linked
with gtest_main.

Both pass every other attribute (visibility, testonly, size, data, args, tags, ...) through.
scripts/bazel_to_cmake.py runs this file too, so the CMake build sees the same targets.
"""

def cc_pair(name, deps = [], **kwargs):
    native.cc_library(
        name = name,
        srcs = [name + ".cc"],
        hdrs = [name + ".h"],
        deps = deps,
        **kwargs
    )

def cc_unit_test(name, deps = [], **kwargs):
    native.cc_test(
        name = name,
        srcs = [name + ".cc"],
        deps = deps + ["@system//:gtest_main"],
        **kwargs
    )
