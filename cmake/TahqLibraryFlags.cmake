# SPDX-License-Identifier: MIT
# The compile flags of libtahq's code, for both of its parts: ref/ (the
# libraries tahq and tahq_shared) and cpu/ (the object library tahq_cpu).
function(tahq_library_flags tgt)
  target_compile_options(${tgt} PRIVATE ${TAHQ_STRICT_FP_FLAGS})
  # The hot per-tile loops are written to vectorize; -O3 lets GCC do it and
  # -fno-trapping-math lets it if-convert selects. Neither changes a value:
  # no reassociation, no contraction (-ffp-contract=off stays), no FTZ.
  if(CMAKE_C_COMPILER_ID STREQUAL "GNU")
    target_compile_options(${tgt} PRIVATE $<$<CONFIG:Release>:-O3> -fno-trapping-math)
  endif()
endfunction()
