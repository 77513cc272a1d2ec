# CMake twins of the Bazel rules the BUILD.bazel files use, so each folder's CMakeLists.txt reads
# like its BUILD.bazel. Naming: //pkg/sub:name -> library target pkg_sub_name; cc_binary keeps its
# name (file in <build>/bin/); tests become CTest tests named by their Bazel label
# (//tests/common:cli_test, target tests_common_cli_test). DEPS are CMake targets: pkg_name for
# //pkg:name, tunefleet::x for @system//:x, tunefleet::torch for @libtorch//:torch (TunefleetDeps).
include_guard(GLOBAL)

# The calling folder as a target prefix: "hpo_samplers" for hpo/samplers.
function(_tunefleet_package out)
  file(RELATIVE_PATH rel "${PROJECT_SOURCE_DIR}" "${CMAKE_CURRENT_SOURCE_DIR}")
  string(REPLACE "/" "_" pkg "${rel}")
  set(${out} "${pkg}" PARENT_SCOPE)
endfunction()

# The target of //<calling folder>:name, by the naming above: "hpo_samplers_tpe" for hpo/samplers
# and tpe. One place for the rule, which each rule's target and a filegroup's name follow.
function(_tunefleet_target out name)
  _tunefleet_package(pkg)
  set(${out} "${pkg}_${name}" PARENT_SCOPE)
endfunction()

# Fails when a target uses an optional third-party library (tunefleet::zmq, ...) that
# TunefleetDeps.cmake did not find: optional until used, then required.
function(_tunefleet_check_deps target)
  foreach(dep IN LISTS ARGN)
    if(dep MATCHES "^tunefleet::" AND NOT TARGET ${dep})
      message(FATAL_ERROR "${target} needs ${dep}, which was not found: install its Debian "
                          "-dev package or unpack it into TUNEFLEET_DEPS_PREFIX "
                          "(scripts/fetch_gpu_debs.sh)")
    endif()
  endforeach()
endfunction()

# tunefleet_cc_library(NAME n [SRCS ...] [HDRS ...] [COPTS ...] [LINKOPTS ...] [DEFINES ...]
#                      [DEPS ...]) -> static library <pkg>_<n> (INTERFACE when there are no SRCS).
# As in Bazel: deps, linkopts and defines reach dependents; copts only this library's sources.
function(tunefleet_cc_library)
  cmake_parse_arguments(ARG "" "NAME" "SRCS;HDRS;COPTS;LINKOPTS;DEFINES;DEPS" ${ARGN})
  _tunefleet_target(target ${ARG_NAME})
  _tunefleet_check_deps(${target} ${ARG_DEPS})
  if(ARG_SRCS)
    add_library(${target} STATIC ${ARG_SRCS} ${ARG_HDRS})
    set(scope PUBLIC)
    target_compile_options(${target} PRIVATE ${ARG_COPTS})
  else()
    add_library(${target} INTERFACE)
    set(scope INTERFACE)
  endif()
  target_link_libraries(${target} ${scope} ${ARG_DEPS} ${ARG_LINKOPTS})
  target_compile_definitions(${target} ${scope} ${ARG_DEFINES})
endfunction()

# What a DATA item is: "filegroup" (tunefleet_filegroup, from a folder listed earlier), "file"
# (relative to the calling folder, or absolute), else "target" (may be defined later; checked at
# generate time).
function(_tunefleet_data_kind out item)
  get_property(is_group GLOBAL PROPERTY "TUNEFLEET_FILEGROUP_${item}" SET)
  if(is_group)
    set(${out} filegroup PARENT_SCOPE)
  elseif(EXISTS "${CMAKE_CURRENT_SOURCE_DIR}/${item}"
         OR (IS_ABSOLUTE "${item}" AND EXISTS "${item}"))
    set(${out} file PARENT_SCOPE)
  else()
    set(${out} target PARENT_SCOPE)
  endif()
endfunction()

# Common part of binaries and tests: copts, linkopts, defines, deps; DATA targets are built
# with the executable (Bazel builds a binary's data with it).
function(_tunefleet_executable target)
  cmake_parse_arguments(ARG "" "" "COPTS;LINKOPTS;DEFINES;DEPS;DATA" ${ARGN})
  _tunefleet_check_deps(${target} ${ARG_DEPS})
  target_compile_options(${target} PRIVATE ${ARG_COPTS})
  target_compile_definitions(${target} PRIVATE ${ARG_DEFINES})
  target_link_libraries(${target} PRIVATE ${ARG_DEPS} ${ARG_LINKOPTS})
  foreach(item IN LISTS ARG_DATA)
    _tunefleet_data_kind(kind ${item})
    if(kind STREQUAL "target")
      add_dependencies(${target} ${item})
    endif()
  endforeach()
endfunction()

# tunefleet_cc_binary(NAME n [TESTONLY] SRCS ... [COPTS|LINKOPTS|DEFINES|DEPS|DATA ...])
# -> executable n in <build>/bin/. TESTONLY (helpers of tests): target <pkg>_<n>, file n in the
# folder's build dir. LINKSHARED (Bazel's linkshared): a shared library whose file is named n.
function(tunefleet_cc_binary)
  cmake_parse_arguments(ARG "TESTONLY;LINKSHARED" "NAME" "SRCS;COPTS;LINKOPTS;DEFINES;DEPS;DATA"
                        ${ARGN})
  if(ARG_TESTONLY)
    _tunefleet_target(target ${ARG_NAME})
    if(ARG_LINKSHARED)
      add_library(${target} SHARED ${ARG_SRCS})
      set_target_properties(${target} PROPERTIES PREFIX "" SUFFIX "" OUTPUT_NAME ${ARG_NAME}
                            NO_SONAME ON)
    else()
      add_executable(${target} ${ARG_SRCS})
      set_target_properties(${target} PROPERTIES OUTPUT_NAME ${ARG_NAME})
    endif()
  else()
    if(ARG_LINKSHARED)
      message(FATAL_ERROR "${ARG_NAME}: LINKSHARED is for TESTONLY helpers only")
    endif()
    set(target ${ARG_NAME})
    add_executable(${target} ${ARG_SRCS})
    set_target_properties(${target} PROPERTIES RUNTIME_OUTPUT_DIRECTORY "${PROJECT_BINARY_DIR}/bin")
  endif()
  _tunefleet_executable(${target} COPTS ${ARG_COPTS} LINKOPTS ${ARG_LINKOPTS}
                        DEFINES ${ARG_DEFINES} DEPS ${ARG_DEPS} DATA ${ARG_DATA})
endfunction()

# tunefleet_sh_binary(NAME n SRCS script.sh [DATA ...]) -> the script, executable, as <build>/bin/n,
# beside the binaries it runs (DATA: targets built with it; files of the calling folder, such as a
# shell library it sources, copied under <build>/bin at the same relative path, so the script finds
# them next to itself there as it does in the source tree).
function(tunefleet_sh_binary)
  cmake_parse_arguments(ARG "" "NAME" "SRCS;DATA" ${ARGN})
  set(out "${PROJECT_BINARY_DIR}/bin/${ARG_NAME}")
  add_custom_command(OUTPUT "${out}"
    COMMAND ${CMAKE_COMMAND} -E make_directory "${PROJECT_BINARY_DIR}/bin"
    COMMAND ${CMAKE_COMMAND} -E copy "${CMAKE_CURRENT_SOURCE_DIR}/${ARG_SRCS}" "${out}"
    DEPENDS "${CMAKE_CURRENT_SOURCE_DIR}/${ARG_SRCS}")
  set(deps "")
  foreach(d IN LISTS ARG_DATA)
    if(TARGET ${d})
      list(APPEND deps ${d})
    elseif(NOT IS_ABSOLUTE "${d}" AND EXISTS "${CMAKE_CURRENT_SOURCE_DIR}/${d}")
      # At configure time: several scripts may share the file, and an edit reconfigures.
      configure_file("${d}" "${PROJECT_BINARY_DIR}/bin/${d}" COPYONLY)
    endif()
  endforeach()
  _tunefleet_target(target ${ARG_NAME})
  add_custom_target(${target} ALL DEPENDS "${out}" ${deps})
endfunction()

# tunefleet_filegroup(NAME n GLOBS ...) -> file list <pkg>_<n>, usable in a test's DATA.
function(tunefleet_filegroup)
  cmake_parse_arguments(ARG "" "NAME" "GLOBS" ${ARGN})
  _tunefleet_target(group ${ARG_NAME})
  list(TRANSFORM ARG_GLOBS PREPEND "${CMAKE_CURRENT_SOURCE_DIR}/")
  file(GLOB files CONFIGURE_DEPENDS ${ARG_GLOBS})
  set_property(GLOBAL PROPERTY "TUNEFLEET_FILEGROUP_${group}" "${files}")
endfunction()

# Registers test //<pkg path>:<name> running COMMAND from the repository root (the cwd Bazel gives
# tests, so "configs/lr.yaml" resolves), with Bazel's timeout for SIZE (default medium), labels
# <pkg>, SIZE, the Bazel tags (and optuna and netns, below), TEST_TMPDIR set, and DATA
# (filegroups, files, targets) as REQUIRED_FILES. A test that needs what this host lacks is
# registered DISABLED, with the reason at configure time (ctest: "Not Run (Disabled)"):
#   netns (it makes network namespaces: its data has netns_lib.sh): no `ip` (iproute2) here;
#   gloo (CPU ranks over Gloo, Bazel tag "gloo"): this LibTorch has no Gloo (PyTorch's wheels);
#   slurm (a localhost Slurm cluster, Bazel tag "slurm"): no slurmctld / slurmd here.
# Bazel (CI) has no such escape: there every test runs.
function(_tunefleet_add_test name size data tags)
  if(NOT size)
    set(size medium)
  endif()
  set(timeouts small 60 medium 300 large 900 enormous 3600)
  list(FIND timeouts "${size}" i)
  if(i LESS 0)
    message(FATAL_ERROR "${name}: unknown SIZE ${size}")
  endif()
  math(EXPR i "${i} + 1")
  list(GET timeouts ${i} timeout)
  _tunefleet_package(pkg)
  file(RELATIVE_PATH rel "${PROJECT_SOURCE_DIR}" "${CMAKE_CURRENT_SOURCE_DIR}")
  set(test "//${rel}:${name}")
  set(tmpdir "${CMAKE_CURRENT_BINARY_DIR}/${name}.tmp")
  file(MAKE_DIRECTORY "${tmpdir}")
  add_test(NAME "${test}" COMMAND ${ARGN} WORKING_DIRECTORY "${PROJECT_SOURCE_DIR}")
  set(required "")
  foreach(item IN LISTS data)
    _tunefleet_data_kind(kind ${item})
    if(kind STREQUAL "filegroup")
      get_property(files GLOBAL PROPERTY "TUNEFLEET_FILEGROUP_${item}")
      list(APPEND required ${files})
    elseif(kind STREQUAL "file")
      get_filename_component(file "${item}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
      list(APPEND required "${file}")
    else()
      list(APPEND required "$<TARGET_FILE:${item}>")
    endif()
  endforeach()
  # Label "optuna" when the test's script or data files import Python's Optuna (Debian's
  # python3-optuna): `ctest -LE optuna` skips them where it is missing.
  set(labels "${pkg};${size}")
  list(APPEND labels ${tags})
  foreach(item IN LISTS data)
    if(item MATCHES "netns_lib\\.sh$")
      list(APPEND labels netns)
    endif()
  endforeach()
  list(GET ARGN 0 command)
  foreach(file IN LISTS command required)
    if(NOT file MATCHES "^\\$<" AND EXISTS "${file}" AND NOT IS_DIRECTORY "${file}")
      file(STRINGS "${file}" imports REGEX "import optuna")
      if(imports)
        list(APPEND labels optuna)
        break()
      endif()
    endif()
  endforeach()
  set_tests_properties("${test}" PROPERTIES TIMEOUT ${timeout} LABELS "${labels}"
                       ENVIRONMENT "TEST_TMPDIR=${tmpdir}")
  # Bazel tag run_serial: ctest runs the test with no other beside it (one that fills the GPU).
  if("run_serial" IN_LIST labels)
    set_tests_properties("${test}" PROPERTIES RUN_SERIAL TRUE)
  endif()
  set(unmet "")
  if("netns" IN_LIST labels)
    find_program(TUNEFLEET_IP_PROGRAM ip)
    if(NOT TUNEFLEET_IP_PROGRAM)
      set(unmet "no ip (iproute2) to make network namespaces")
    endif()
  endif()
  if("gloo" IN_LIST labels)
    find_path(TUNEFLEET_GLOO_INCLUDE gloo/algorithm.h PATHS ${TORCH_INCLUDE_DIRS} /usr/include)
    if(NOT TUNEFLEET_GLOO_INCLUDE)
      set(unmet "this LibTorch has no Gloo for CPU ranks")
    endif()
  endif()
  if("slurm" IN_LIST labels)
    find_program(TUNEFLEET_SLURMCTLD slurmctld PATHS /usr/sbin)
    find_program(TUNEFLEET_SLURMD slurmd PATHS /usr/sbin)
    if(NOT TUNEFLEET_SLURMCTLD OR NOT TUNEFLEET_SLURMD)
      set(unmet "no slurmctld and slurmd (Debian's slurmctld, slurmd, slurm-client) to run")
    endif()
  endif()
  if(unmet)
    set_tests_properties("${test}" PROPERTIES DISABLED TRUE)
    message(STATUS "test ${test}: disabled here, ${unmet}")
  endif()
  if(required)
    set_tests_properties("${test}" PROPERTIES REQUIRED_FILES "${required}")
  endif()
endfunction()

# tunefleet_cc_test(NAME n [SIZE small|medium|large|enormous] SRCS ... [ARGS ...] [DATA ...]
#                   [COPTS|LINKOPTS|DEFINES|DEPS ...])
# -> executable n (target <pkg>_<n>) in the folder's build dir, test //<pkg path>:n.
function(tunefleet_cc_test)
  cmake_parse_arguments(ARG "" "NAME;SIZE" "SRCS;ARGS;COPTS;LINKOPTS;DEFINES;DEPS;DATA;TAGS" ${ARGN})
  _tunefleet_target(target ${ARG_NAME})
  add_executable(${target} ${ARG_SRCS})
  set_target_properties(${target} PROPERTIES OUTPUT_NAME ${ARG_NAME})
  _tunefleet_executable(${target} COPTS ${ARG_COPTS} LINKOPTS ${ARG_LINKOPTS}
                        DEFINES ${ARG_DEFINES} DEPS ${ARG_DEPS} DATA ${ARG_DATA})
  _tunefleet_add_test(${ARG_NAME} "${ARG_SIZE}" "${ARG_DATA}" "${ARG_TAGS}" $<TARGET_FILE:${target}>
                      ${ARG_ARGS})
endfunction()

# tunefleet_sh_test(NAME n SRCS script.sh [ARGS ...] [DATA ...] [SIZE ...]) -> test //<pkg path>:n.
# Bazel's $(location //pkg:bin) becomes $<TARGET_FILE:bin> (pkg_bin for TESTONLY binaries).
function(tunefleet_sh_test)
  cmake_parse_arguments(ARG "" "NAME;SIZE" "SRCS;ARGS;DATA;TAGS" ${ARGN})
  _tunefleet_add_test(${ARG_NAME} "${ARG_SIZE}" "${ARG_DATA}" "${ARG_TAGS}"
                      "${CMAKE_CURRENT_SOURCE_DIR}/${ARG_SRCS}" ${ARG_ARGS})
endfunction()

# tunefleet_cc_proto(NAME n SRCS a.proto ... [DEPS other_protos...]) -> library <pkg>_<n> of the
# C++ code the system protoc generates, like third_party/proto.bzl's cc_proto: protos import each
# other by repository-relative path; "comm/proto/x.proto" gives #include "comm/proto/x.pb.h".
function(tunefleet_cc_proto)
  cmake_parse_arguments(ARG "" "NAME" "SRCS;DEPS" ${ARGN})
  _tunefleet_target(target ${ARG_NAME})
  _tunefleet_check_deps(${target} tunefleet::protobuf ${ARG_DEPS})
  set(protos "")
  set(outs "")
  set(ccs "")
  foreach(src IN LISTS ARG_SRCS)
    get_filename_component(abs "${src}" ABSOLUTE)
    file(RELATIVE_PATH rel "${PROJECT_SOURCE_DIR}" "${abs}")
    string(REGEX REPLACE "\\.proto$" "" stem "${rel}")
    list(APPEND protos "${abs}")
    list(APPEND ccs "${PROJECT_BINARY_DIR}/${stem}.pb.cc")
    list(APPEND outs "${PROJECT_BINARY_DIR}/${stem}.pb.h" "${PROJECT_BINARY_DIR}/${stem}.pb.cc")
  endforeach()
  set(dep_protos "")
  foreach(dep IN LISTS ARG_DEPS)
    list(APPEND dep_protos "$<TARGET_PROPERTY:${dep},TUNEFLEET_PROTO_SRCS>")
  endforeach()
  set(protoc "${Protobuf_PROTOC_EXECUTABLE}")
  if(TUNEFLEET_DEPS_LIBDIR)  # a protoc unpacked there needs libprotoc from there
    set(protoc "${CMAKE_COMMAND}" -E env "LD_LIBRARY_PATH=${TUNEFLEET_DEPS_LIBDIR}" "${protoc}")
  endif()
  add_custom_command(
    OUTPUT ${outs}
    COMMAND ${protoc} "--proto_path=${PROJECT_SOURCE_DIR}"
            "--cpp_out=${PROJECT_BINARY_DIR}" ${protos}
    DEPENDS ${protos} ${dep_protos} ${Protobuf_PROTOC_EXECUTABLE}
    COMMENT "protoc ${target}"
    VERBATIM)
  add_library(${target} STATIC ${ccs})
  set_target_properties(${target} PROPERTIES TUNEFLEET_PROTO_SRCS "${protos}")
  target_include_directories(${target} PUBLIC "${PROJECT_BINARY_DIR}")
  target_link_libraries(${target} PUBLIC ${ARG_DEPS} tunefleet::protobuf)
endfunction()
