# protuner_add_app(<name> SOURCES <files...>)
#
# Builds one benchmark app as a Halide generator library: a shared object that registers its
# generators with libHalide's generator registry when loaded (dlopen). The searcher, the
# measurer and Halide's command-line generator driver (bin/protuner-gengen -p <lib>) all load
# the same file. Output: ${CMAKE_BINARY_DIR}/lib/libprotuner_app_<name>.so
function(protuner_add_app name)
  cmake_parse_arguments(ARG "" "" "SOURCES" ${ARGN})
  if(NOT ARG_SOURCES)
    message(FATAL_ERROR "protuner_add_app(${name}): SOURCES is required")
  endif()
  set(target protuner_app_${name})
  add_library(${target} MODULE ${ARG_SOURCES})
  target_link_libraries(${target} PRIVATE Halide::Halide)
  target_include_directories(${target} PRIVATE "${PROJECT_SOURCE_DIR}")
  protuner_warnings(${target})
  set_target_properties(${target} PROPERTIES OUTPUT_NAME "protuner_app_${name}")
  set_property(GLOBAL APPEND PROPERTY PROTUNER_APP_TARGETS ${target})
endfunction()
