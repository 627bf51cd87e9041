// What Halide's RunGen does to a pipeline's inputs before their first run, so that
// protuner-measure-runner can do the same. The measurer times a candidate the way RunGen
// times the AOT-compiled generator (issue 55), and what RunGen allocates and frees before
// the first run is part of that: glibc's malloc raises its mmap threshold to the size of
// the largest mapped block freed so far (up to 32 MB), so a process that has freed a block
// the size of an input keeps its pipelines' smaller intermediates on the heap, while one
// that has not maps and page-faults them in on every run (camera_pipe's second seed
// schedule: 7.6 ms under RunGen, 21.1 ms in a runner that skipped this;
// `build/bin/rungen_agreement --apps camera_pipe --seeds 2 --rungen-seconds 0.1`).
//
// RunGen allocates each input at its estimate, asks the pipeline which region it reads (a
// bounds query, which answers with dense strides over that region) and copies an input
// whose buffer lies outside the region, or whose strides differ from those asked for, into
// a new buffer, freeing the first (RunGen.h, adapt_input_buffer).
#pragma once

#include <HalideRuntime.h>

#include <vector>

namespace protuner {

// Whether RunGen copies an input allocated with `current` dimensions into a new buffer,
// given the dimensions the bounds query asked for (`queried`). Dimension counts that
// differ make RunGen fail instead: false.
bool rungen_copies_input(const std::vector<halide_dimension_t> &current,
                         const std::vector<halide_dimension_t> &queried);

}  // namespace protuner
