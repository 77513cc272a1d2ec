"""The house's three build shapes, so each BUILD.bazel says only what differs.

cc_pair(name = "x", deps = [...]): the library of one .h/.cc pair, x.h and x.cc (one library per
pair is the house rule, docs/ARCHITECTURE.md).
cc_unit_test(name = "x_test", deps = [...]): a GoogleTest test of one file, x_test.cc, linked
with gtest_main.
sh_tool_test(name = "x_test", tools = ["//hpo"], data = [...]): a shell test x_test.sh that
gets the tools' paths as its arguments.

All three pass every other attribute (visibility, testonly, size, data, args, tags, ...) through.
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

def sh_tool_test(name, tools = [], data = [], **kwargs):
    """A shell test NAME.sh that gets the paths of `tools` (binaries, scripts) as its arguments,
    in that order; each tool is its data too, so it is named once."""
    native.sh_test(
        name = name,
        srcs = [name + ".sh"],
        args = ["$(location %s)" % t for t in tools],
        data = data + tools,
        **kwargs
    )
