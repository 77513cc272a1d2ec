"""Repository rule that maps a LibTorch installation to @libtorch//:torch.

Default: Debian's CPU LibTorch (libtorch-dev 1.13.1, headers in /usr/include, Gloo for c10d).
With `--repo_env=LIBTORCH_HOME=/path/to/torch` (a libtorch zip or a PyTorch wheel's torch/
folder, the one holding include/ and lib/) that LibTorch is used instead; when it carries
libtorch_cuda.so, CUDA and NCCL are switched on (USE_C10D_NCCL, TUNEFLEET_CUDA).
"""

_BUILD = """
package(default_visibility = ["//visibility:public"])

cc_library(
    name = "torch",
    hdrs = glob(["include/**/*.h", "include/**/*.hpp", "include/**/*.cuh"], allow_empty = True),
    includes = {includes},
    defines = {defines},
    linkopts = {linkopts},
    deps = {deps},
)

# True when this LibTorch has CUDA (read by config_setting-free code through TUNEFLEET_CUDA).
exports_files(["flavor.txt"])
"""

def _libtorch_impl(ctx):
    home = ctx.os.environ.get("LIBTORCH_HOME", "").strip()
    if home:
        root = ctx.path(home)
        if not root.get_child("include").exists or not root.get_child("lib").exists:
            fail("LIBTORCH_HOME=%s has no include/ and lib/ folders (expected a libtorch or PyTorch torch/ folder)" % home)
        ctx.symlink(root.get_child("include"), "include")
        lib = str(root.get_child("lib"))
        cuda = root.get_child("lib").get_child("libtorch_cuda.so").exists
        includes = ["include", "include/torch/csrc/api/include"]
        libs = ["-ltorch", "-ltorch_cpu", "-lc10"]
        defines = []
        deps = []
        if cuda:
            cuda_home = ctx.os.environ.get("CUDA_HOME", "/usr/local/cuda")
            ctx.symlink(cuda_home + "/include", "cuda_include")
            includes.append("cuda_include")
            libs = ["-ltorch", "-ltorch_cuda", "-ltorch_cpu", "-lc10_cuda", "-lc10", "-lnccl",
                    "-L" + cuda_home + "/lib64", "-lcudart"]
            defines = ["USE_C10D_NCCL", "TUNEFLEET_CUDA=1"]
        linkopts = ["-L" + lib, "-Wl,-rpath," + lib, "-Wl,--no-as-needed"] + libs
        flavor = "cuda" if cuda else "cpu"
    else:
        # Debian: headers already on the default search path except the C++ API folder.
        ctx.symlink("/usr/include/torch/csrc/api/include", "include")
        includes = ["include"]
        defines = ["USE_C10D_GLOO"]
        linkopts = ["-Wl,--no-as-needed", "-ltorch", "-ltorch_cpu", "-lc10"]
        deps = ["@system//:gloo"]
        flavor = "cpu"
    ctx.file("flavor.txt", flavor + "\n")
    ctx.file("BUILD.bazel", _BUILD.format(
        includes = repr(includes),
        defines = repr(defines),
        linkopts = repr(linkopts),
        deps = repr(deps),
    ))

libtorch_repository = repository_rule(
    implementation = _libtorch_impl,
    environ = ["LIBTORCH_HOME", "CUDA_HOME"],
    local = True,
)
