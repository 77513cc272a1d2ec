#!/usr/bin/env python3
"""Writes each folder's CMakeLists.txt from its BUILD.bazel, so the CMake build (for GPU hosts
without Bazel) stays in step with the Bazel one. Run from anywhere after editing a BUILD.bazel:

  scripts/bazel_to_cmake.py          # rewrite the CMakeLists.txt files and the folder list
  scripts/bazel_to_cmake.py --check  # exit 1, listing them, when any is out of date

BUILD files are Starlark, which is Python syntax here: each is run with the rules it uses
(cc_library, cc_binary, cc_test, sh_test, sh_binary, filegroup, cc_proto) recording their arguments
(the macros of a loaded .bzl, such as //:defs.bzl, run too, with native.* recording), and
each rule becomes the tunefleet_* function of cmake/TunefleetRules.cmake. Labels map to targets:
//pkg/sub:name -> pkg_sub_name, a cc_binary keeps its name (testonly ones: pkg_name),
@system//:x -> tunefleet::x, @libtorch//:torch -> tunefleet::torch. An attribute this script
does not know stops it, rather than being dropped.
"""
import argparse
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TOP = os.path.join(ROOT, "CMakeLists.txt")
SKIP_DIRS = {"third_party", ".git", ".carry", "build", "runs"}
FOLDERS_BEGIN = "# BEGIN folders (scripts/bazel_to_cmake.py writes this list)"
FOLDERS_END = "# END folders"
IGNORED_ATTRS = {"visibility", "tags", "size", "testonly", "licenses"}


class Glob:
    def __init__(self, include, exclude=None, allow_empty=None):
        if exclude:
            raise ValueError("glob(exclude=...) is not supported")
        self.patterns = list(include)


def find_packages():
    pkgs = []
    for dirpath, dirnames, filenames in os.walk(ROOT):
        rel = os.path.relpath(dirpath, ROOT)
        dirnames[:] = sorted(d for d in dirnames
                             if not d.startswith("bazel-") and (rel != "." or d not in SKIP_DIRS))
        if "BUILD.bazel" in filenames and rel != ".":
            pkgs.append(rel.replace(os.sep, "/"))
    return pkgs


def load_package(pkg):
    """Runs pkg/BUILD.bazel; returns (leading comment lines, [(rule, attrs)])."""
    path = os.path.join(ROOT, pkg, "BUILD.bazel")
    with open(path) as f:
        text = f.read()
    comment = []
    for line in text.splitlines():
        if not line.startswith("#"):
            break
        comment.append(line)
    rules = []

    def rule(kind):
        def record(**attrs):
            rules.append((kind, attrs))
        return record

    native = {k: rule(k) for k in ("cc_library", "cc_binary", "cc_test", "sh_test", "sh_binary",
                                   "filegroup", "alias")}
    env = dict(native, cc_proto=rule("cc_proto"))

    def load(label, *symbols):
        # cc_proto is recorded as a rule of its own (its .bzl runs protoc); other macros run
        # here with native.* recording what they make.
        missing = [s for s in symbols if s not in env]
        if not missing:
            return
        bzl = os.path.join(ROOT, label.lstrip("/").replace(":", "/").lstrip("/"))
        scope = {"native": type("native", (), {k: staticmethod(v) for k, v in native.items()})}
        with open(bzl) as f:
            exec(compile(f.read(), bzl, "exec"), scope)
        env.update({s: scope[s] for s in missing})

    env.update(load=load, package=lambda **k: None, glob=Glob,
               exports_files=lambda *a, **k: None)
    exec(compile(text, path, "exec"), env)
    return comment, rules


def parse_label(label, pkg):
    """-> (repo, package, name)."""
    repo = ""
    if label.startswith("@"):
        repo, label = label[1:].split("//", 1)
        label = "//" + label
    if label.startswith("//"):
        body = label[2:]
        if ":" in body:
            p, name = body.split(":", 1)
        else:
            p, name = body, body.rsplit("/", 1)[-1]
        return repo, p, name
    if label.startswith(":"):
        return repo, pkg, label[1:]
    return repo, pkg, label  # a bare name: target or file in pkg


class Index:
    """Every rule of every package, to resolve labels to CMake target names."""

    def __init__(self, packages):
        self.kinds = {}
        for pkg, (_, rules) in packages.items():
            for kind, attrs in rules:
                self.kinds[(pkg, attrs["name"])] = (kind, attrs)

    def target(self, label, pkg):
        """CMake target (or filegroup key) for a label; None for a plain file."""
        repo, p, name = parse_label(label, pkg)
        if repo == "system":
            return "tunefleet::" + name
        if repo == "libtorch":
            return "tunefleet::torch"
        if repo:
            raise ValueError("unknown repository in %s" % label)
        entry = self.kinds.get((p, name))
        if entry is None:
            if not os.path.exists(os.path.join(ROOT, p, name)):
                raise ValueError("%s (in //%s) names no rule and no file" % (label, pkg))
            return None  # a source file
        kind, attrs = entry
        if kind == "alias":  # another name for a rule: CMake knows the rule by its own name
            return self.target(attrs["actual"], p)
        if kind == "cc_binary" and not attrs.get("testonly"):
            return name
        return "%s_%s" % (p.replace("/", "_"), name)

    def location(self, label, pkg):
        """Bazel's $(location label) as a CMake expression."""
        t = self.target(label, pkg)
        if t is None:
            return "${PROJECT_SOURCE_DIR}/" + self.file(label, pkg)
        return "$<TARGET_FILE:%s>" % t

    def file(self, label, pkg):
        """A source file label as a path: relative to pkg when in it, else to the root."""
        _, p, name = parse_label(label, pkg)
        return "%s/%s" % (p, name)


def call(func, args):
    """func(KEY values KEY values ...), wrapped at 100 columns; a keyword stays with its first
    value."""
    units = []
    for key, values in args:
        if values:
            units.append(key + " " + values[0])
            units += values[1:]
    lines = []
    cur = func + "("
    for i, unit in enumerate(units):
        sep = "" if i == 0 else " "
        if i > 0 and len(cur) + len(sep) + len(unit) + 1 > 100:
            lines.append(cur)
            cur = "  " + unit
        else:
            cur += sep + unit
    lines.append(cur + ")")
    return "\n".join(lines)


def quote(v):
    return '"%s"' % v if re.search(r"[\s;#\"]", v) else v


def convert(pkg, comment, rules, index):
    out = []
    if comment:
        out += comment
    else:
        out.append("# %s/: tests (GoogleTest and shell), run by ctest." % pkg
                   if pkg.startswith("tests/") else "# %s/" % pkg)
    out.append("# Generated from BUILD.bazel here by scripts/bazel_to_cmake.py: edit that, rerun.")
    # Filegroups first: tests of this folder may list them as DATA.
    rules = sorted(rules, key=lambda r: r[0] != "filegroup")
    for kind, attrs in rules:
        if kind == "alias":
            continue
        attrs = dict(attrs)
        name = attrs.pop("name")
        unknown = set(attrs) - IGNORED_ATTRS - {
            "srcs", "hdrs", "deps", "data", "args", "copts", "linkopts", "defines", "linkshared"}
        if unknown:
            raise ValueError("//%s:%s: unsupported attribute(s) %s" % (pkg, name, sorted(unknown)))
        srcs = attrs.get("srcs", [])
        deps = [index.target(d, pkg) for d in attrs.get("deps", [])]
        data = []
        for d in attrs.get("data", []):
            t = index.target(d, pkg)
            if t is None:  # a file: relative to this folder, or from the root
                path = index.file(d, pkg)
                t = path[len(pkg) + 1:] if path.startswith(pkg + "/") else \
                    "${PROJECT_SOURCE_DIR}/" + path
            data.append(t)
        loc = re.compile(r"\$\(location ([^)]+)\)")
        args = [loc.sub(lambda m: index.location(m.group(1), pkg), a)
                for a in attrs.get("args", [])]
        common = [("COPTS", [quote(c) for c in attrs.get("copts", [])]),
                  ("LINKOPTS", [quote(c) for c in attrs.get("linkopts", [])]),
                  ("DEFINES", [quote(c) for c in attrs.get("defines", [])])]
        if kind == "cc_library":
            text = call("tunefleet_cc_library", [("NAME", [name]), ("SRCS", srcs),
                        ("HDRS", attrs.get("hdrs", []))] + common + [("DEPS", deps)])
        elif kind == "cc_binary":
            head = [name, "TESTONLY"] if attrs.get("testonly") else [name]
            if attrs.get("linkshared"):
                head.append("LINKSHARED")
            text = call("tunefleet_cc_binary", [("NAME", head), ("SRCS", srcs)] + common
                        + [("DEPS", deps), ("DATA", data)])
        elif kind == "cc_test":
            size = [attrs.get("size", "medium")]
            text = call("tunefleet_cc_test", [("NAME", [name]), ("SIZE", size), ("SRCS", srcs)]
                        + common + [("DEPS", deps), ("ARGS", args), ("DATA", data),
                                    ("TAGS", attrs.get("tags", []))])
        elif kind == "sh_test":
            size = [attrs.get("size", "medium")]
            text = call("tunefleet_sh_test", [("NAME", [name]), ("SIZE", size), ("SRCS", srcs),
                                              ("ARGS", args), ("DATA", data),
                                              ("TAGS", attrs.get("tags", []))])
        elif kind == "sh_binary":
            text = call("tunefleet_sh_binary", [("NAME", [name]), ("SRCS", srcs), ("DATA", data)])
        elif kind == "filegroup":
            if isinstance(srcs, Glob):
                text = call("tunefleet_filegroup", [("NAME", [name]), ("GLOBS", srcs.patterns)])
            else:
                text = call("tunefleet_filegroup", [("NAME", [name]), ("GLOBS", srcs)])
        elif kind == "cc_proto":
            text = call("tunefleet_cc_proto", [("NAME", [name]), ("SRCS", srcs), ("DEPS", deps)])
        else:
            raise ValueError(kind)
        out.append("")
        out.append(text)
    return "\n".join(out) + "\n"


def folder_block(pkgs, packages):
    # Folders with filegroups first (tests and binaries may list them as DATA), tests/ last.
    def has_filegroup(p):
        return any(kind == "filegroup" for kind, _ in packages[p][1])
    main = sorted((p for p in pkgs if not p.startswith("tests/")),
                  key=lambda p: (not has_filegroup(p), p))
    tests = sorted((p for p in pkgs if p.startswith("tests/")),
                   key=lambda p: (not has_filegroup(p), p))
    lines = [FOLDERS_BEGIN, "set(TUNEFLEET_FOLDERS"] + ["  " + p for p in main]
    lines += [")", "set(TUNEFLEET_TEST_FOLDERS"] + ["  " + p for p in tests]
    lines += [")", FOLDERS_END]
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--check", action="store_true", help="only report out-of-date files")
    opts = ap.parse_args()
    pkgs = find_packages()
    packages = {p: load_package(p) for p in pkgs}
    index = Index(packages)
    wanted = {}
    for p in pkgs:
        wanted[os.path.join(ROOT, p, "CMakeLists.txt")] = convert(p, *packages[p], index)
    with open(TOP) as f:
        top = f.read()
    block = re.compile(re.escape(FOLDERS_BEGIN) + r".*?" + re.escape(FOLDERS_END), re.S)
    if not block.search(top):
        sys.exit("%s lacks the '%s' ... '%s' block" % (TOP, FOLDERS_BEGIN, FOLDERS_END))
    wanted[TOP] = block.sub(lambda m: folder_block(pkgs, packages), top)
    stale = []
    for path, text in wanted.items():
        old = open(path).read() if os.path.exists(path) else None
        if old != text:
            stale.append(os.path.relpath(path, ROOT))
            if not opts.check:
                with open(path, "w") as f:
                    f.write(text)
    verb = "out of date" if opts.check else "written"
    for s in stale:
        print("%s: %s" % (s, verb))
    if not stale:
        print("CMake files in step with the %d BUILD.bazel files" % len(pkgs))
    return 1 if opts.check and stale else 0


if __name__ == "__main__":
    sys.exit(main())
