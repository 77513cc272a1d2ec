# Finds tunefleet's third-party libraries; each Bazel label becomes one CMake target:
#   @system//:absl -> tunefleet::absl        @system//:yaml_cpp -> tunefleet::yaml_cpp
#   @system//:gtest -> tunefleet::gtest      @system//:gtest_main -> tunefleet::gtest_main
#   @system//:gloo -> tunefleet::gloo        @libtorch//:torch -> tunefleet::torch
#   @system//:protobuf, :zmq, :json, :ucx, :icu -> tunefleet::protobuf, ::zmq, ::json, ::ucx, ::icu
#     (optional until a target uses them; TUNEFLEET_HAVE_<X> says whether they were found).
include_guard(GLOBAL)

set(_tf_arch "${CMAKE_LIBRARY_ARCHITECTURE}")
if(NOT _tf_arch)
  set(_tf_arch "x86_64-linux-gnu")
endif()

# Prints where a dependency came from (so a prefix build shows it used the prefix).
function(_tf_report label)
  string(JOIN " " text ${ARGN})
  message(STATUS "tunefleet: ${label}: ${text}")
endfunction()

# Location of an imported library target, for _tf_report.
function(_tf_location out target)
  get_target_property(type ${target} TYPE)
  if(type STREQUAL "INTERFACE_LIBRARY")
    get_target_property(loc ${target} INTERFACE_INCLUDE_DIRECTORIES)
  else()
    get_target_property(loc ${target} LOCATION)
  endif()
  set(${out} "${loc}" PARENT_SCOPE)
endfunction()

# ---- TUNEFLEET_DEPS_PREFIX: Debian .debs unpacked with `dpkg -x DEB PREFIX` ----------------------
# Searched before the system. Debian's CMake config files for Abseil, yaml-cpp and GoogleTest locate
# their libraries relative to themselves (${_IMPORT_PREFIX}), so they work from such a prefix.
set(TUNEFLEET_DEPS_PREFIX "" CACHE PATH
    "Folder holding Debian .debs unpacked with dpkg -x (searched first; empty: system only)")
set(TUNEFLEET_DEPS_LIBDIR "")
if(TUNEFLEET_DEPS_PREFIX)
  get_filename_component(_tf_usr "${TUNEFLEET_DEPS_PREFIX}/usr" ABSOLUTE)
  if(NOT IS_DIRECTORY "${_tf_usr}")
    message(FATAL_ERROR "TUNEFLEET_DEPS_PREFIX=${TUNEFLEET_DEPS_PREFIX} has no usr/ folder "
                        "(expected .debs unpacked there with dpkg -x)")
  endif()
  set(TUNEFLEET_DEPS_LIBDIR "${_tf_usr}/lib/${_tf_arch}")
  # <prefix>/usr covers lib/<arch>/cmake/<pkg>, share/cmake/<pkg>, include/ and lib/<arch>/.
  list(PREPEND CMAKE_PREFIX_PATH "${_tf_usr}")
  list(PREPEND CMAKE_INCLUDE_PATH "${_tf_usr}/include")
  list(PREPEND CMAKE_LIBRARY_PATH "${TUNEFLEET_DEPS_LIBDIR}" "${_tf_usr}/lib")
  # Run time: binaries find the prefix's libraries without LD_LIBRARY_PATH. DT_RPATH (not the
  # newer DT_RUNPATH) also serves dependencies of dependencies, e.g. libsodium for libzmq.
  # A few Debian 12 packages (libcom-err2, libkeyutils1) unpack into <prefix>/lib/<arch>.
  set(_tf_rpath "${TUNEFLEET_DEPS_LIBDIR}")
  get_filename_component(_tf_lib "${TUNEFLEET_DEPS_PREFIX}/lib/${_tf_arch}" ABSOLUTE)
  if(IS_DIRECTORY "${_tf_lib}")
    list(APPEND _tf_rpath "${_tf_lib}")
  endif()
  list(APPEND CMAKE_BUILD_RPATH ${_tf_rpath})
  list(APPEND CMAKE_INSTALL_RPATH ${_tf_rpath})
  add_link_options("LINKER:--disable-new-dtags")
  _tf_report("deps prefix" "${_tf_usr}")
endif()

find_package(Threads REQUIRED)

# ---- Abseil (@system//:absl): the libraries third_party/system.BUILD links (-labsl_X is the
# target absl::X), read from there so that both builds link the same set.
find_package(absl REQUIRED CONFIG)
file(READ "${PROJECT_SOURCE_DIR}/third_party/system.BUILD" _tf_system_build)
string(REGEX MATCHALL "-labsl_[a-z0-9_]+" _tf_absl_libs "${_tf_system_build}")
list(TRANSFORM _tf_absl_libs REPLACE "^-labsl_" "absl::")
foreach(_tf_lib IN LISTS _tf_absl_libs)
  if(NOT TARGET ${_tf_lib})
    message(FATAL_ERROR "third_party/system.BUILD links ${_tf_lib}, which this Abseil lacks")
  endif()
endforeach()
add_library(tunefleet::absl INTERFACE IMPORTED)
target_link_libraries(tunefleet::absl INTERFACE ${_tf_absl_libs})
list(LENGTH _tf_absl_libs _tf_n)
_tf_location(_loc absl::status)
_tf_report("absl ${absl_VERSION}" "${absl_DIR}" "(${_tf_n} libraries, e.g. ${_loc})")

# ---- yaml-cpp (@system//:yaml_cpp): target `yaml-cpp` up to 0.7, `yaml-cpp::yaml-cpp` from 0.8 ---
find_package(yaml-cpp REQUIRED CONFIG)
if(TARGET yaml-cpp::yaml-cpp)
  set(_tf_yaml yaml-cpp::yaml-cpp)
else()
  set(_tf_yaml yaml-cpp)
endif()
add_library(tunefleet::yaml_cpp INTERFACE IMPORTED)
target_link_libraries(tunefleet::yaml_cpp INTERFACE ${_tf_yaml})
_tf_location(_loc ${_tf_yaml})
_tf_report("yaml-cpp ${yaml-cpp_VERSION}" "${yaml-cpp_DIR}" "(${_loc})")

# ---- GoogleTest (@system//:gtest = gmock + gtest, @system//:gtest_main) --------------------------
if(TUNEFLEET_BUILD_TESTS)
  find_package(GTest REQUIRED)
  if(NOT TARGET GTest::gmock)
    message(FATAL_ERROR "GoogleTest was found without gmock (install libgmock-dev)")
  endif()
  add_library(tunefleet::gtest INTERFACE IMPORTED)
  target_link_libraries(tunefleet::gtest INTERFACE GTest::gmock GTest::gtest Threads::Threads)
  add_library(tunefleet::gtest_main INTERFACE IMPORTED)
  target_link_libraries(tunefleet::gtest_main INTERFACE GTest::gtest_main tunefleet::gtest)
  _tf_location(_loc GTest::gtest)
  _tf_report("googletest ${GTest_VERSION}" "${GTest_DIR}" "(${_loc})")
endif()

# ---- LibTorch (@libtorch//:torch), as third_party/libtorch/libtorch.bzl maps it ------------------
#   CUDA LibTorch (has torch_cuda): USE_C10D_NCCL, TUNEFLEET_CUDA=1; + torch_cuda, c10_cuda,
#     nccl, cudart.
#   Debian's CPU LibTorch (in /usr): USE_C10D_GLOO + /usr/lib/libgloo.so (@system//:gloo).
#   Any other CPU LibTorch: plain torch.
# Torch libraries are linked with --no-as-needed (like the Bazel rule): nothing calls into
# torch_cuda directly, yet it must be loaded for CUDA to register.
find_package(Torch REQUIRED)
set(TUNEFLEET_TORCH_CUDA OFF)
find_library(TUNEFLEET_TORCH_CUDA_LIBRARY torch_cuda
             PATHS "${TORCH_INSTALL_PREFIX}/lib" NO_DEFAULT_PATH)
if(TARGET torch_cuda OR TORCH_CUDA_LIBRARIES OR TUNEFLEET_TORCH_CUDA_LIBRARY)
  set(TUNEFLEET_TORCH_CUDA ON)
endif()
add_library(tunefleet::torch INTERFACE IMPORTED)
target_link_libraries(tunefleet::torch INTERFACE ${TORCH_LIBRARIES})
target_link_options(tunefleet::torch INTERFACE "LINKER:--no-as-needed")
if(TUNEFLEET_TORCH_CUDA)
  find_library(TUNEFLEET_C10_CUDA_LIBRARY c10_cuda
               PATHS "${TORCH_INSTALL_PREFIX}/lib" NO_DEFAULT_PATH)
  if(NOT TARGET CUDA::cudart)
    if(NOT CUDAToolkit_ROOT AND DEFINED ENV{CUDA_HOME})
      set(CUDAToolkit_ROOT "$ENV{CUDA_HOME}")
    endif()
    find_package(CUDAToolkit REQUIRED)
  endif()
  set(_tf_nccl_hints
      "$ENV{NCCL_ROOT}" "$ENV{NCCL_HOME}" "$ENV{CUDA_HOME}" "${CUDAToolkit_LIBRARY_ROOT}")
  find_path(NCCL_INCLUDE_DIR nccl.h HINTS ${_tf_nccl_hints} PATH_SUFFIXES include REQUIRED)
  find_library(NCCL_LIBRARY nccl HINTS ${_tf_nccl_hints} PATH_SUFFIXES lib lib64 REQUIRED)
  target_link_libraries(tunefleet::torch INTERFACE
    ${TUNEFLEET_TORCH_CUDA_LIBRARY} ${TUNEFLEET_C10_CUDA_LIBRARY} ${NCCL_LIBRARY} CUDA::cudart)
  target_include_directories(tunefleet::torch INTERFACE
    ${NCCL_INCLUDE_DIR} ${CUDAToolkit_INCLUDE_DIRS})
  target_compile_definitions(tunefleet::torch INTERFACE USE_C10D_NCCL TUNEFLEET_CUDA=1)
  _tf_report("libtorch ${Torch_VERSION} (CUDA)" "${TORCH_INSTALL_PREFIX}")
  _tf_report("cuda ${CUDAToolkit_VERSION}" "${CUDAToolkit_INCLUDE_DIRS}")
  _tf_report("nccl" "${NCCL_LIBRARY}" "(${NCCL_INCLUDE_DIR}/nccl.h)")
elseif(TORCH_INSTALL_PREFIX STREQUAL "/usr")
  find_library(GLOO_LIBRARY gloo PATHS /usr/lib NO_DEFAULT_PATH REQUIRED)
  add_library(tunefleet::gloo INTERFACE IMPORTED)
  target_link_libraries(tunefleet::gloo INTERFACE ${GLOO_LIBRARY})
  target_link_libraries(tunefleet::torch INTERFACE tunefleet::gloo)
  target_compile_definitions(tunefleet::torch INTERFACE USE_C10D_GLOO)
  _tf_report("libtorch ${Torch_VERSION} (Debian CPU, Gloo)"
             "${TORCH_INSTALL_PREFIX}" "+ ${GLOO_LIBRARY}")
else()
  _tf_report("libtorch ${Torch_VERSION} (CPU)" "${TORCH_INSTALL_PREFIX}")
endif()

# ---- Optional for now (no target uses them yet) ----------------------------------------------
# ZeroMQ (@system//:zmq): libzmq + cppzmq headers. Debian's libzmq3-dev has no CMake config, and
# cppzmq's config looks for one, so plain find_path / find_library.
find_path(ZMQ_INCLUDE_DIR zmq.h)
find_path(CPPZMQ_INCLUDE_DIR zmq.hpp)
find_library(ZMQ_LIBRARY zmq)
set(TUNEFLEET_HAVE_ZMQ OFF)
if(ZMQ_INCLUDE_DIR AND CPPZMQ_INCLUDE_DIR AND ZMQ_LIBRARY)
  set(TUNEFLEET_HAVE_ZMQ ON)
  add_library(tunefleet::zmq INTERFACE IMPORTED)
  target_include_directories(tunefleet::zmq INTERFACE ${ZMQ_INCLUDE_DIR} ${CPPZMQ_INCLUDE_DIR})
  target_link_libraries(tunefleet::zmq INTERFACE ${ZMQ_LIBRARY})
  _tf_report("zeromq" "${ZMQ_LIBRARY}" "(${ZMQ_INCLUDE_DIR}/zmq.h, ${CPPZMQ_INCLUDE_DIR}/zmq.hpp)")
else()
  _tf_report("zeromq" "NOT FOUND (optional for now)")
endif()

# nlohmann_json (@system//:json), header only.
find_package(nlohmann_json CONFIG QUIET)
find_path(JSON_INCLUDE_DIR nlohmann/json.hpp)
set(TUNEFLEET_HAVE_JSON OFF)
if(TARGET nlohmann_json::nlohmann_json OR JSON_INCLUDE_DIR)
  set(TUNEFLEET_HAVE_JSON ON)
  add_library(tunefleet::json INTERFACE IMPORTED)
  if(TARGET nlohmann_json::nlohmann_json)
    target_link_libraries(tunefleet::json INTERFACE nlohmann_json::nlohmann_json)
  else()
    target_include_directories(tunefleet::json INTERFACE ${JSON_INCLUDE_DIR})
  endif()
  _tf_report("nlohmann_json ${nlohmann_json_VERSION}" "${JSON_INCLUDE_DIR}/nlohmann/json.hpp")
else()
  _tf_report("nlohmann_json" "NOT FOUND (optional for now)")
endif()

# ICU (@system//:icu): libicuuc + libicudata, as third_party/system.BUILD links them (Unicode
# tables for trainer/wordpiece_tokenizer). CMake's FindICU; ICU_ROOT or the deps prefix can point
# at a copy (Debian 12: libicu-dev, libicu72).
find_package(ICU QUIET COMPONENTS uc data)
set(TUNEFLEET_HAVE_ICU OFF)
if(ICU_FOUND)
  set(TUNEFLEET_HAVE_ICU ON)
  add_library(tunefleet::icu INTERFACE IMPORTED)
  target_link_libraries(tunefleet::icu INTERFACE ICU::uc ICU::data)
  _tf_report("icu ${ICU_VERSION}" "${ICU_UC_LIBRARY}" "(${ICU_INCLUDE_DIR}/unicode/uchar.h)")
else()
  _tf_report("icu" "NOT FOUND (optional until used: the tokenizer needs it; install libicu-dev)")
endif()

# UCX (@system//:ucx).
find_path(UCX_INCLUDE_DIR ucp/api/ucp.h)
find_library(UCP_LIBRARY ucp)
find_library(UCT_LIBRARY uct)
find_library(UCS_LIBRARY ucs)
set(TUNEFLEET_HAVE_UCX OFF)
if(UCX_INCLUDE_DIR AND UCP_LIBRARY AND UCT_LIBRARY AND UCS_LIBRARY)
  set(TUNEFLEET_HAVE_UCX ON)
  add_library(tunefleet::ucx INTERFACE IMPORTED)
  target_include_directories(tunefleet::ucx INTERFACE ${UCX_INCLUDE_DIR})
  target_link_libraries(tunefleet::ucx INTERFACE ${UCP_LIBRARY} ${UCT_LIBRARY} ${UCS_LIBRARY})
  _tf_report("ucx" "${UCP_LIBRARY}" "(${UCX_INCLUDE_DIR}/ucp/api/ucp.h)")
else()
  _tf_report("ucx" "NOT FOUND (optional for now)")
endif()

# Protobuf (@system//:protobuf) and protoc, for tunefleet_cc_proto. Not through the target
# protobuf::libprotobuf: PyTorch's Caffe2Config.cmake defines that as an empty alias when its
# protobuf is linked in statically, and FindProtobuf then keeps the empty one.
find_package(Protobuf QUIET)
set(TUNEFLEET_HAVE_PROTOBUF OFF)
if(Protobuf_FOUND AND Protobuf_LIBRARIES AND Protobuf_PROTOC_EXECUTABLE)
  set(TUNEFLEET_HAVE_PROTOBUF ON)
  add_library(tunefleet::protobuf INTERFACE IMPORTED)
  target_include_directories(tunefleet::protobuf INTERFACE ${Protobuf_INCLUDE_DIRS})
  target_link_libraries(tunefleet::protobuf INTERFACE ${Protobuf_LIBRARIES} Threads::Threads)
  _tf_report("protobuf ${Protobuf_VERSION}"
             "${Protobuf_LIBRARY}" "(protoc ${Protobuf_PROTOC_EXECUTABLE})")
else()
  _tf_report("protobuf" "NOT FOUND (optional until used: tunefleet_cc_proto needs it and protoc)")
endif()
# PyTorch's wheels carry headers of another protobuf (torch/include/google/protobuf). A target
# that links LibTorch and includes a .pb.h (tests/trainer/commands/warm_worker_fixture) would find
# those first, LibTorch's folders coming before the system's, and fail to compile against the
# system's protobuf. A folder holding only the system's google/, ahead of LibTorch's folders,
# gives every target the one protobuf that protoc and the library are.
if(TUNEFLEET_HAVE_PROTOBUF AND NOT TORCH_INSTALL_PREFIX STREQUAL "/usr"
   AND EXISTS "${TORCH_INSTALL_PREFIX}/include/google/protobuf")
  find_path(_tf_protobuf_root google/protobuf/message.h
            PATHS ${Protobuf_INCLUDE_DIRS} /usr/include NO_DEFAULT_PATH)
  if(_tf_protobuf_root)
    set(_tf_shim "${PROJECT_BINARY_DIR}/protobuf-include")
    file(MAKE_DIRECTORY "${_tf_shim}")
    file(CREATE_LINK "${_tf_protobuf_root}/google" "${_tf_shim}/google" SYMBOLIC)
    target_include_directories(tunefleet::torch BEFORE INTERFACE "${_tf_shim}")
    _tf_report("protobuf headers" "${_tf_protobuf_root} (ahead of LibTorch's own copy)")
  endif()
endif()
